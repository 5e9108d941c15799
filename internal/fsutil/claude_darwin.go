package fsutil

import "os"

// ClaudeProcesses lists the running Claude Code clients this user may
// inspect: processes whose command line runs claude (the native binary, a
// claude launcher, or node on @anthropic-ai/claude-code), with their
// working directories, read with sysctl and proc_info(2). ok is false
// where those cannot be read right (see probe). Claude Code opens its
// transcript by path for each line, so between two lines no descriptor
// shows it is running; its process does.
func ClaudeProcesses() (procs []Process, ok bool) {
	probe()
	if !probeCommands {
		return nil, false
	}
	all, err := processes()
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	for _, pid := range all {
		if pid == self {
			continue
		}
		args := processArgs(pid)
		if len(args) == 0 || !runsClaude(args) {
			continue
		}
		procs = append(procs, Process{Pid: pid, Cwd: processCwd(pid), Args: args})
	}
	return procs, true
}
