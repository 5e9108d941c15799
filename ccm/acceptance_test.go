package ccm

// The 21 cases of claude-context-manager tests/test_ccm_cache.py
// (docs/earlier-tools.md, "The earlier tools' own tests"), ported one to one.
// Where a case relied on a defect (an invalid "sha256:abc123" key in stubs),
// the intent is kept with a valid key.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPyCache01_KeyStable(t *testing.T) {
	if KeyOf([]byte("Hello, World!")) != KeyOf([]byte("Hello, World!")) {
		t.Fatal("key not stable")
	}
	if !strings.HasPrefix(string(KeyOf([]byte("Hello, World!"))), "sha256:") {
		t.Fatal("key prefix")
	}
}

func TestPyCache02_KeysDiffer(t *testing.T) {
	if KeyOf([]byte("Hello")) == KeyOf([]byte("World")) {
		t.Fatal("different content, same key")
	}
}

func TestPyCache03_KeyFormat(t *testing.T) {
	k := KeyOf([]byte("test"))
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(string(k)) {
		t.Fatalf("key %q", k)
	}
	if _, err := ParseKey(string(k)); err != nil {
		t.Fatal(err)
	}
}

func TestPyCache04_CompressionMethodValid(t *testing.T) {
	for _, v := range []string{"", "auto", "zstd", "gzip", "none"} {
		c, err := ParseCompression(v)
		if err != nil || (c != Zstd && c != Gzip && c != None) {
			t.Errorf("%q: %v %v", v, c, err)
		}
	}
}

func TestPyCache05_CompressionRoundTrip(t *testing.T) {
	original := strings.Repeat("This is test content ", 100)
	for _, c := range []Compression{Zstd, Gzip} {
		s := newStore(t)
		s.SetCompression(c)
		k := put(t, s, original, PinNone)
		if m, _ := s.Stat(k); Compression(m.Compression) != c {
			t.Fatalf("%s: stored as %s", c, m.Compression)
		}
		if get(t, s, k) != original {
			t.Fatalf("%s: round trip", c)
		}
	}
}

func TestPyCache06_SmallContentRaw(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "tiny", PinNone)
	p := blobPath(t, s, k)
	b, _ := os.ReadFile(p)
	if !strings.HasSuffix(p, ".txt") || string(b) != "tiny" {
		t.Fatalf("small content stored as %s: %q", p, b)
	}
	// 1023 bytes is raw, 1024 compressible bytes are compressed.
	if p := blobPath(t, s, put(t, s, strings.Repeat("a", 1023), PinNone)); !strings.HasSuffix(p, ".txt") {
		t.Fatalf("1023 bytes stored as %s", p)
	}
	if p := blobPath(t, s, put(t, s, strings.Repeat("a", 1024), PinNone)); !strings.HasSuffix(p, ".zst") {
		t.Fatalf("1024 bytes stored as %s", p)
	}
}

func TestPyCache07_StoreRetrieve(t *testing.T) {
	s := newStore(t)
	if got := get(t, s, put(t, s, "Test content for caching", PinNone)); got != "Test content for caching" {
		t.Fatal(got)
	}
}

func TestPyCache08_Dedupe(t *testing.T) {
	s := newStore(t)
	if put(t, s, "Duplicate me", PinNone) != put(t, s, "Duplicate me", PinNone) {
		t.Fatal("keys differ")
	}
	if files, _ := os.ReadDir(filepath.Join(s.Root(), "blobs")); len(files) != 1 {
		t.Fatalf("%d blobs", len(files))
	}
}

