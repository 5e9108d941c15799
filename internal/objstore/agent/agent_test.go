package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/internal/objstore"
)

// fake is an objstore.Store in memory, to test the protocol alone (the
// real store is tested against a real server in s3http and cmd/ccm).
type fake struct{ objs map[string][]byte }

func (f *fake) PutFile(_ context.Context, b, k, path string, size int64, _ []byte) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if int64(len(data)) != size {
		return errors.New("size differs")
	}
	f.objs[b+"/"+k] = data
	return nil
}
func (f *fake) PutBytes(_ context.Context, b, k string, data []byte) error {
	f.objs[b+"/"+k] = data
	return nil
}
func (f *fake) GetFile(_ context.Context, b, k, path string) (objstore.Written, error) {
	data, ok := f.objs[b+"/"+k]
	if !ok {
		return objstore.Written{}, &objstore.Error{Op: "download", URL: "s3://" + b + "/" + k, Status: 404, Code: "NoSuchKey"}
	}
	sum := sha256.Sum256(data)
	return objstore.Written{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, os.WriteFile(path, data, 0o600)
}
func (f *fake) GetBytes(_ context.Context, b, k string, _ int64) ([]byte, error) {
	if b == "gone" {
		return nil, &objstore.Error{Op: "download", URL: "s3://gone/" + k, Err: errors.New("connection refused"), Server: "http://127.0.0.1:1"}
	}
	return f.objs[b+"/"+k], nil
}
func (f *fake) Head(context.Context, string, string) (objstore.Info, error) {
	return objstore.Info{}, nil
}
func (f *fake) Delete(_ context.Context, b, k string) error { delete(f.objs, b+"/"+k); return nil }
func (f *fake) List(_ context.Context, b, prefix string, fn func(objstore.Info) error) error {
	for k, v := range f.objs {
		if strings.HasPrefix(k, b+"/"+prefix) {
			fn(objstore.Info{Key: strings.TrimPrefix(k, b+"/"), Size: int64(len(v))})
		}
	}
	return nil
}
func (f *fake) AbortIncomplete(context.Context, string, string) error { return nil }
func (f *fake) Probe(context.Context, string, string) error           { return nil }
func (f *fake) Endpoint() string                                      { return "fake" }
func (f *fake) Close() error                                          { return nil }

// TestServe: requests and answers round-trip through the protocol, a
// server's refusal comes back as the same one-line *objstore.Error, and
// the configuration is read first.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("archive bytes"), 0o600)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	st := &fake{objs: map[string][]byte{}}
	var got objstore.Config
	go func() {
		Serve(inR, outW, func(c objstore.Config) (objstore.Store, error) { got = c; return st, nil })
		outW.Close()
	}()
	c := New("unused", objstore.Config{Endpoint: "http://e", AccessKey: "k", SecretKey: "s"})
	p := &proc{stdin: inW}
	p.enc, p.dec = jsonPipe(inW, outR)
	p.enc.Encode(c.cfg)
	c.idle = []*proc{p}
	ctx := context.Background()
	if err := c.PutFile(ctx, "b", "x/a", src, 13, nil); err != nil {
		t.Fatal(err)
	}
	if got.AccessKey != "k" || got.Endpoint != "http://e" {
		t.Errorf("the helper got the configuration %+v", got)
	}
	if err := c.PutBytes(ctx, "b", "x/m", []byte("manifest")); err != nil {
		t.Fatal(err)
	}
	if data, err := c.GetBytes(ctx, "b", "x/m", 100); err != nil || string(data) != "manifest" {
		t.Errorf("GetBytes = %q, %v", data, err)
	}
	dst := filepath.Join(dir, "dst")
	if w, err := c.GetFile(ctx, "b", "x/a", dst); err != nil || w.Size != 13 || w.SHA256 != sha256Hex("archive bytes") {
		t.Errorf("GetFile = %+v, %v", w, err)
	}
	if data, _ := os.ReadFile(dst); string(data) != "archive bytes" {
		t.Errorf("downloaded %q", data)
	}
	var keys []string
	c.List(ctx, "b", "x/", func(i objstore.Info) error { keys = append(keys, i.Key); return nil })
	if len(keys) != 2 {
		t.Errorf("listed %v", keys)
	}
	_, err := c.GetFile(ctx, "b", "nope", filepath.Join(dir, "n"))
	if !objstore.IsNotFound(err) || err.Error() != "download s3://b/nope: no such object" {
		t.Errorf("a missing object: %v", err)
	}
	_, err = c.GetBytes(ctx, "gone", "k", 10)
	if err == nil || err.Error() != "download s3://gone/k: cannot reach http://127.0.0.1:1: connection refused" {
		t.Errorf("an unreachable server: %v", err)
	}
	if err := c.PutFile(ctx, "b", "k", filepath.Join(dir, "missing"), 1, nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
	inW.Close()
}

func TestFindHelper(t *testing.T) {
	t.Setenv("CCM_S3_HELPER", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); !errors.Is(err, ErrNoHelper) {
		t.Errorf("no helper anywhere: %v", err)
	}
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, HelperName), []byte("#!/bin/sh\n"), 0o700)
	t.Setenv("PATH", bin)
	if p, err := Find(); err != nil || p != filepath.Join(bin, HelperName) {
		t.Errorf("on PATH: %q, %v", p, err)
	}
	t.Setenv("CCM_S3_HELPER", "/opt/x/ccm-s3")
	if p, _ := Find(); p != "/opt/x/ccm-s3" {
		t.Errorf("CCM_S3_HELPER: %q", p)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestOlderHelperDownload: a helper that answers a download without
// saying what it wrote (one older than ccm) fails it, and the file it
// wrote goes: nothing downloaded goes unchecked.
func TestOlderHelperDownload(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		dec, enc := json.NewDecoder(inR), json.NewEncoder(outW)
		var cfg objstore.Config
		dec.Decode(&cfg)
		var r request
		dec.Decode(&r)
		os.WriteFile(r.Path, []byte("archive bytes"), 0o600)
		enc.Encode(map[string]any{"info": objstore.Info{Key: r.Key, Size: 13}})
	}()
	c := New("/old/ccm-s3", objstore.Config{})
	p := &proc{stdin: inW}
	p.enc, p.dec = jsonPipe(inW, outR)
	p.enc.Encode(c.cfg)
	c.idle = []*proc{p}
	_, err := c.GetFile(context.Background(), "b", "x/a", dst)
	if err == nil || !strings.Contains(err.Error(), "/old/ccm-s3 did not hash the download: it is older than ccm") {
		t.Errorf("GetFile through an older helper: %v", err)
	}
	if _, err := os.Lstat(dst); !os.IsNotExist(err) {
		t.Errorf("the unchecked download is still there: %v", err)
	}
}

