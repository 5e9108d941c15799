package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// ErrNoSyncFS is returned by SyncFS where the system or the filesystem
// cannot flush a whole filesystem at once; the caller syncs file by file
// instead (SyncFiles).
var ErrNoSyncFS = errors.New("cannot sync the whole filesystem here")

// SyncDir makes a rename or create inside dir survive a crash: it syncs
// the directory the way Sync syncs a file. Filesystems that refuse to
// sync a directory are let be (the rename is still atomic), and on
// Windows, which cannot sync a directory, Rename writes through instead.
func SyncDir(dir string) error {
	return syncDir(dir)
}

// SyncPath syncs the file at path with Sync, opening it as the system
// needs (for reading on Unix; for writing on Windows, whose flush needs
// it). A file that no longer exists is skipped.
func SyncPath(path string) error {
	return syncFile(path, Sync)
}

// OpenToSync opens the file at path the way SyncPath does (for reading on
// Unix, so a read-only file can be synced), without blocking on a FIFO
// planted there.
func OpenToSync(path string) (*os.File, error) {
	return OpenFile(path, syncOpenFlag|syscall.O_NONBLOCK, 0)
}

// syncFile opens path and syncs it with sync; a file that no longer exists
// is skipped (replaced or removed since: its directory's sync records
// that).
func syncFile(path string, sync func(*os.File) error) error {
	f, err := OpenFile(path, syncOpenFlag, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	err = sync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
