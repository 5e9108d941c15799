package ccm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"ccm/internal/fsutil"
)

// fsNotDir is returned by stat when a path component is a file (a blob
// probed under a fan-out directory that does not exist as one).
var fsNotDir = syscall.ENOTDIR

// lock takes the store lock, shared for writers and readers that update
// metadata, exclusive for prune. flock locks vanish with their process, so
// a crashed ccm never leaves the store locked.
func (s *Store) lock(ctx context.Context, exclusive bool) (*fsutil.Lock, error) {
	if err := s.ensureLayout(); err != nil {
		return nil, err
	}
	l, err := fsutil.LockFile(ctx, s.path(lockFile), exclusive, s.lockWait())
	if err != nil {
		return nil, s.lockErr(err)
	}
	return l, nil
}

// lockErr turns a lock timeout into ErrLocked with a hint.
func (s *Store) lockErr(err error) error {
	if errors.Is(err, fsutil.ErrLockTimeout) {
		return fmt.Errorf("%w: %s still held after %s (a prune or purge is running; try again later or raise --lock-wait)",
			ErrLocked, s.path(lockFile), s.lockWait())
	}
	return err
}

// Hold takes a shared lock on the store and keeps it until release is
// called. A purge holds it from its first Put until its rewritten
// transcript is in place, so that no prune can delete a blob the purge
// deduplicated against before the transcript that references it exists.
// Put and the other operations take their own shared lock as well, which
// never conflicts with a held shared lock. release is safe to call twice.
func (s *Store) Hold(ctx context.Context) (release func(), err error) {
	l, err := s.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// LockExclusive takes the store lock exclusively: no Put, Get access
// update, pin change or Hold can run until unlock. Prune uses it.
func (s *Store) LockExclusive(ctx context.Context) (unlock func(), err error) {
	if !s.Exists() {
		return nil, fmt.Errorf("%w at %s", ErrNoStore, s.root)
	}
	l, err := s.lock(ctx, true)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// LockShared takes the store lock shared without creating anything, for
// readers that must see a consistent store (a prune dry run). When the
// store has no lock file yet, nobody can hold it and no lock is needed.
func (s *Store) LockShared(ctx context.Context) (unlock func(), err error) {
	l, err := fsutil.LockExisting(ctx, s.path(lockFile), false, s.lockWait())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return func() {}, nil
		}
		return nil, s.lockErr(err)
	}
	return func() { l.Unlock() }, nil
}

// lockMeta serializes read-modify-write of metadata files: in-process by a
// mutex (so goroutines queue instead of polling a flock), across processes
// by an exclusive flock on meta.lock. Without it, a pin set by one process
// could be lost to an access-time update written by another.
func (s *Store) lockMeta(ctx context.Context) (func(), error) {
	s.metaMu.Lock()
	l, err := fsutil.LockFile(ctx, s.path(metaLock), true, s.lockWait())
	if err != nil {
		s.metaMu.Unlock()
		return nil, s.lockErr(err)
	}
	return func() { l.Unlock(); s.metaMu.Unlock() }, nil
}
