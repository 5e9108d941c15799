//go:build !linux

package testutil

import "errors"

// MountTmpfs is Linux-only: elsewhere the tests that need a full disk
// say so and skip.
func MountTmpfs(dir string, size int64) (unmount func(), err error) {
	return nil, errors.New("mounting a tmpfs is done on Linux only")
}
