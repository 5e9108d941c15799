package ccm

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripText(t *testing.T) {
	s := newStore(t)
	for _, c := range []string{"", "x", "short text\n", strings.Repeat("log line with some words\n", 2000)} {
		k := put(t, s, c, PinNone)
		if k != KeyOf([]byte(c)) {
			t.Fatalf("key %s, want %s", k, KeyOf([]byte(c)))
		}
		if got := get(t, s, k); got != c {
			t.Fatalf("round trip of %d bytes changed the content", len(c))
		}
	}
}

func TestRoundTripBinary(t *testing.T) {
	s := newStore(t)
	bin := make([]byte, 300<<10)
	rand.Read(bin)
	// Half random, half repetitive: compresses, and holds every byte value.
	bin = append(bin, bytes.Repeat([]byte{0, 0xff, '\n', 0x80, '\r'}, 60000)...)
	k, err := s.Put(context.Background(), bin, Source{}, PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(context.Background(), k)
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("binary round trip failed: %v", err)
	}
}

func TestRoundTrip100MB(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("100 MB under -race or -short is slow; covered by the plain run")
	}
	s := newStore(t)
	content := logText(100 << 20)
	k, err := s.Put(context.Background(), content, Source{ToolName: "Bash"}, PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	rc, m, err := s.Open(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if m.BytesUncompressed != int64(len(content)) || m.Compression != "zstd" {
		t.Fatalf("meta %+v", m)
	}
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("100 MB round trip failed: %v", err)
	}
	// The streaming path gives the same key and blob.
	k2, n, err := s.PutReader(context.Background(), bytes.NewReader(content), Source{}, PinNone, "")
	if err != nil || k2 != k || n != int64(len(content)) {
		t.Fatalf("PutReader: %s %d %v", k2, n, err)
	}
}

func TestPutReaderForms(t *testing.T) {
	s := newStore(t)
	random := make([]byte, 64<<10)
	rand.Read(random)
	bigRandom := make([]byte, 5<<20) // past the in-memory limit: the streaming path
	rand.Read(bigRandom)
	cases := []struct {
		name    string
		content []byte
		comp    Compression
		want    Compression
	}{
		{"small", []byte("tiny"), Zstd, None},
		{"text", bytes.Repeat([]byte("compressible line\n"), 5000), Zstd, Zstd},
		{"random", random, Zstd, None},
		{"big text", logText(6 << 20), Zstd, Zstd},
		{"big text gzip", logText(5<<20 + 17), Gzip, Gzip},
		{"big text none", logText(5<<20 + 3), None, None},
		{"big random", bigRandom, Zstd, None},
		{"big random gzip", bigRandom[1:], Gzip, None},
	}
	for _, c := range cases {
		s.SetCompression(c.comp)
		k, n, err := s.PutReader(context.Background(), bytes.NewReader(c.content), Source{}, PinNone, "")
		if err != nil || n != int64(len(c.content)) || k != KeyOf(c.content) {
			t.Fatalf("%s: %s %d %v", c.name, k, n, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Stat(k)
		if fi, _ := os.Stat(blobPath(t, s, k)); err == nil && fi.Size() != m.BytesCompressed {
			t.Fatalf("%s: bytes_compressed %d, file %d", c.name, m.BytesCompressed, fi.Size())
		}
		if err != nil || Compression(m.Compression) != c.want {
			t.Fatalf("%s: compression %v, want %s (%v)", c.name, m, c.want, err)
		}
		if got := get(t, s, k); got != string(c.content) {
			t.Fatalf("%s: round trip failed", c.name)
		}
	}
	assertNoTemps(t, s)
}

func assertNoTemps(t *testing.T, s *Store) {
	t.Helper()
	l, err := s.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Temps) != 0 {
		t.Fatalf("temp files left: %v", l.Temps)
	}
}

func TestDedupe(t *testing.T) {
	s := newStore(t)
	content := strings.Repeat("same output\n", 500)
	k1 := put(t, s, content, PinNone)
	m1, _ := s.Stat(k1)
	k2 := put(t, s, content, PinNone)
	if k1 != k2 {
		t.Fatal("same content, different keys")
	}
	blobs, _ := os.ReadDir(filepath.Join(s.Root(), "blobs"))
	if len(blobs) != 1 {
		t.Fatalf("%d blob files, want 1", len(blobs))
	}
	idx, _ := os.ReadFile(filepath.Join(s.Root(), "index.jsonl"))
	if n := strings.Count(string(idx), "\n"); n != 1 {
		t.Fatalf("index has %d lines, want 1 (one per new blob)", n)
	}
	m2, _ := s.Stat(k1)
	if !m2.LastAccessAt.After(m1.LastAccessAt) && !m2.LastAccessAt.Equal(m1.LastAccessAt) {
		t.Fatal("dedupe did not touch the access time")
	}
	if m2.AccessCount != 0 {
		t.Fatalf("access count %d after two stores, want 0 (only retrievals count)", m2.AccessCount)
	}
}

func TestPinEscalation(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := []byte("pin me")
	steps := []struct {
		put  PinLevel
		want PinLevel
	}{{PinNone, PinNone}, {PinSoft, PinSoft}, {PinNone, PinSoft}, {PinHard, PinHard}, {PinSoft, PinHard}, {PinNone, PinHard}}
	for i, st := range steps {
		k, err := s.Put(ctx, c, Source{}, st.put, "reason "+st.put.String())
		if err != nil {
			t.Fatal(err)
		}
		m, _ := s.Stat(k)
		if m.Pinned.Level != st.want {
			t.Fatalf("step %d: put %s gave %s, want %s", i, st.put, m.Pinned.Level, st.want)
		}
	}
	m, _ := s.Stat(KeyOf(c))
	if m.Pinned.Reason != "reason hard" || m.Pinned.PinnedAt.IsZero() {
		t.Fatalf("pin %+v", m.Pinned)
	}
	// An explicit pin command may lower it.
	if _, err := s.SetPin(ctx, KeyOf(c), PinNone, "ignored"); err != nil {
		t.Fatal(err)
	}
	m, _ = s.Stat(KeyOf(c))
	if m.Pinned != (PinInfo{}) {
		t.Fatalf("unpin left %+v", m.Pinned)
	}
}

func TestAccessUpdatedOnGet(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "read me twice", PinNone)
	get(t, s, k)
	get(t, s, k)
	m, _ := s.Stat(k)
	if m.AccessCount != 2 {
		t.Fatalf("access count %d, want 2", m.AccessCount)
	}
}

