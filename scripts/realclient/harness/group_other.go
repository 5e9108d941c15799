//go:build !unix

package harness

import "os/exec"

// ownGroup does nothing here: the real-client checks run on Linux.
func ownGroup(*exec.Cmd) {}

// killGroup kills the client process itself.
func killGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}
