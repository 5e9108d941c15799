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

	"ccm/internal/fsutil"
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

// TestHookFIFOTranscript: the built binary, given a FIFO as the
// transcript of a Stop and a PreCompact, answers at once and exits 0
// (the hooks' own tests cover every path field; this one runs the
// process Claude Code runs).
func TestHookFIFOTranscript(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "s1.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"Stop", "PreCompact"} {
		cmd := exec.Command(bin, "hook", event)
		cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+dir, "CCM_HOME="+filepath.Join(dir, "ccm"))
		cmd.Stdin = strings.NewReader(`{"session_id":"s1","hook_event_name":"` + event + `","transcript_path":"` + fifo + `","cwd":"` + dir + `"}`)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("%s: %v, output %q", event, err, out)
		}
		log, _ := fsutil.ReadRegular(filepath.Join(dir, "ccm", "logs", "hooks.log"), 1<<20)
		if !bytes.Contains(log, []byte("it is a FIFO")) || bytes.Contains(log, []byte("gave up")) {
			t.Errorf("%s: log %s", event, log)
		}
	}
}