func TestPyCache09_MissingKeyNotFound(t *testing.T) {
	s := newStore(t)
	put(t, s, "x", PinNone)
	_, err := s.Get(context.Background(), Key("sha256:"+strings.Repeat("0", 64)))
	if !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestPyCache10_LastKey(t *testing.T) {
	s := newStore(t)
	k1 := put(t, s, "First content", PinNone)
	if k, _ := s.LastKey(); k != k1 {
		t.Fatal(k)
	}
	k2 := put(t, s, "Second content", PinNone)
	if k, _ := s.LastKey(); k != k2 {
		t.Fatal(k)
	}
}

func TestPyCache11_MetadataCreated(t *testing.T) {
	s := newStore(t)
	content := "Content with metadata é"
	k := put(t, s, content, PinNone)
	m, err := s.Stat(k)
	if err != nil || m.Key != k || m.BytesUncompressed != int64(len(content)) || m.CreatedAt.IsZero() || m.LastAccessAt.IsZero() {
		t.Fatalf("%+v %v", m, err)
	}
	b, _ := os.ReadFile(filepath.Join(s.Root(), "meta", k.Hex()+".json"))
	if !regexp.MustCompile(`"created_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d"`).Match(b) {
		t.Fatalf("timestamp not RFC 3339 with zone:\n%s", b)
	}
}

func TestPyCache12_SourceStored(t *testing.T) {
	s := newStore(t)
	k, _ := s.Put(context.Background(), []byte("Content with source info"), Source{ToolName: "Bash", ExitCode: 0, Command: "ls -la"}, PinNone, "")
	m, _ := s.Stat(k)
	if m.Source.ToolName != "Bash" || m.Source.ExitCode != 0 || m.Source.Command != "ls -la" {
		t.Fatalf("%+v", m.Source)
	}
	b, _ := os.ReadFile(filepath.Join(s.Root(), "meta", k.Hex()+".json"))
	if !strings.Contains(string(b), `"exit_code": 0`) {
		t.Fatalf("exit_code 0 not written:\n%s", b)
	}
}

func TestPyCache13_PinAtStore(t *testing.T) {
	s := newStore(t)
	k, _ := s.Put(context.Background(), []byte("Pinnable content"), Source{}, PinSoft, "test")
	m, _ := s.Stat(k)
	if m.Pinned.Level != PinSoft || m.Pinned.Reason != "test" {
		t.Fatalf("%+v", m.Pinned)
	}
}

func TestPyCache14_PinUpdate(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "Content to repin", PinSoft)
	if _, err := s.SetPin(context.Background(), k, PinHard, "upgraded"); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Stat(k)
	if m.Pinned.Level != PinHard || m.Pinned.Reason != "upgraded" {
		t.Fatalf("%+v", m.Pinned)
	}
}

func TestPyCache15_Unpin(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "Content to unpin", PinHard)
	s.SetPin(context.Background(), k, PinNone, "")
	if m, _ := s.Stat(k); m.Pinned.Level != PinNone {
		t.Fatalf("%+v", m.Pinned)
	}
}

func TestPyCache19_ListKeys(t *testing.T) {
	s := newStore(t)
	k1, k2 := put(t, s, "Content 1", PinNone), put(t, s, "Content 2", PinNone)
	l, err := s.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[Key]bool{}
	for _, e := range l.Entries {
		got[e.Key] = true
	}
	if !got[k1] || !got[k2] || len(got) != 2 {
		t.Fatalf("%v", got)
	}
}

func TestPyCache20_StatsByPin(t *testing.T) {
	s := newStore(t)
	put(t, s, "Unpinned content", PinNone)
	put(t, s, "Soft pinned", PinSoft)
	put(t, s, "Hard pinned", PinHard)
	l, _ := s.List(context.Background(), nil)
	st := Summarize(l)
	if st.Items != 3 || st.Unpinned != 1 || st.Soft != 1 || st.Hard != 1 {
		t.Fatalf("%+v", st)
	}
}

func TestPyCache21_Delete(t *testing.T) {
	s := newStore(t)
	k := put(t, s, "To be deleted", PinNone)
	unlock, err := s.LockExclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remove(k); err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.Stat(k); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

// TestDedupSemantics: claude-context-manager upgraded a pin on dedupe only
// from none (soft never became hard) and did not verify the blob it
// deduplicated against. Here the pin rises to the maximum, the access time
// moves, and a blob that does not verify is replaced.
func TestDedupSemantics(t *testing.T) {
	s := newStore(t)
	content := strings.Repeat("dedup\n", 400)
	k := put(t, s, content, PinSoft)
	put(t, s, content, PinHard)
	if m, _ := s.Stat(k); m.Pinned.Level != PinHard {
		t.Fatalf("soft not upgraded to hard: %s", m.Pinned.Level)
	}
	os.Truncate(blobPath(t, s, k), 10)
	put(t, s, content, PinNone)
	if get(t, s, k) != content {
		t.Fatal("dedupe trusted a truncated blob")
	}
}
