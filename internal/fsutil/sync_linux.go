package fsutil

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sync makes what was written to f durable: fsync(2), which on Linux
// reaches the disk (the kernel flushes the drive's cache).
func Sync(f *os.File) error {
	return f.Sync()
}

// syncNoBarrier is Sync for a file of a batch that SyncFiles makes
// durable; on Linux that is the same fsync.
func syncNoBarrier(f *os.File) error {
	return f.Sync()
}

// fuseMagic is the statfs type of FUSE filesystems: syncfs(2) returns
// success there without asking the filesystem's server to sync anything,
// so it is not trusted.
const fuseMagic = 0x65735546

// SyncFS flushes everything written to the filesystem that holds path
// (syncfs(2)): one call instead of an fsync per file when a batch has
// written thousands of them. It also flushes other programs' pending
// writes on that filesystem, so it suits bulk operations, not hot paths.
// On a filesystem where syncfs does not reach the storage (FUSE) it
// returns an error wrapping ErrNoSyncFS, said once through SetNotify.
func SyncFS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Type == fuseMagic {
		noteOnce("syncfs", fmt.Sprintf("%s: the filesystem does not flush with syncfs; syncing file by file", path))
		return fmt.Errorf("%s: %w", path, ErrNoSyncFS)
	}
	return unix.Syncfs(int(f.Fd()))
}
