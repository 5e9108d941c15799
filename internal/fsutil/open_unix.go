//go:build unix

package fsutil

import (
	"io/fs"
	"os"
	"time"

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

func openPrivate(path string, flag int) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(FileMode))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				err = ErrSymlink
			case !fi.Mode().IsRegular():
				err = notRegular(fi.Mode()) // a FIFO without a reader (ENXIO), a socket
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(modeOf(uint32(st.Mode)))}
	}
	// A regular file: back to blocking, so that os.NewFile leaves it out
	// of the runtime's poller, as OpenFile does.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// modeOf maps a stat mode's file type to fs.FileMode's.
func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

func setModTime(f *os.File, t time.Time) error {
	tv := unix.NsecToTimeval(t.UnixNano())
	if err := unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv}); err != nil {
		return &fs.PathError{Op: "futimes", Path: f.Name(), Err: err}
	}
	return nil
}
