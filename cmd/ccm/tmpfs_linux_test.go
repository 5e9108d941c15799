package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size bytes on dir (which must exist) and
// returns how to unmount it. Only root may, on Linux.
func mountTmpfs(dir string, size int64) (unmount func(), err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("mounting a tmpfs needs root")
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		return nil, fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return func() { unix.Unmount(dir, unix.MNT_DETACH) }, nil
}
