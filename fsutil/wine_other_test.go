//go:build !windows

package fsutil

// noPOSIXRename is false on Unix: rename(2) replaces an open file.
func noPOSIXRename() bool { return false }
