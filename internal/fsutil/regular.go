package fsutil

import (
	"fmt"
	"io"
)

// ReadRegular reads a whole file that must be a regular file of at most
// max bytes, as os.ReadFile would, but never blocks: a FIFO, socket or
// device at path fails with an error wrapping ErrNotRegular (OpenRegular),
// a larger file with an error that says so. Symlinks are followed. It is
// how a hook, or anything else that must not hang, reads a file named by
// input or found in a folder someone else may write to.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d read", path, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: grew past the %d bytes read", path, max)
	}
	return b, nil
}
