package fsutil

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sync makes what was written to f durable. On macOS fsync(2) only hands
// the data to the drive, whose cache a power loss empties; F_FULLFSYNC
// also makes the drive write its cache out. A filesystem that does not
// support it (SMB, some FUSE and network filesystems) gets fsync instead,
// said once through SetNotify.
func Sync(f *os.File) error {
	return control(f, fullSync)
}

// syncNoBarrier is fsync without the drive flush, for the files of a
// batch: SyncFiles ends with an F_FULLFSYNC, which writes out the drive's
// whole cache (not only one file's blocks), so one flush covers them all.
func syncNoBarrier(f *os.File) error {
	return control(f, fsync)
}

// control runs sync on f's descriptor and names f in its error.
func control(f *os.File, sync func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = sync(int(fd)) }); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: serr}
	}
	return nil
}

func fullSync(fd int) error {
	for {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.ENOTSUP, unix.EOPNOTSUPP, unix.EINVAL, unix.ENOTTY:
			noteOnce("fullfsync", fmt.Sprintf("the filesystem does not support F_FULLFSYNC (%v): syncing with fsync, which may leave the last writes in the drive's cache", err))
			return fsync(fd)
		default:
			return err
		}
	}
}

func fsync(fd int) error {
	for {
		err := unix.Fsync(fd)
		if err != unix.EINTR {
			return err
		}
	}
}

// SyncFS is not available on macOS (sync(2) returns before the data is
// written): it returns an error wrapping ErrNoSyncFS, and the caller
// syncs file by file.
func SyncFS(path string) error {
	return fmt.Errorf("%s: %w", path, ErrNoSyncFS)
}
