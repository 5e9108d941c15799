package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ClaudeProcesses lists the running Claude Code clients this user may
// inspect: processes whose command line runs claude (the native binary, a
// claude launcher, or node on @anthropic-ai/claude-code). ok is false where
// /proc cannot tell. Claude Code opens its transcript by path for each
// line, so between two lines no descriptor shows it is running; its
// process does.
func ClaudeProcesses() (procs []Process, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		ok = true
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !runsClaude(args) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		procs = append(procs, Process{Pid: pid, Cwd: cwd, Args: args})
	}
	return procs, ok
}
