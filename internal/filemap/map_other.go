//go:build !unix

package filemap

import (
	"errors"
	"os"
)

// mapRange cannot map here: Open reads the range instead.
func mapRange(f *os.File, off, n int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no mmap")
}
