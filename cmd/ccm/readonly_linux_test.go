package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// readOnly makes dir read-only for this process. Permission bits do not
// stop root, so as root it bind-mounts dir read-only over itself (the
// kernel then refuses every write with EROFS); where that is not allowed
// the test is skipped, saying why.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("running as root, and a read-only bind mount is not allowed here (%v): permission bits cannot make a folder read-only for root", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("running as root, and remounting read-only is not allowed here (%v)", err)
	}
}
