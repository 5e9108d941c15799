package fsutil

import (
	"errors"
	"os"
	"sync"
)

// SyncFiles makes files written with WriteFileUnsynced durable: it fsyncs
// every file, a few at a time (concurrent fsyncs share journal commits on
// ext4 and xfs, so a thousand files cost far less than a thousand commits),
// then each directory once. Files that no longer exist are skipped: they
// were replaced or removed since, which their directory's fsync records.
func SyncFiles(files, dirs []string) error {
	const workers = 16
	var wg sync.WaitGroup
	errs := make([]error, workers)
	next := make(chan string)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for path := range next {
				if err := syncFile(path); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}(w)
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, d := range dirs {
		if err := SyncDir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
