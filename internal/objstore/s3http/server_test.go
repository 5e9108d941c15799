package s3http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccm/internal/objstore"
	"ccm/internal/objstore/s3http"
	"ccm/internal/objstore/s3test"
)

func TestPutGetListDelete(t *testing.T) {
	s := s3test.Need(t)
	s.Config.PartSize = 5 << 20 // the smallest part S3 allows
	c := client(t, s)
	ctx := context.Background()
	small := []byte("hello, object storage\n")
	big := bytes.Repeat([]byte("0123456789abcdef"), (11<<20)/16+7) // three parts
	loc := objstore.Location{Bucket: s.Bucket, Prefix: s.Prefix}
	if err := c.PutBytes(ctx, s.Bucket, loc.Key("a/small"), small); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, s.Bucket, loc.Key("a/big"), bytes.NewReader(big), int64(len(big)), nil); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"a/small": small, "a/big": big} {
		got, err := c.GetBytes(ctx, s.Bucket, loc.Key(name), 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %d bytes back, not the %d stored", name, len(got), len(want))
		}
		// Downloaded into a file: the size and SHA-256 of what was
		// written, taken as it was written.
		path := filepath.Join(t.TempDir(), "dl")
		w, err := c.GetFile(ctx, s.Bucket, loc.Key(name), path)
		sum := sha256.Sum256(want)
		if err != nil || w.Size != int64(len(want)) || w.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: GetFile = %+v, %v", name, w, err)
		}
		if data, _ := os.ReadFile(path); !bytes.Equal(data, want) {
			t.Errorf("%s: GetFile wrote %d bytes, not the %d stored", name, len(data), len(want))
		}
	}
	var keys []string
	if err := c.List(ctx, s.Bucket, loc.Key("a")+"/", func(i objstore.Info) error {
		keys = append(keys, i.Key+":"+itoa(i.Size))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{loc.Key("a/big") + ":" + itoa(int64(len(big))), loc.Key("a/small") + ":" + itoa(int64(len(small)))}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("listed %v, want %v", keys, want)
	}
	if err := c.Delete(ctx, s.Bucket, loc.Key("a/small")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Head(ctx, s.Bucket, loc.Key("a/small")); !objstore.IsNotFound(err) {
		t.Errorf("after delete: %v, want not found", err)
	}
	if err := c.Delete(ctx, s.Bucket, loc.Key("a/small")); err != nil {
		t.Errorf("deleting what is gone: %v", err)
	}
}

// TestServerChecksTheBytes: an upload whose bytes differ from the SHA-256
// it is signed with is refused by the server, and nothing is stored.
func TestServerChecksTheBytes(t *testing.T) {
	s := s3test.Need(t)
	c := client(t, s)
	ctx := context.Background()
	data := []byte("the bytes that were hashed")
	sum := sha256.Sum256(data)
	sent := []byte("the bytes that were  sent") // same length, one byte differs
	key := s.Prefix + "/tampered"
	err := c.Put(ctx, s.Bucket, key, bytes.NewReader(sent), int64(len(sent)), sum[:])
	if err == nil {
		t.Fatal("the server accepted bytes that do not match their signed hash")
	}
	if _, herr := c.Head(ctx, s.Bucket, key); !objstore.IsNotFound(herr) {
		t.Errorf("after a refused upload the object is there: %v", herr)
	}
}

func TestRefusals(t *testing.T) {
	s := s3test.Need(t)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		change func(*objstore.Config, *string)
		want   string
	}{
		{"unknown key", func(c *objstore.Config, _ *string) { c.AccessKey = "nosuchkey0000" }, "does not know the access key"},
		{"wrong secret", func(c *objstore.Config, _ *string) { c.SecretKey = "wrong" + c.SecretKey }, "secret access key is wrong"},
		{"missing bucket", func(_ *objstore.Config, b *string) { *b = "no-such-bucket-ccm" }, "bucket does not exist"},
	} {
		cfg, bucket := s.Config, s.Bucket
		c.change(&cfg, &bucket)
		cl, err := s3http.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = cl.PutBytes(ctx, bucket, s.Prefix+"/x", []byte("x"))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
		err = cl.List(ctx, bucket, s.Prefix, func(objstore.Info) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: list: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestServerGone: nothing listens at the address (refused at once), or a
// server accepts and then never answers (given up after the stall time).
func TestServerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := objstore.Config{Endpoint: "http://" + addr, AccessKey: "k", SecretKey: "s", Stall: 300 * time.Millisecond}
	c, _ := s3http.New(cfg)
	err = c.PutBytes(context.Background(), "bucket", "key", []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("no server: %v", err)
	}

	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			conn, err := mute.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, conn) // reads, never answers
		}
	}()
	cfg.Endpoint = "http://" + mute.Addr().String()
	c, _ = s3http.New(cfg)
	err = c.PutBytes(context.Background(), "bucket", "key", []byte("x"))
	var oe *objstore.Error
	if err == nil || !errors.As(err, &oe) || strings.Contains(err.Error(), "\n") {
		t.Errorf("mute server: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func client(t *testing.T, s s3test.Server) *s3http.Client {
	t.Helper()
	c, err := s3http.New(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
