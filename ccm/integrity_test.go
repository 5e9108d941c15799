package ccm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flipByte changes one byte of a file in place.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func blobPath(t *testing.T, s *Store, k Key) string {
	t.Helper()
	files, err := s.findBlobs(k)
	if err != nil || len(files) != 1 {
		t.Fatalf("blob files of %s: %v %v", k, files, err)
	}
	return files[0].Path
}

// TestCorruptionDetected flips one byte of a zstd, a gzip and a raw blob,
// at the start, middle and end: every read reports ErrCorrupt, none
// returns content.
func TestCorruptionDetected(t *testing.T) {
	content := strings.Repeat("a line of tool output that compresses well\n", 400)
	for _, comp := range []Compression{Zstd, Gzip, None} {
		for _, where := range []string{"start", "middle", "end"} {
			t.Run(string(comp)+"/"+where, func(t *testing.T) {
				s := newStore(t)
				s.SetCompression(comp)
				k := put(t, s, content, PinNone)
				p := blobPath(t, s, k)
				if !strings.HasSuffix(p, comp.Ext()) {
					t.Fatalf("stored as %s, want %s", p, comp.Ext())
				}
				fi, _ := os.Stat(p)
				off := map[string]int64{"start": 0, "middle": fi.Size() / 2, "end": -1}[where]
				flipByte(t, p, off)
				got, err := s.Get(context.Background(), k)
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Get after flipping the %s byte: err %v, %d bytes", where, err, len(got))
				}
				if err := s.Verify(k); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Verify: %v", err)
				}
				// Streaming: whatever was read, the end is an error, not io.EOF.
				rc, _, err := s.Open(context.Background(), k)
				if err == nil {
					_, err = io.Copy(io.Discard, rc)
					rc.Close()
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("stream: %v", err)
				}
				// Storing the content again heals the blob.
				put(t, s, content, PinNone)
				if got := get(t, s, k); got != content {
					t.Fatal("re-store did not heal the corrupt blob")
				}
			})
		}
	}
}

func TestTruncatedBlob(t *testing.T) {
	s := newStore(t)
	content := strings.Repeat("truncate me\n", 1000)
	k := put(t, s, content, PinNone)
	p := blobPath(t, s, k)
	fi, _ := os.Stat(p)
	os.Truncate(p, fi.Size()/2)
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated blob: %v", err)
	}
}

// TestKeyTraversal: claude-context-manager let "--pin ../../../settings"
// rewrite settings.json and "ccm-get ../../../notes" print notes.txt.
// Every entry point of the store validates keys before touching a file.
func TestKeyTraversal(t *testing.T) {
	s := newStore(t)
	put(t, s, "legit", PinHard)
	outside := filepath.Dir(s.Root())
	os.WriteFile(filepath.Join(outside, "settings.json"), []byte(`{"theme":"dark"}`), 0o600)
	os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("secret notes"), 0o600)
	before := snapshot(t, outside)
	ctx := context.Background()
	bad := []Key{"../../settings", "../settings", "sha256:../../settings", "b2s:../../notes", "sha256:" + Key(strings.Repeat("a", 63)) + "/",
		"sha256:" + Key(strings.Repeat("A", 64)), "b2s:0123456789abcdeF", "", "settings", "/etc/passwd", "sha256:" + Key(strings.Repeat("a", 64)) + "\n"}
	for _, k := range bad {
		if _, err := ParseKey(string(k)); err == nil {
			t.Errorf("ParseKey(%q) accepted", k)
		}
		if _, err := s.Get(ctx, k); err == nil || !strings.Contains(err.Error(), "invalid key") {
			t.Errorf("Get(%q): %v", k, err)
		}
		if _, _, err := s.Open(ctx, k); err == nil {
			t.Errorf("Open(%q) accepted", k)
		}
		if _, err := s.Stat(k); err == nil {
			t.Errorf("Stat(%q) accepted", k)
		}
		if _, err := s.SetPin(ctx, k, PinHard, "x"); err == nil {
			t.Errorf("SetPin(%q) accepted", k)
		}
		if err := s.Verify(k); err == nil {
			t.Errorf("Verify(%q) accepted", k)
		}
		if _, err := s.Remove(k); err == nil {
			t.Errorf("Remove(%q) accepted", k)
		}
	}
	sameSnapshot(t, before, snapshot(t, outside))
}

