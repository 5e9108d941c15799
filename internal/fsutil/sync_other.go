//go:build !linux && !darwin

package fsutil

import (
	"fmt"
	"os"
)

// Sync makes what was written to f durable: fsync(2), or FlushFileBuffers
// on Windows, which also flushes the drive's cache.
func Sync(f *os.File) error {
	return f.Sync()
}

// syncNoBarrier is Sync for a file of a batch that SyncFiles makes
// durable.
func syncNoBarrier(f *os.File) error {
	return f.Sync()
}

// SyncFS is not available here: it returns an error wrapping
// ErrNoSyncFS, and the caller syncs file by file.
func SyncFS(path string) error {
	return fmt.Errorf("%s: %w", path, ErrNoSyncFS)
}
