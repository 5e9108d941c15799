package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lines counts a file's lines the plain way: newlines, and a last line
// without one.
func plainLines(b []byte) int64 {
	n := int64(bytes.Count(b, []byte{'\n'}))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// TestCountsFollowTheFile: counts are exact as a transcript grows (also
// when a write stopped inside a line), survive a save and load, and are
// made again when the file was replaced or changed in place.
func TestCountsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	cache := filepath.Join(dir, "ccm", "cache", "line-counts.json")
	var content []byte
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
		content = append(content, s...)
	}
	check := func(c *Counts, what string) {
		t.Helper()
		got, err := c.Lines(p, File{})
		if err != nil {
			t.Fatal(err)
		}
		if want := plainLines(content); got != want {
			t.Errorf("%s: %d lines, want %d", what, got, want)
		}
	}
	big := strings.Repeat("x", 3<<20) // a line longer than one read
	appendTo(`{"type":"user"}` + "\n" + `{"type":"assistant","a":"` + big + `"}` + "\n")
	c := LoadCounts(cache)
	check(c, "first count")
	appendTo(`{"type":"user","n":1}` + "\n")
	check(c, "after an append")
	appendTo(`{"type":"assistant","partial`)
	check(c, "a last line without its newline")
	appendTo(`":true}` + "\n" + `{"type":"user"}` + "\n\n")
	check(c, "the open line ended, and more")
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = LoadCounts(cache)
	appendTo(`{"type":"user","after":"save"}` + "\n")
	check(c, "grown after a save and load")

	// Changed in place before the counted end (same inode, more bytes):
	// the hash of the counted end no longer matches, so all is counted.
	content = bytes.Replace(content, []byte(`{"type":"user","after":"save"}`+"\n"), []byte(strings.Repeat(`{"type":"x"}`+"\n", 9)), 1)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	check(c, "rewritten in place")

	// Replaced by a rename (as ccm purge does): a new inode.
	tmp := p + ".tmp"
	content = []byte("{}\n{}\n")
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	check(c, "replaced")
}

// TestCountsSeenFileNotReopened: when the listing's stat shows the file
// and size counted last time, the count comes from the kept counts alone
// (here the file is gone by then, so any open would fail).
func TestCountsSeenFileNotReopened(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, []byte("{}\n{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := fileOf(p, fi)
	c := LoadCounts(filepath.Join(dir, "counts.json"))
	if n, err := c.Lines(p, seen); n != 3 || err != nil {
		t.Fatalf("first count: %d, %v", n, err)
	}
	os.Remove(p)
	if n, err := c.Lines(p, seen); n != 3 || err != nil {
		t.Errorf("kept count: %d, %v; want 3 without opening the file", n, err)
	}
	seen.Size++
	if _, err := c.Lines(p, seen); err == nil {
		t.Error("a file of another size was not opened again")
	}
}
