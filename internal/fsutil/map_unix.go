//go:build unix

package fsutil

import (
	"os"
	"syscall"
)

// mapRange maps [off, off+n) of f read-only: the mapping starts at the
// page that holds off.
func mapRange(f *os.File, off, n int64) ([]byte, func() error, error) {
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	m, err := syscall.Mmap(int(f.Fd()), start, int(off-start+n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return m[off-start:], func() error { return syscall.Munmap(m) }, nil
}
