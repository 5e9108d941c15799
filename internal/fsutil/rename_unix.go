//go:build unix

package fsutil

import (
	"os"

	"golang.org/x/sys/unix"
)

// Rename renames oldpath to newpath, replacing newpath if it exists
// (rename(2), atomic). Processes that have the replaced file open keep
// reading and writing it. It is rename(2) itself: os.Rename first stats
// the target to refuse a directory, which the system call refuses as well.
func Rename(oldpath, newpath string) error {
	if err := unix.Rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
