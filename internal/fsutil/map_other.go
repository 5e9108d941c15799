//go:build !unix

package fsutil

import (
	"errors"
	"os"
)

// mapRange cannot map here: MapRegion reads the range instead.
func mapRange(f *os.File, off, n int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("no mmap")
}