func jsonPipe(w io.Writer, r io.Reader) (*json.Encoder, *json.Decoder) {
	return json.NewEncoder(w), json.NewDecoder(r)
}

// blocking is a store whose uploads wait until they are cancelled.
type blocking struct {
	fake
	cancelled chan struct{}
}

func (b *blocking) PutBytes(ctx context.Context, _, _ string, _ []byte) error {
	<-ctx.Done()
	close(b.cancelled)
	return ctx.Err()
}

// TestServeStopsWithItsCaller: the end of stdin while a request runs (ccm
// gone) cancels the request and ends the helper, answering nothing.
func TestServeStopsWithItsCaller(t *testing.T) {
	inR, inW := io.Pipe()
	var out strings.Builder
	st := &blocking{fake: fake{objs: map[string][]byte{}}, cancelled: make(chan struct{})}
	ended := make(chan error, 1)
	go func() {
		ended <- Serve(inR, &out, func(objstore.Config) (objstore.Store, error) { return st, nil })
	}()
	enc := json.NewEncoder(inW)
	enc.Encode(objstore.Config{})
	enc.Encode(request{Op: "putbytes", Bucket: "b", Key: "k", Data: []byte("x")})
	inW.Close()
	<-st.cancelled
	if err := <-ended; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("answered a cancelled request: %q", out.String())
	}
}
