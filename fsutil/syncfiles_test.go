package fsutil

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileUnsyncedAndSync(t *testing.T) {
	dir := t.TempDir()
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
		if fi.Mode().Perm() != FileMode {
			t.Errorf("%s: mode %v", e.Name(), fi.Mode().Perm())
		}
	}
	// A file replaced or removed since is skipped, not an error.
	os.Remove(files[1])
	if err := SyncFiles(files, []string{dir, filepath.Join(dir, "gone")}); err != nil {
		t.Fatal(err)
	}
	if err := SyncFS(dir); err != nil {
		t.Fatal(err)
	}
}

func TestLockExisting(t *testing.T) {
	dir := t.TempDir()
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
	start := time.Now()
	if _, err := LockExisting(context.Background(), p, false, 30*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("shared while exclusive held: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("wait not bounded")
	}
	ex.Unlock()
	sh, err := LockExisting(context.Background(), p, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	sh.Unlock()
}