func TestNotFound(t *testing.T) {
	s := newStore(t)
	k := Key("sha256:" + strings.Repeat("0", 64))
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing store: %v", err)
	}
	if _, err := os.Stat(s.Root()); err == nil {
		t.Fatal("a read created the store")
	}
	put(t, s, "something", PinNone)
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := s.Stat(k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stat missing key: %v", err)
	}
}

func TestOpenRootIsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o600)
	if _, err := Open(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("want not a directory, got %v", err)
	}
}

func TestUnwritableStore(t *testing.T) {
	s := newStore(t)
	put(t, s, "first", PinNone)
	immutable(t, filepath.Join(s.Root(), "blobs"))
	before := snapshot(t, s.Root())
	_, err := s.Put(context.Background(), []byte(strings.Repeat("second ", 400)), Source{}, PinNone, "")
	if err == nil {
		t.Fatal("put into a read-only store succeeded")
	}
	sameSnapshot(t, before, snapshot(t, s.Root()))
}

func TestLastKey(t *testing.T) {
	s := newStore(t)
	if _, err := s.LastKey(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	k1 := put(t, s, "First content", PinNone)
	if k, _ := s.LastKey(); k != k1 {
		t.Fatalf("last %s, want %s", k, k1)
	}
	k2 := put(t, s, "Second content", PinNone)
	if k, _ := s.LastKey(); k != k2 {
		t.Fatalf("last %s, want %s", k, k2)
	}
	put(t, s, "First content", PinNone) // a deduplicated store counts too
	if k, _ := s.LastKey(); k != k1 {
		t.Fatalf("last %s after dedupe, want %s", k, k1)
	}
	os.WriteFile(filepath.Join(s.Root(), "last_key"), []byte("../../settings\n"), 0o600)
	if _, err := s.LastKey(); err == nil || !strings.Contains(err.Error(), "invalid key") {
		t.Fatalf("planted last_key: %v", err)
	}
}

// logText returns n bytes of log-like text, quickly: a 1 MB block of
// varied lines repeated, each copy stamped with its number.
func logText(n int) []byte {
	var block bytes.Buffer
	for i := 0; block.Len() < 1<<20; i++ {
		fmt.Fprintf(&block, "2026-01-01T00:00:%02dZ INFO request %d handled path=/api/v1/items/%d status=200 %s\n",
			i%60, i, i*7919%100000, strings.Repeat("x", i%97))
	}
	out := make([]byte, 0, n+block.Len())
	for i := 0; len(out) < n; i++ {
		out = append(out, fmt.Sprintf("block %d\n", i)...)
		out = append(out, block.Bytes()...)
	}
	return out[:n]
}

// The store is no cache: the CACHEDIR.TAG earlier versions wrote (which
// makes backup tools skip the only copy of purged content) goes at the
// first store; a tag with other content, not ccm's, stays.
func TestCacheTagRemoved(t *testing.T) {
	for _, c := range []struct {
		name, tag string
		stays     bool
	}{
		{"ccm's", cacheDirTag, false},
		{"foreign", "Signature: 8a477f597d28d172789f06886806bc55\n# put here by a user\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			tag := filepath.Join(root, "CACHEDIR.TAG")
			if err := os.WriteFile(tag, []byte(c.tag), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(context.Background(), []byte("content"), Source{}, PinNone, ""); err != nil {
				t.Fatal(err)
			}
			_, err = os.Stat(tag)
			if stays := err == nil; stays != c.stays {
				t.Errorf("tag stays %v, want %v (%v)", stays, c.stays, err)
			}
		})
	}
}
