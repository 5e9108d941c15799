package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// HoldOpenForWriting starts a process that holds the file at path open
// for writing (a descriptor it inherits; it writes nothing) until the
// test ends, as a writer other than Claude Code would, and returns its
// process id. It skips the test where no such process can be started.
func HoldOpenForWriting(t testing.TB, path string) int {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Skipf("cannot start a process to hold %s open: %v", path, err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	return child.Process.Pid
}
