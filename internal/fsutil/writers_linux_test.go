package fsutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Writers finds another process that holds a file open, also once a
// new file has been renamed over it, and no longer once it exits; this
// process's own descriptors do not count.
func TestWriters(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: Writers cannot tell here")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if pids, ok := Writers(path, old); !ok || len(pids) != 0 {
		t.Fatalf("only this process has it open: got %v, %v", pids, ok)
	}
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := exec.Command("sleep", "30")
	reader.ExtraFiles = []*os.File{ro}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	ro.Close()
	defer func() { reader.Process.Kill(); reader.Wait() }()
	if pids, _ := Writers(path, old); len(pids) != 0 {
		t.Fatalf("a reader is no writer: got %v", pids)
	}
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	pid := child.Process.Pid
	if pids, _ := Writers(path, old); !slices.Contains(pids, pid) {
		t.Fatalf("child %d holds it: got %v", pid, pids)
	}
	tmp := filepath.Join(dir, ".s.jsonl.tmp")
	if err := os.WriteFile(tmp, []byte("{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if pids, _ := Writers(path, old); !slices.Contains(pids, pid) {
		t.Fatalf("after the rename the child still holds the old file: got %v", pids)
	}
	newFi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if pids, _ := Writers(path, newFi); len(pids) != 0 {
		t.Errorf("nobody has the new file open: got %v", pids)
	}
	child.Process.Kill()
	child.Wait()
	if pids, _ := Writers(path, old); len(pids) != 0 {
		t.Errorf("the child is gone: got %v", pids)
	}
}