// TestMetadataEntryPoint: a metadata file is outside input too. One whose
// key names another blob or a path, or that is not JSON, is reported as
// invalid and changes nothing.
func TestMetadataEntryPoint(t *testing.T) {
	cases := map[string]string{
		"not json":     "this is not json {",
		"not object":   `["a"]`,
		"traversal":    `{"key": "../../settings", "pinned": {"level": "hard"}}`,
		"other key":    `{"key": "sha256:` + strings.Repeat("b", 64) + `"}`,
		"bad level":    `{"pinned": {"level": "forever"}}`,
		"bad count":    `{"access_count": -3}`,
		"bad time":     `{"created_at": "yesterday"}`,
		"string bytes": `{"bytes_uncompressed": "12"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			k := put(t, s, "content "+name, PinNone)
			mp := filepath.Join(s.Root(), "meta", k.Hex()+".json")
			os.WriteFile(mp, []byte(body), 0o600)
			before := snapshot(t, s.Root())
			if _, err := s.Stat(k); !errors.Is(err, ErrBadMeta) {
				t.Errorf("Stat: %v", err)
			}
			if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrBadMeta) {
				t.Errorf("Get: %v", err)
			}
			if _, err := s.SetPin(context.Background(), k, PinHard, ""); !errors.Is(err, ErrBadMeta) {
				t.Errorf("SetPin: %v", err)
			}
			if _, err := s.Put(context.Background(), []byte("content "+name), Source{}, PinHard, ""); !errors.Is(err, ErrBadMeta) {
				t.Errorf("Put: %v", err)
			}
			after := snapshot(t, s.Root())
			delete(after, "meta.lock")
			delete(before, "meta.lock")
			sameSnapshot(t, before, after)
			l, err := s.List(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Entries) != 1 || !errors.Is(l.Entries[0].MetaErr, ErrBadMeta) {
				t.Errorf("listing: %+v", l.Entries)
			}
		})
	}
}

func TestSymlinkedFilesRefused(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "real", PinNone)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o600)
	p := blobPath(t, s, k)
	os.Remove(p)
	os.Symlink(secret, p)
	if b, err := s.Get(context.Background(), k); err == nil {
		t.Fatalf("read through a symlinked blob: %q", b)
	}
}

func TestBlake2sVectors(t *testing.T) {
	// From Python: hashlib.blake2s(data, digest_size=8) and the 32-byte form.
	a := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	all := bytes.Repeat(func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}(), 5)
	cases := []struct {
		in      []byte
		d8, d32 string
	}{
		{nil, "ef2a8b78dd80da9c", "69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9"},
		{[]byte("abc"), "972e9d2cd6de6402", "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982"},
		{a(63), "fe93bd28555c43bd", "9a4267618070af968ff2a0fdaecc62b5c15ab91cb4a56424ba9fcad20aab417c"},
		{a(64), "50ebb69474dcd48c", "651d2f5f20952eacaea2fba2f2af2bcd633e511ea2d2e4c9ae2ac0d9ffb7b252"},
		{a(65), "016c5b9c44a75ec5", "045f8ae18932119bd051ac7ba5c73db59892055fad5c32f82d79a6543d92a497"},
		{all, "02b88fbf5fdb4c42", "52ea240758fbbcd27c605dfb70ef0957c9009335d6d0a8d60d219e611ba2e23f"},
	}
	for _, c := range cases {
		for _, sz := range []int{8, 32} {
			h := newBlake2s(sz)
			// Feed in uneven pieces to cover the buffering.
			for i := 0; i < len(c.in); i += 7 {
				h.Write(c.in[i:min(i+7, len(c.in))])
			}
			want := c.d8
			if sz == 32 {
				want = c.d32
			}
			if got := string(Key(hexOf(h.Sum(nil))).Hex()); got != want {
				t.Errorf("blake2s-%d of %d bytes: %s, want %s", sz*8, len(c.in), got, want)
			}
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}
