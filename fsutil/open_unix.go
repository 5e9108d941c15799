//go:build unix

package fsutil

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// NoFollow is an os.OpenFile flag that refuses a symlink as the last
// component of the path (O_NOFOLLOW: the open fails with ELOOP).
const NoFollow = unix.O_NOFOLLOW

// OpenFile is os.OpenFile for regular files, without registering them with
// the runtime's poller: os.OpenFile spends four fcntl and an epoll_ctl on
// every open (regular files cannot be polled anyway), which added up when
// a purge created two files per stored blob. The file is blocking, so
// Read, Write and Fd never switch modes.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}
