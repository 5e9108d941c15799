package agent

import (
	"os/exec"
	"syscall"
)

// stopWithParent has the kernel kill the helper when ccm dies, at once,
// even in the middle of a request (the end of its stdin stops it too, on
// every system, once the request it runs returns or fails).
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
