//go:build !linux

package main

import "errors"

// mountTmpfs is Linux-only: elsewhere the scripts that need a full disk
// say so and skip.
func mountTmpfs(dir string, size int64) (unmount func(), err error) {
	return nil, errors.New("mounting a tmpfs is done on Linux only")
}
