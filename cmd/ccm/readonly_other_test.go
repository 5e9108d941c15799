//go:build !linux

package main

import (
	"os"
	"runtime"
	"testing"
)

// readOnly makes dir read-only for this process by its permission bits,
// which stop neither root nor anyone on Windows: there the test is
// skipped, saying why.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("permission bits cannot make a folder read-only here (root, or Windows)")
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
}
