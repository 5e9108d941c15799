package fsutil

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// On a FUSE filesystem (bindfs here) syncfs(2) reaches no storage: SyncFS
// says so with ErrNoSyncFS, reported once through SetNotify however often
// it happens, and SyncFiles, which callers fall back to, works there.
func TestSyncFSOnFUSE(t *testing.T) {
	if _, err := exec.LookPath("bindfs"); err != nil {
		t.Skip("no bindfs here (Debian's bindfs package): no FUSE filesystem to test on")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a FUSE filesystem needs root here")
	}
	src, mnt := t.TempDir(), t.TempDir()
	if out, err := exec.Command("bindfs", "--no-allow-other", src, mnt).CombinedOutput(); err != nil {
		t.Skipf("bindfs cannot mount here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("fusermount", "-u", mnt).Run(); exec.Command("umount", mnt).Run() })
	var notes []string
	SetNotify(func(m string) { notes = append(notes, m) })
	defer SetNotify(nil)
	noted.Delete("syncfs")
	for i := 0; i < 3; i++ {
		if err := SyncFS(mnt); !errors.Is(err, ErrNoSyncFS) {
			t.Fatalf("SyncFS on FUSE: %v, want ErrNoSyncFS", err)
		}
	}
	if len(notes) != 1 {
		t.Errorf("%d notes for three fallbacks, want one: %q", len(notes), notes)
	}
	p := filepath.Join(mnt, "a")
	if err := WriteFileUnsynced(p, FileMode, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	if err := SyncFiles([]string{p}, []string{mnt}); err != nil {
		t.Fatalf("SyncFiles on FUSE: %v", err)
	}
	if err := SyncFS(src); err != nil {
		t.Errorf("SyncFS on the filesystem under it: %v", err)
	}
}
