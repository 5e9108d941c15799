//go:build windows

package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockLen is how many bytes from offset 0 a lock covers: all of them, as
// Go's own file locks do. Windows locks are mandatory (a locked range
// cannot be read by another handle), which is harmless for a lock file
// nobody reads.
const lockLen = ^uint32(0)

// tryLock takes a LockFileEx lock on f without waiting; busy reports that
// another handle holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (busy bool, err error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, lockLen, lockLen, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

// Funlock releases a lock Flock took.
func Funlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockLen, lockLen, new(windows.Overlapped))
}

// release ends a Lock. Windows releases a closed handle's locks only
// eventually, so the lock is released first.
func release(f *os.File) error {
	uerr := Funlock(f)
	if err := f.Close(); err != nil {
		return err
	}
	return uerr
}
