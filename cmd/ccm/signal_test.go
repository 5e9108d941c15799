//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSIGTERMEndsABlockedCommand: a command blocked in a read that no
// context check reaches (stdin that never closes) still ends after
// SIGTERM, with exit status 130 and one line.
func TestSIGTERMEndsABlockedCommand(t *testing.T) {
	bin := builtBinary(t)
	cmd := exec.Command(bin, "compress", "-")
	stdin, err := cmd.StdinPipe() // never closed until the end
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM before ccm catches it would kill it by the default action:
	// wait until it reads its stdin, after its handlers are in place.
	for !readingPipe(t, cmd.Process.Pid) {
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			t.Fatalf("ccm exited before the signal: %v", err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("ccm after SIGTERM: %v, want exit status 130; stderr %q", err, stderr.String())
	}
	if got := strings.TrimSpace(stderr.String()); got != "ccm: interrupted" {
		t.Errorf("stderr %q, want one line 'ccm: interrupted'", got)
	}
}

// readingPipe reports whether a thread of process pid waits in a read of
// a pipe (its wchan, in /proc).
func readingPipe(t *testing.T, pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	if err != nil || len(tasks) == 0 {
		t.Skipf("no /proc to tell when ccm reads its stdin")
	}
	for _, w := range tasks {
		if b, err := os.ReadFile(w); err == nil && strings.Contains(string(b), "pipe_read") {
			return true
		}
	}
	return false
}
