package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestHookStartIsLean: Claude Code starts `ccm hook` on every tool call,
// and every package's initialisation runs in every such process whether
// the hook needs it or not. ccm's own packages build their tables,
// templates and regexps on first use; an init that allocates more than
// 16 KB (a parsed template took 136 KB, a word list 25 KB; the hook's own
// tables, hooklib's variables and handlers, take 9 KB) fails here, by the
// runtime's own account (GODEBUG=inittrace=1), not by a clock.
func TestHookStartIsLean(t *testing.T) {
	bin := builtBinary(t)
	cmd := exec.Command(bin, "hook", "PreToolUse")
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1", "CCM_HOOKS_DISABLED=1")
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Read"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ccm hook: %v: %s", err, stderr.String())
	}
	seen := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init ccm/purge @0.5 ms, 0.012 ms clock, 1344 bytes, 12 allocs
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "init" || !strings.HasPrefix(f[1], "ccm/") && f[1] != "main" {
			continue
		}
		seen++
		if n, err := strconv.Atoi(f[7]); err == nil && n > 16<<10 {
			t.Errorf("%s allocates %d bytes at start-up: build it on first use", f[1], n)
		}
	}
	if seen == 0 {
		t.Fatalf("no init of ccm's packages traced: %.300s", stderr.String())
	}
}
