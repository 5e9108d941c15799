package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrLockTimeout is returned when a lock could not be taken within the
// allowed wait because another process holds it.
var ErrLockTimeout = errors.New("lock held by another process")

// Lock is a held lock on a sidecar lock file: flock(2) on Unix,
// LockFileEx on Windows. Both belong to the open file and vanish when the
// process dies, so there are no stale locks to clean up.
type Lock struct {
	f *os.File
}

// LockFile takes a shared (exclusive=false) or exclusive lock on path,
// creating the file (0600) and its directory (0700) if needed. It retries
// until wait has passed or ctx is done; then it returns an error wrapping
// ErrLockTimeout (or ctx's error) that names the lock file. wait <= 0 means
// a single try.
func LockFile(ctx context.Context, path string, exclusive bool, wait time.Duration) (*Lock, error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := OpenPrivate(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	return lockOpened(ctx, f, path, exclusive, wait)
}

// Flock takes a lock on f, an open lock file named path, and retries like
// LockFile; unlike it, it neither opens nor closes f. A writer that locks
// one file many times in a row keeps it open and pairs Flock with Funlock,
// two system calls instead of seven per round.
func Flock(ctx context.Context, f *os.File, path string, exclusive bool, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	delay := 2 * time.Millisecond
	for {
		busy, err := tryLock(f, exclusive)
		if err != nil {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if !busy {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s: %w (waited %s)", path, ErrLockTimeout, wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
}

// LockExisting is LockFile for a lock file that must already exist: it
// creates nothing (a dry run must not change the directory it inspects)
// and returns an error wrapping fs.ErrNotExist when the file is missing.
func LockExisting(ctx context.Context, path string, exclusive bool, wait time.Duration) (*Lock, error) {
	f, err := OpenPrivate(path, os.O_RDONLY) // flock works on a read-only descriptor
	if err != nil {
		return nil, err
	}
	return lockOpened(ctx, f, path, exclusive, wait)
}

// lockOpened flocks an open file, retrying until wait has passed; it closes
// f on failure.
func lockOpened(ctx context.Context, f *os.File, path string, exclusive bool, wait time.Duration) (*Lock, error) {
	if err := Flock(ctx, f, path, exclusive, wait); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock. It is safe to call on a nil Lock and twice.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := release(l.f)
	l.f = nil
	return err
}
