//go:build unix

package main

import (
	"os"
	"syscall"
)

// fsync is fsync(2) alone: on macOS it does not flush the drive's cache
// (os.File.Sync there is F_FULLFSYNC, so it is not used).
func fsync(f *os.File) error {
	return syscall.Fsync(int(f.Fd()))
}
