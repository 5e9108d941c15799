package ccm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// pythonStore lays out a store the way claude-context-manager left it: gzip and
// raw blobs, naive local timestamps, a relative session path, no
// bytes_compressed, a 0644 index.
func pythonStore(t *testing.T) (*Store, Key, Key) {
	t.Helper()
	s := newStore(t)
	root := s.Root()
	os.MkdirAll(filepath.Join(root, "blobs"), 0o700)
	os.MkdirAll(filepath.Join(root, "meta"), 0o700)

	gzContent := []byte(strings.Repeat("python stored this\n", 80))
	gzKey := Key("sha256:0dccc14c66f90be7dd8e59bbb6a5794170208492d86a4c438677821fba38dfdd")
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, 6)
	w.Write(gzContent)
	w.Close()
	os.WriteFile(filepath.Join(root, "blobs", gzKey.Hex()+".gz"), gz.Bytes(), 0o600)
	os.WriteFile(filepath.Join(root, "meta", gzKey.Hex()+".json"), []byte(`{
  "key": "`+string(gzKey)+`",
  "created_at": "2025-12-20T10:11:12.123456",
  "last_access_at": "2025-12-21T09:00:00.5",
  "access_count": 0,
  "bytes_uncompressed": 1520,
  "lines": 80,
  "compression": "gzip",
  "source": {
    "tool_name": "Bash",
    "exit_code": 0,
    "session_path": "projects/-home-u-x/abc.jsonl",
    "hook_version": 3
  },
  "pinned": {
    "level": "soft",
    "reason": "important",
    "pinned_at": "2025-12-20T10:11:12.123456"
  },
  "summary": {"kept": true}
}`), 0o600)

	// A blob of the successor, keyed by BLAKE2s-64 (key computed by Python's
	// hashlib), zstd, under the two-character fan-out.
	b2Content := []byte(strings.Repeat("legacy hook output\n", 100))
	b2Key := Key("b2s:a9f77bd4041bca81")
	enc, _ := zstd.NewWriter(nil)
	os.MkdirAll(filepath.Join(root, "blobs", "a9"), 0o700)
	os.WriteFile(filepath.Join(root, "blobs", "a9", b2Key.Hex()+".zst"), enc.EncodeAll(b2Content, nil), 0o600)
	os.WriteFile(filepath.Join(root, "meta", b2Key.Hex()+".json"),
		[]byte(`{"key": "b2s:a9f77bd4041bca81", "created_at": "2026-01-02T03:04:05", "last_access_at": "2026-01-02T03:04:05",
		"access_count": 2, "bytes_uncompressed": 1900, "lines": 100, "compression": "zstd",
		"source": {"tool_name": "Bash", "exit_code": "n/a", "command": "make"}, "pinned": {"level": "none", "reason": "", "pinned_at": ""}}`), 0o600)
	os.WriteFile(filepath.Join(root, "index.jsonl"), []byte(`{"ts":"2025-12-20T10:11:12.123456","key":"`+string(gzKey)+`","tool":"Bash","exit":0,"bytes":1520,"lines":80}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, "last_key"), []byte(string(gzKey)+"\n"), 0o644)
	return s, gzKey, b2Key
}

func TestReadsPythonStore(t *testing.T) {
	s, gzKey, b2Key := pythonStore(t)
	ctx := context.Background()
	m, err := s.Stat(gzKey)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 12, 20, 10, 11, 12, 123456000, time.Local)
	if !m.CreatedAt.Equal(want) || m.Pinned.Level != PinSoft || m.Source.SessionPath != "projects/-home-u-x/abc.jsonl" {
		t.Fatalf("python metadata read as %+v", m)
	}
	if got := get(t, s, gzKey); got != strings.Repeat("python stored this\n", 80) {
		t.Fatal("gzip blob content")
	}
	if got := get(t, s, b2Key); got != strings.Repeat("legacy hook output\n", 100) {
		t.Fatal("b2s fan-out blob content")
	}
	if k, err := s.LastKey(); err != nil || k != gzKey {
		t.Fatalf("last_key: %s %v", k, err)
	}
	// The rewrite after an access keeps fields other tools added.
	b, _ := os.ReadFile(filepath.Join(s.Root(), "meta", gzKey.Hex()+".json"))
	for _, keep := range []string{`"hook_version": 3`, `"summary": {`, `"kept": true`, `"access_count": 1`, `"reason": "important"`} {
		if !bytes.Contains(b, []byte(keep)) {
			t.Errorf("rewritten metadata lost %s:\n%s", keep, b)
		}
	}
	m2, _ := s.Stat(b2Key)
	if m2.AccessCount != 3 {
		t.Errorf("b2s access count %d, want 3", m2.AccessCount)
	}
	b, _ = os.ReadFile(filepath.Join(s.Root(), "meta", b2Key.Hex()+".json"))
	if !bytes.Contains(b, []byte(`"exit_code": "n/a"`)) {
		t.Errorf("non-numeric exit code not kept:\n%s", b)
	}
	// Corruption of a legacy blob is detected through BLAKE2s.
	flipByte(t, filepath.Join(s.Root(), "blobs", "a9", b2Key.Hex()+".zst"), -1)
	if _, err := s.Get(ctx, b2Key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt b2s blob: %v", err)
	}
	l, err := s.List(ctx, nil)
	if err != nil || len(l.Entries) != 2 {
		t.Fatalf("list: %v %+v", err, l)
	}
	st := Summarize(l)
	if st.Items != 2 || st.Soft != 1 || st.Unpinned != 1 || st.DiskBytes == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestDrift: what claude-context-manager documented but never did.
func TestDrift(t *testing.T) {
	t.Run("session path absolute", func(t *testing.T) {
		s := newStore(t)
		k, err := s.Put(context.Background(), []byte("x"), Source{ToolName: "Read", SessionPath: "rel/s.jsonl"}, PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := s.Stat(k)
		if !filepath.IsAbs(m.Source.SessionPath) {
			t.Fatalf("session_path %q", m.Source.SessionPath)
		}
	})
	t.Run("CCM_COMPRESSION honoured", func(t *testing.T) {
		content := strings.Repeat("compressible\n", 500)
		for env, ext := range map[string]string{"gzip": ".gz", "none": ".txt", "zstd": ".zst", "auto": ".zst", "": ".zst"} {
			t.Setenv("CCM_COMPRESSION", env)
			s, _ := Open(filepath.Join(t.TempDir(), "ccm"))
			k := put(t, s, content, PinNone)
			if p := blobPath(t, s, k); !strings.HasSuffix(p, ext) {
				t.Errorf("CCM_COMPRESSION=%q stored %s", env, p)
			}
			m, _ := s.Stat(k)
			if fi, _ := os.Stat(blobPath(t, s, k)); m.BytesCompressed != fi.Size() {
				t.Errorf("bytes_compressed %d, file %d", m.BytesCompressed, fi.Size())
			}
		}
		t.Setenv("CCM_COMPRESSION", "lz4")
		s, _ := Open(filepath.Join(t.TempDir(), "ccm"))
		if _, err := s.Put(context.Background(), []byte(content), Source{}, PinNone, ""); err == nil || !strings.Contains(err.Error(), "CCM_COMPRESSION") {
			t.Errorf("bad CCM_COMPRESSION: %v", err)
		}
	})
}

func TestBlobWithoutMetadata(t *testing.T) {
	s := newStore(t)
	k := put(t, s, strings.Repeat("orphan blob\n", 300), PinNone)
	os.Remove(filepath.Join(s.Root(), "meta", k.Hex()+".json"))
	if got := get(t, s, k); got != strings.Repeat("orphan blob\n", 300) {
		t.Fatal("content")
	}
	m, err := s.Stat(k)
	if err != nil || m.Pinned.Level != PinNone {
		t.Fatalf("stat: %v %+v", err, m)
	}
	// Storing it again restores the metadata, as new.
	put(t, s, strings.Repeat("orphan blob\n", 300), PinSoft)
	if m, _ := s.Stat(k); m.Pinned.Level != PinSoft || m.BytesUncompressed != 3600 {
		t.Fatalf("restored metadata %+v", m)
	}
}

// Source and Meta stay comparable: callers may compare them with ==.
var _ = Source{} == Source{}
var _ = func(a, b Meta) bool { return a == b }

func TestMetaJSONRoundTrip(t *testing.T) {
	s, gzKey, _ := pythonStore(t)
	m, err := s.Stat(gzKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(*m) // a value, as in a larger struct
	if err != nil {
		t.Fatal(err)
	}
	var back Meta
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if !bytes.Equal(b, b2) || !back.CreatedAt.Equal(m.CreatedAt) || back.Pinned.Level != PinSoft {
		t.Fatalf("round trip changed the metadata:\n%s\n%s", b, b2)
	}
	if err := json.Unmarshal([]byte(`{"key":"../../x"}`), &back); !errors.Is(err, ErrBadMeta) {
		t.Fatalf("bad key: %v", err)
	}
}
