package hooklib

import (
	"fmt"
	"os"
	"os/exec"
)

// execCommand re-executes the test binary as n hook runs.
func execCommand(exe, claudeDir string, n int) *exec.Cmd {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOOKLIB_TEST_CLAUDE_DIR="+claudeDir, fmt.Sprintf("HOOKLIB_TEST_RUNS=%d", n),
		"CCM_HOOKS_DISABLED=", "CLAUDE_HOOKS_PASSTHROUGH=", "CCM_HOME=", "CONTEXT_REFRESH_ENABLED=true")
	return cmd
}
