//go:build !linux

package agent

import "os/exec"

// stopWithParent: only Linux kills a child with its parent; elsewhere the
// end of the helper's stdin cancels its request and stops it.
func stopWithParent(*exec.Cmd) {}
