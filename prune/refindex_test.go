package prune

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
)

// refKey is a well-formed key for index tests.
func refKey(i int) ccm.Key { return key(1000 + i) }

// line is a transcript line whose tool result is the stub of k.
func line(k ccm.Key) string {
	return `{"type":"user","message":{"content":[{"type":"tool_result","content":"[CCM_CACHED]\nkey: ` + string(k) + `\n[/CCM_CACHED]"}]}}` + "\n"
}

// refresh opens the index of storeRoot, refreshes it over roots, and
// closes it (writing it back).
func refresh(t *testing.T, storeRoot string, roots ...string) (Refs, *IndexStats) {
	t.Helper()
	x, err := OpenIndex(context.Background(), storeRoot, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	refs, st, err := x.Refresh(context.Background(), roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return refs, st
}

func has(refs Refs, ks ...ccm.Key) bool {
	for _, k := range ks {
		if _, ok := refs[k]; !ok {
			return false
		}
	}
	return true
}

// The index reads a file once, then only what changed: nothing for an
// unchanged file, the new bytes of an appended one (a key split across
// the old end included), all of a rewritten one; a removed file takes its
// keys with it.
func TestIndexReadsOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	projects := filepath.Join(dir, "claude", "projects")
	os.MkdirAll(filepath.Join(projects, "-p"), 0o700)
	os.MkdirAll(store, 0o700)
	a := filepath.Join(projects, "-p", "a.jsonl")
	b := filepath.Join(projects, "-p", "b.jsonl")
	writeFile(t, a, line(refKey(1))+strings.Repeat(`{"type":"user","message":{"content":"filler"}}`+"\n", 200))
	writeFile(t, b, line(refKey(2)))

	refs, st := refresh(t, store, projects)
	if !has(refs, refKey(1), refKey(2)) || st.Read != 2 || st.Unchanged != 0 || st.Rebuilt != "no reference index yet" {
		t.Fatalf("first refresh: %v %+v", refs, st)
	}
	_, st = refresh(t, store, projects)
	if st.Read != 0 || st.Grown != 0 || st.Unchanged != 2 || st.BytesRead != 0 || st.Rebuilt != "" {
		t.Fatalf("unchanged files were read: %+v", st)
	}

	// Claude Code appends; the key is split across two appends.
	before, _ := os.Stat(a)
	k3 := string(refKey(3))
	appendFile(t, a, `{"type":"user","message":{"content":"`+k3[:20])
	_, st = refresh(t, store, projects)
	appendFile(t, a, k3[20:]+`"}}`+"\n")
	refs, st = refresh(t, store, projects)
	if !has(refs, refKey(1), refKey(2), refKey(3)) || st.Grown != 1 || st.Read != 0 {
		t.Fatalf("after an append: %v %+v", refs, st)
	}
	if after, _ := os.Stat(a); st.BytesRead >= after.Size() || st.BytesRead > after.Size()-before.Size()+int64(keyTail)+64 {
		t.Errorf("an append read %d bytes of a %d-byte file (%d appended)", st.BytesRead, after.Size(), after.Size()-before.Size())
	}

	// Rewritten in place at the same size: read whole again.
	data, _ := os.ReadFile(b)
	writeFile(t, b, strings.Replace(string(data), string(refKey(2)), string(refKey(4)), 1))
	os.Chtimes(b, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	refs, st = refresh(t, store, projects)
	if has(refs, refKey(2)) || !has(refs, refKey(4)) || st.Read != 1 {
		t.Fatalf("after a rewrite: %v %+v", refs, st)
	}

	// Rewritten with a different start and appended to (a purge renames
	// a new file over it): the old bytes are not there, read whole.
	writeFile(t, a, line(refKey(5))+strings.Repeat("x", 9000)+"\n")
	refs, st = refresh(t, store, projects)
	if has(refs, refKey(1)) || has(refs, refKey(3)) || !has(refs, refKey(5)) || st.Read != 1 {
		t.Fatalf("after a replace: %v %+v", refs, st)
	}

	os.Remove(b)
	refs, st = refresh(t, store, projects)
	if has(refs, refKey(4)) || st.Files != 1 {
		t.Fatalf("a removed file's keys stayed: %v %+v", refs, st)
	}
}

// A missing or damaged index is made again by reading every file, and a
// stale one (files changed behind its back) is corrected before anything
// is decided: prune never deletes what a file references.
func TestIndexMissingOrDamagedIsRebuilt(t *testing.T) {
	s, claude := testStore(t)
	now := time.Now()
	ref := putAt(t, s, "referenced content", now.Add(-72*time.Hour), ccm.PinNone)
	late := putAt(t, s, "referenced later", now.Add(-72*time.Hour), ccm.PinNone)
	gone := putAt(t, s, "nobody's", now.Add(-72*time.Hour), ccm.PinNone)
	tr := filepath.Join(claude, "projects", "-p", "s.jsonl")
	writeFile(t, tr, line(ref))
	refs, _ := refresh(t, s.Root(), TranscriptRoots(claude)...)
	if !has(refs, ref) {
		t.Fatal("not indexed")
	}
	index := filepath.Join(RefsDir(s.Root()), refsIndexFile)
	for _, c := range []struct{ name, content, why string }{
		{"damaged", `{"format":"ccm-refs/1","keys":["sha256:zz"],"files":{}}`, "the reference index was damaged"},
		{"truncated", `{"format":"ccm-refs/1","ke`, "the reference index was damaged"},
		{"index out of range", `{"format":"ccm-refs/1","keys":[],"files":{"/x.jsonl":{"root":"/","keys":[7]}}}`, "the reference index was damaged"},
		{"missing", "", "no reference index yet"},
	} {
		if c.content == "" {
			os.Remove(index)
		} else {
			writeFile(t, index, c.content)
		}
		x, err := ReadIndex(s.Root())
		if err != nil || x.Rebuilt() != c.why {
			t.Errorf("%s: %v, rebuilt %q, want %q", c.name, err, x.Rebuilt(), c.why)
		}
	}
	// Stale: the transcript gained a reference without the index knowing
	// (the index says it is unchanged only if size, mtime and inode are).
	appendFile(t, tr, line(late))
	writeFile(t, index, `{"format":"ccm-refs/1","keys":[],"files":{}}`)
	p, res := run(t, s, claude, Policy{GC: true, AgeLimit: true, MaxAge: time.Hour, SizeLimit: true, MaxBytes: 0})
	if !exists(s, ref) || !exists(s, late) || exists(s, gone) {
		t.Fatalf("deleted %v (%+v): a referenced blob must stay, the unreferenced one go", keys(p.Deletions), res)
	}
	if p.Index.Read != 1 || p.HeldReferenced == 0 {
		t.Errorf("references %+v, held referenced %d", p.Index, p.HeldReferenced)
	}
}

// A zstd backup's keys are found once it is decompressed, and an archive
// folder recorded in the index is read wherever it is; one that is not
// reachable keeps what it referenced, a file root whose file is gone is
// forgotten.
func TestIndexBackupsAndRecordedRoots(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	projects := filepath.Join(dir, "claude", "projects")
	os.MkdirAll(filepath.Join(projects, "-p"), 0o700)
	os.MkdirAll(store, 0o700)
	enc, _ := zstd.NewWriter(nil)
	writeFile(t, filepath.Join(projects, "-p", "s.jsonl.backup.20260101_120000.000.zst"), string(enc.EncodeAll([]byte(line(refKey(1))), nil)))
	elsewhere := filepath.Join(dir, "usb", "archive")
	writeFile(t, filepath.Join(elsewhere, "-p", "s2.manifest.json"), `{"format":"ccm-archive/1","refs":["`+string(refKey(2))+`"]}`)
	outside := filepath.Join(dir, "copy.jsonl")
	writeFile(t, outside, line(refKey(3)))

	x, err := OpenIndex(context.Background(), store, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.AddRoots(elsewhere, outside); err != nil {
		t.Fatal(err)
	}
	x.Close()
	refs, st := refresh(t, store, projects)
	if !has(refs, refKey(1), refKey(2), refKey(3)) || st.Files != 3 {
		t.Fatalf("refs %v %+v", refs, st)
	}
	// The disk is unplugged: its archives' references stay.
	os.Rename(filepath.Join(dir, "usb"), filepath.Join(dir, "usb-away"))
	os.Remove(outside)
	refs, st = refresh(t, store, projects)
	if !has(refs, refKey(1), refKey(2)) || has(refs, refKey(3)) || !slices.Equal(st.Unreachable, []string{elsewhere}) {
		t.Fatalf("unplugged: refs %v %+v", refs, st)
	}
	x, _ = OpenIndex(context.Background(), store, time.Second)
	if roots := x.Roots(); !slices.Equal(roots, []string{elsewhere}) {
		t.Errorf("roots %v: the archive folder stays, the deleted file goes", roots)
	}
	x.Close()
	// Plugged back in, then the archive is unarchived: its keys go.
	os.Rename(filepath.Join(dir, "usb-away"), filepath.Join(dir, "usb"))
	os.Remove(filepath.Join(elsewhere, "-p", "s2.manifest.json"))
	refs, st = refresh(t, store, projects)
	if has(refs, refKey(2)) || len(st.Unreachable) != 0 {
		t.Fatalf("after unarchive: refs %v %+v", refs, st)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
