package fsutil

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccm/internal/testutil"
)

func TestWriteFileUnsyncedAndSync(t *testing.T) {
	dir := testutil.TempDir(t)
	var files []string
	for i, name := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, name)
		err := WriteFileUnsynced(p, FileMode, func(w io.Writer) error {
			_, err := w.Write([]byte{byte('0' + i)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	// A failing writer leaves nothing behind, not even its temp file.
	bad := errors.New("boom")
	if err := WriteFileUnsynced(filepath.Join(dir, "d"), FileMode, func(io.Writer) error { return bad }); !errors.Is(err, bad) {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	for _, e := range entries {
		fi, _ := e.Info()
		if fi.Mode().Perm() != modeOnDisk(FileMode) {
			t.Errorf("%s: mode %v", e.Name(), fi.Mode().Perm())
		}
	}
	// A file replaced or removed since is skipped, not an error.
	os.Remove(files[1])
	if err := SyncFiles(files, []string{dir, filepath.Join(dir, "gone")}); err != nil {
		t.Fatal(err)
	}
	// SyncFS works on Linux's usual filesystems; elsewhere it says so.
	if err := SyncFS(dir); err != nil && (runtime.GOOS == "linux" || !errors.Is(err, ErrNoSyncFS)) {
		t.Fatal(err)
	}
}

func TestLockExisting(t *testing.T) {
	dir := testutil.TempDir(t)
	p := filepath.Join(dir, "lock")
	if _, err := LockExisting(context.Background(), p, false, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing lock file: %v", err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("LockExisting created the file")
	}
	ex, err := LockFile(context.Background(), p, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Returning ErrLockTimeout is the bound: a wait without one would
	// never return.
	if _, err := LockExisting(context.Background(), p, false, 30*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("shared while exclusive held: %v", err)
	}
	ex.Unlock()
	sh, err := LockExisting(context.Background(), p, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	sh.Unlock()
}

// Flock and Funlock lock an open file many times without reopening it;
// the lock conflicts with LockFile's like any flock.
func TestFlockKeepsFileOpen(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(testutil.TempDir(t), "meta.lock")
	f, err := OpenFile(p, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != modeOnDisk(FileMode) {
		t.Fatalf("OpenFile mode: %v %v", fi.Mode(), err)
	}
	for i := 0; i < 3; i++ {
		if err := Flock(ctx, f, p, true, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := LockFile(ctx, p, false, 20*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
			t.Fatalf("round %d: shared lock while Flock holds it exclusively: %v", i, err)
		}
		if err := Funlock(f); err != nil {
			t.Fatal(err)
		}
		l, err := LockFile(ctx, p, true, 0)
		if err != nil {
			t.Fatalf("round %d: after Funlock: %v", i, err)
		}
		l.Unlock()
	}
	if _, err := OpenFile(filepath.Join(p, "x"), os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("OpenFile under a file: %v", err)
	}
}

// CreateTemp names never end in the target's extension and never collide.
func TestCreateTempNames(t *testing.T) {
	dir := testutil.TempDir(t)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		f, err := CreateTemp(filepath.Join(dir, "s.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f.Name())
		f.Close()
		if seen[name] || !strings.HasPrefix(name, ".s.jsonl.ccm-tmp-") || strings.HasSuffix(name, ".jsonl") {
			t.Fatalf("temp name %q", name)
		}
		seen[name] = true
	}
}

// modeOnDisk is the permission a file created with mode m shows: m
// itself, except on Windows, whose files are only read-only or not.
func modeOnDisk(m os.FileMode) os.FileMode {
	if runtime.GOOS != "windows" {
		return m
	}
	if m&0o200 != 0 {
		return 0o666
	}
	return 0o444
}
