//go:build !unix

package main

import "os"

// fsync is the system's file sync (FlushFileBuffers on Windows).
func fsync(f *os.File) error {
	return f.Sync()
}
