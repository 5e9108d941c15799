package fsutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"ccm/internal/testutil"
)

// Another process's exclusive lock keeps this one out until it ends:
// flock on Unix, LockFileEx on Windows.
func TestLockHeldByAnotherProcess(t *testing.T) {
	p := filepath.Join(testutil.TempDir(t), "locks", "s.lock")
	h := startHelper(t, "lock", p)
	if _, err := LockFile(context.Background(), p, false, 50*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("shared lock while another process holds it exclusively: %v", err)
	}
	h.stop()
	l, err := LockFile(context.Background(), p, true, 0)
	if err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
	l.Unlock()
}

// Rename replaces a file another process reads when that process shares
// deletion (Unix always; on Windows what OpenFile and Claude Code's file
// calls do); the reader keeps the old content, and no other file is left.
func TestRenameOverSharedReader(t *testing.T) {
	dir := testutil.TempDir(t)
	path := filepath.Join(dir, "s.jsonl")
	write(t, path, "old\n")
	h := startHelper(t, "read-shared", path)
	own, err := OpenFile(path, os.O_RDONLY, 0) // as a rewrite holds its source
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".s.jsonl.ccm-tmp-1")
	write(t, tmp, "new\n")
	err = Rename(tmp, path)
	buf := make([]byte, 8)
	n, _ := own.ReadAt(buf, 0)
	own.Close()
	h.stop()
	if string(buf[:n]) != "old\n" {
		t.Errorf("the holder reads %q after the rename, want the old content", buf[:n])
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "new\n" {
		t.Fatalf("after the rename: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files left, want the one", len(entries))
	}
}

// A file another process holds open without sharing deletion (os.Open on
// Windows) cannot be replaced on Windows: Rename tries for a second, then
// returns ErrInUse and changes nothing. On Unix nothing stops a rename.
func TestRenameOverUnsharedReader(t *testing.T) {
	dir := testutil.TempDir(t)
	path := filepath.Join(dir, "s.jsonl")
	write(t, path, "old\n")
	h := startHelper(t, "read", path)
	tmp := filepath.Join(dir, ".s.jsonl.ccm-tmp-1")
	write(t, tmp, "new\n")
	err := Rename(tmp, path)
	h.stop()
	if runtime.GOOS != "windows" {
		if err != nil || read(t, path) != "new\n" {
			t.Fatalf("rename over a held file: %v, %q", err, read(t, path))
		}
		return
	}
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("rename over a file held without share-delete: %v, want ErrInUse", err)
	}
	if read(t, path) != "old\n" || read(t, tmp) != "new\n" {
		t.Fatalf("a refused rename changed a file: %q, %q", read(t, path), read(t, tmp))
	}
	// Once the holder is gone the rename goes through.
	if err := Rename(tmp, path); err != nil || read(t, path) != "new\n" {
		t.Fatalf("rename after the holder ended: %v", err)
	}
}

// Writers sees another process that has the file open for writing, and
// no longer once it has closed it; a reader is no writer. Windows names
// no process (pid 0).
func TestWritersOfAnotherProcess(t *testing.T) {
	dir := testutil.TempDir(t)
	path := filepath.Join(dir, "s.jsonl")
	write(t, path, "{}\n")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pids, ok := Writers(path, fi)
	if !ok {
		t.Skipf("Writers cannot tell on %s", runtime.GOOS)
	}
	if len(pids) != 0 {
		t.Fatalf("nobody has it open: %v", pids)
	}
	r := startHelper(t, "read-shared", path)
	if pids, _ := Writers(path, fi); len(pids) != 0 {
		t.Fatalf("a reader is no writer: %v", pids)
	}
	r.stop()
	w := startHelper(t, "write", path)
	want := w.cmd.Process.Pid
	if runtime.GOOS == "windows" {
		want = 0
	}
	if pids, ok := Writers(path, fi); !ok || !slices.Contains(pids, want) {
		t.Fatalf("a writer (%d): %v, %v", want, pids, ok)
	}
	w.stop()
	if pids, ok := Writers(path, fi); !ok || len(pids) != 0 {
		t.Fatalf("the writer is gone: %v, %v", pids, ok)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
