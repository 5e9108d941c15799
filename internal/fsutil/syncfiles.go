package fsutil

import (
	"context"
	"errors"
	"os"

	"ccm/internal/batch"
)

// SyncFiles makes files written with WriteFileUnsynced durable: it fsyncs
// every file, a few at a time (concurrent fsyncs share journal commits on
// ext4 and xfs, so a thousand files cost far less than a thousand commits),
// then syncs each directory once with Sync. On macOS the files get a plain
// fsync and the directories F_FULLFSYNC, whose drive flush covers every
// file before it. Files that no longer exist are skipped: they were
// replaced or removed since, which their directory's sync records.
func SyncFiles(files, dirs []string) error {
	const workers = 16
	errs := make([]error, len(files))
	batch.Run(context.Background(), len(files), workers, func(i int) {
		errs[i] = syncFile(files[i], syncNoBarrier)
	}, nil)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if len(dirs) == 0 && len(files) > 0 {
		// No directory to end with: the last file carries the barrier.
		return syncFile(files[len(files)-1], Sync)
	}
	for _, d := range dirs {
		if err := SyncDir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
