//go:build !linux && !darwin

package fsutil

// ClaudeProcesses cannot list Claude Code clients here (on Windows a
// process's working directory is not readable without reading its
// memory): ok is false, and callers take the cautious choice.
func ClaudeProcesses() (procs []Process, ok bool) {
	return nil, false
}
