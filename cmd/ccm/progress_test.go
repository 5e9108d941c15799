package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestNoBarOffTerminal: the bar is drawn on terminals only; a pipe, a
// regular file and an in-memory writer get none, and a batch run with
// such a stderr writes nothing to it.
func TestNoBarOffTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for name, out := range map[string]any{"pipe": w, "file": f, "buffer": &buf} {
		if isTerminal(out) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
	if p := newProgress(&buf); p != nil {
		t.Fatalf("newProgress gave a bar for a buffer")
	}
	forEach(context.Background(), f, false, "archiving", 50, 2, func(int) {})
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 {
		t.Fatalf("batch wrote %d bytes of progress to a file", fi.Size())
	}
}
