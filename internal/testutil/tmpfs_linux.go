package testutil

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// MountTmpfs mounts a tmpfs of size bytes on dir (which must exist) and
// returns how to unmount it: a real disk that can be filled, for the tests
// of what a full disk does. Only root may, on Linux.
func MountTmpfs(dir string, size int64) (unmount func(), err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("mounting a tmpfs needs root")
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		return nil, fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return func() { unix.Unmount(dir, unix.MNT_DETACH) }, nil
}
