package ccm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// textBlob is tool-output-like content of about n bytes, distinct per seed.
func textBlob(seed, n int) []byte {
	r := rand.New(rand.NewSource(int64(seed)))
	words := []string{"error", "func", "return", "ok", "ccm", "test", "file", "line", "value", "nil"}
	var b bytes.Buffer
	fmt.Fprintf(&b, "blob %d\n", seed)
	for b.Len() < n {
		b.WriteString(words[r.Intn(len(words))])
		if r.Intn(8) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

// putBatch stores contents through one batch and commits.
func putBatch(t testing.TB, s *Store, contents [][]byte, pin PinLevel) []Key {
	t.Helper()
	b := s.NewBatch()
	keys := make([]Key, len(contents))
	for i, c := range contents {
		k, err := b.Put(context.Background(), c, Source{ToolName: "Bash", SessionPath: "rel/s.jsonl"}, pin, "why")
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func packFiles(t testing.TB, s *Store) []string {
	t.Helper()
	p, _ := filepath.Glob(filepath.Join(s.Root(), "packs", "*.pack"))
	return p
}

// A batch writes one pack: raw, S2 and (over 4 MiB) zstd frames, each read
// back verified, with metadata from the index, private modes.
func TestBatchWritesOnePack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	contents := [][]byte{[]byte("tiny"), textBlob(1, 50<<10), textBlob(2, 5<<20), bytes.Repeat([]byte{0}, 3000)}
	keys := putBatch(t, s, contents, PinSoft)
	if p := packFiles(t, s); len(p) != 1 {
		t.Fatalf("packs %v, want one", p)
	}
	if b, _ := os.ReadDir(filepath.Join(s.Root(), "blobs")); len(b) != 0 {
		t.Fatalf("blob files written: %d", len(b))
	}
	wantCodec := []Compression{None, S2, Zstd, S2}
	for i, k := range keys {
		if got, err := s.Get(ctx, k); err != nil || !bytes.Equal(got, contents[i]) {
			t.Fatalf("%d: get: %v", i, err)
		}
		if err := s.Verify(k); err != nil {
			t.Fatal(err)
		}
		m, err := s.Stat(k)
		if err != nil {
			t.Fatal(err)
		}
		if m.Compression != string(wantCodec[i]) || m.BytesUncompressed != int64(len(contents[i])) ||
			m.Lines != int64(bytes.Count(contents[i], []byte{'\n'})) || m.Pinned.Level != PinSoft || m.Pinned.Reason != "why" ||
			!filepath.IsAbs(m.Source.SessionPath) || m.Source.ToolName != "Bash" || m.AccessCount != 1 {
			t.Fatalf("%d: meta %+v", i, m)
		}
		rc, _, err := s.Open(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, contents[i]) {
			t.Fatalf("%d: open: %v", i, err)
		}
	}
	for _, p := range []string{filepath.Join(s.Root(), "packs"), packFiles(t, s)[0], filepath.Join(s.Root(), "packs", "index.jsonl")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	l, err := s.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := Summarize(l)
	if st.Items != 4 || st.Packed != 4 || st.Packs != 1 || st.Soft != 4 || st.PackDeadBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Accesses and pins are index lines: the pack is never rewritten for them,
// and another process (another Store) sees them.
func TestPackAccessAndPinDoNotRewritePack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	k := putBatch(t, s, [][]byte{textBlob(3, 8000)}, PinNone)[0]
	pack := packFiles(t, s)[0]
	before, _ := os.ReadFile(pack)
	get(t, s, k)
	get(t, s, k)
	if _, err := s.SetPin(ctx, k, PinHard, "keep"); err != nil {
		t.Fatal(err)
	}
	other, _ := Open(s.Root())
	m, err := other.Stat(k)
	if err != nil || m.AccessCount != 2 || m.Pinned.Level != PinHard || m.Pinned.Reason != "keep" {
		t.Fatalf("seen by another store: %+v %v", m, err)
	}
	if m, _ := other.SetPin(ctx, k, PinNone, ""); m.Pinned.Level != PinNone {
		t.Fatalf("unpin: %+v", m)
	}
	if m, _ := s.Stat(k); m.Pinned.Level != PinNone {
		t.Fatalf("unpin not seen: %+v", m)
	}
	after, _ := os.ReadFile(pack)
	if !bytes.Equal(before, after) {
		t.Fatal("pack rewritten")
	}
}

// Content already stored (in a pack, or as a file) is not written again;
// its pin only rises.
func TestPackDedup(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, fileBlob := textBlob(4, 9000), textBlob(5, 9000)
	ka := putBatch(t, s, [][]byte{a}, PinNone)[0]
	kf := put(t, s, string(fileBlob), PinNone) // a single Put: a blob file
	size := func() int64 {
		var n int64
		for _, p := range packFiles(t, s) {
			fi, _ := os.Stat(p)
			n += fi.Size()
		}
		return n
	}
	before := size()
	putBatch(t, s, [][]byte{a, fileBlob, a}, PinSoft)
	if size() != before {
		t.Fatalf("pack bytes %d -> %d: stored again", before, size())
	}
	for _, k := range []Key{ka, kf} {
		if m, err := s.Stat(k); err != nil || m.Pinned.Level != PinSoft {
			t.Fatalf("%s: pin not raised: %+v %v", k, m, err)
		}
	}
	// A single Put of content in a pack: no file, pin raised, durable.
	if _, err := s.Put(ctx, a, Source{}, PinHard, "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "blobs", ka.Hex()+".zst")); err == nil {
		t.Fatal("a blob file written for content in a pack")
	}
	if m, _ := s.Stat(ka); m.Pinned.Level != PinHard {
		t.Fatalf("pin %+v", m.Pinned)
	}
	if k, _ := s.LastKey(); k != ka {
		t.Fatalf("last_key %s", k)
	}
}

// Two processes purging at once (two Stores, two batches, overlapping
// content, committing in either order): each writes its own pack, every
// blob reads back, each key is indexed once.
func TestConcurrentBatchesTwoStores(t *testing.T) {
	s1 := newStore(t)
	s2, _ := Open(s1.Root())
	ctx := context.Background()
	var contents [][]byte
	for i := range 40 {
		contents = append(contents, textBlob(100+i, 4000+i*100))
	}
	b1, b2 := s1.NewBatch(), s2.NewBatch()
	var wg sync.WaitGroup
	for w, b := range []*Batch{b1, b2} {
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < len(contents); i += 2 {
					if i%3 == w { // each batch skips a third: overlap, not identity
						continue
					}
					if _, err := b.Put(ctx, contents[i], Source{}, PinNone, ""); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	if err := b2.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b1.Commit(); err != nil {
		t.Fatal(err)
	}
	if p := packFiles(t, s1); len(p) != 2 {
		t.Fatalf("packs %v, want 2", p)
	}
	s3, _ := Open(s1.Root())
	for i, c := range contents {
		if got := get(t, s3, KeyOf(c)); got != string(c) {
			t.Fatalf("%d differs", i)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(s1.Root(), "packs", "index.jsonl"))
	if n := strings.Count(string(idx), `"op":"put"`); n != len(contents) {
		t.Fatalf("%d put lines, want %d", n, len(contents))
	}
}

// A torn last index line (a crash mid-append) is skipped by readers,
// reported by List, and does not swallow the next append.
func TestPackIndexTornLine(t *testing.T) {
	s := newStore(t)
	k1 := putBatch(t, s, [][]byte{textBlob(6, 3000)}, PinNone)[0]
	f, _ := os.OpenFile(filepath.Join(s.Root(), "packs", "index.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"op":"put","key":"sha256:`)
	f.Close()
	s2, _ := Open(s.Root())
	get(t, s2, k1)
	k2 := putBatch(t, s2, [][]byte{textBlob(7, 3000)}, PinNone)[0]
	s3, _ := Open(s.Root())
	get(t, s3, k1)
	get(t, s3, k2)
	l, err := s3.List(context.Background(), nil)
	if err != nil || len(l.IndexErrors) != 1 || len(l.Entries) != 2 {
		t.Fatalf("list: %v %v %d", err, l.IndexErrors, len(l.Entries))
	}
	if !strings.Contains(l.IndexErrors[0], "line 2: not JSON") {
		t.Fatalf("index error %q", l.IndexErrors[0])
	}
}

// A failed batch (Close without Commit) leaves nothing readable and no pack.
func TestBatchCloseRemovesPack(t *testing.T) {
	s := newStore(t)
	b := s.NewBatch()
	k, _ := b.Put(context.Background(), textBlob(8, 5000), Source{}, PinNone, "")
	b.Close()
	if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
	if p := packFiles(t, s); len(p) != 0 {
		t.Fatalf("packs %v", p)
	}
}

// A pack that is gone: its blobs are reported as damaged (not as absent),
// stats counts the missing pack, and the other pack's blobs still read.
func TestMissingPack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a := putBatch(t, s, [][]byte{textBlob(30, 4000), textBlob(31, 4000)}, PinNone)
	b := putBatch(t, s, [][]byte{textBlob(32, 4000)}, PinNone)
	l, _ := s.List(ctx, nil)
	var gone string
	for _, e := range l.Entries {
		if e.Key == a[0] {
			gone = e.Files[0].Path
		}
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	s2, _ := Open(s.Root())
	if _, err := s2.Get(ctx, a[1]); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "its pack is missing") {
		t.Fatalf("get from a missing pack: %v", err)
	}
	get(t, s2, b[0])
	rep, err := s2.VerifyAll(ctx, nil, nil)
	if err != nil || len(rep.Damaged) != 2 || rep.Blobs != 3 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	l, _ = s2.List(ctx, nil)
	if st := Summarize(l); st.MissingPacks != 1 || st.Packs != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// A shared batch's Sync makes what was put so far durable and readable by
// another process, and keeps writing into the same pack; a value put again
// after the Sync gets no second frame.
func TestBatchSyncKeepsOnePack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, b := textBlob(10, 40<<10), textBlob(11, 40<<10)
	bt := s.NewBatch()
	ka, err := bt.Put(ctx, a, Source{ToolName: "Bash"}, PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := bt.Sync(); err != nil {
		t.Fatal(err)
	}
	other, err := Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.Get(ctx, ka); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("after Sync, another store reads %v", err)
	}
	kb, err := bt.Put(ctx, b, Source{ToolName: "Read"}, PinNone, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bt.Put(ctx, a, Source{ToolName: "Bash"}, PinSoft, "again"); err != nil {
		t.Fatal(err)
	}
	if err := bt.Commit(); err != nil {
		t.Fatal(err)
	}
	if p := packFiles(t, s); len(p) != 1 {
		t.Fatalf("packs %v, want the one shared pack", p)
	}
	other, _ = Open(s.Root())
	for k, want := range map[Key][]byte{ka: a, kb: b} {
		if got, err := other.Get(ctx, k); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v", k.Short(), err)
		}
	}
	if m, err := other.Stat(ka); err != nil || m.Pinned.Level != PinSoft {
		t.Fatalf("the second put's pin was not kept: %+v %v", m, err)
	}
	l, err := other.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := Summarize(l); st.Items != 2 || st.Packs != 1 || st.PackDeadBytes != 0 {
		t.Fatalf("stats %+v: want 2 blobs in one pack, no dead frame", st)
	}
}
