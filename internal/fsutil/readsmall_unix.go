//go:build unix

package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"
)

// OpenDir opens the directory at path for ReadSmall. A directory that
// cannot be opened still gives a Dir, whose files are read by path.
func OpenDir(path string) *Dir {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return &Dir{path: path, fd: fd}
}

// Close closes the directory. It is safe to call on a nil Dir.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// ReadSmall reads the regular file at path into *buf (grown as needed, up
// to limit bytes) with the fewest system calls: open (relative to d when
// path is directly in it; d may be nil), read until a short read, close.
// A symlink is never followed (an error wrapping ErrSymlink), a FIFO
// never waited on, a directory refused (ErrNotRegular), a file larger than
// limit refused (ErrTooLarge). It suits files replaced by rename, never
// written in place: a short read is their end.
func ReadSmall(d *Dir, path string, buf *[]byte, limit int) ([]byte, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	var fd int
	var err error
	if d != nil && d.fd >= 0 {
		if name, ok := strings.CutPrefix(path, d.path+"/"); ok && !strings.Contains(name, "/") {
			fd, err = unix.Openat(d.fd, name, flags, 0)
		} else {
			fd, err = unix.Open(path, flags, 0)
		}
	} else {
		fd, err = unix.Open(path, flags, 0)
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s %w", path, ErrSymlink)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := *buf
	n := 0
	for {
		if n == len(b) {
			if len(b) >= limit {
				return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrTooLarge, limit)
			}
			b = append(b, make([]byte, max(len(b), 512))...)
			*buf = b
		}
		k, err := unix.Read(fd, b[n:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EISDIR) {
				return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
			}
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		n += k
		if k == 0 || n < len(b) {
			return b[:n], nil
		}
	}
}
