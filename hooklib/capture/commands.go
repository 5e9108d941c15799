package capture

import (
	"path/filepath"
	"strings"
)

// trivialWords are the commands claude-context-manager's Bash interceptor let
// through untouched (docs/earlier-tools.md, and its documentation's list):
// their output is small or the model asked for exactly what it shows.
var trivialWords = map[string]bool{
	"ls": true, "pwd": true, "whoami": true, "id": true, "date": true,
	"echo": true, "printf": true, "cd": true, "mkdir": true, "touch": true,
	"rm": true, "mv": true, "cp": true, "which": true, "type": true,
	"hash": true, "head": true, "tail": true, "wc": true, "stat": true,
	"test": true, "[": true, "true": true, "false": true, "exit": true,
	"pushd": true, "popd": true, "export": true, "set": true, "unset": true,
	"alias": true,
}

// trivialGit are the git subcommands on that list.
var trivialGit = map[string]bool{"status": true, "branch": true, "remote": true, "config": true}

// Trivial reports whether a Bash command is one whose output always
// passes through: a single command (no &&, ;, | or newline) from
// claude-context-manager's list, `git status|branch|remote|config`, `git log -N`,
// `command -v`, or only VAR=value assignments.
func Trivial(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || strings.ContainsAny(cmd, ";|\n`") || strings.Contains(cmd, "&&") || strings.Contains(cmd, "$(") {
		return false
	}
	f := strings.Fields(cmd)
	i := 0
	for i < len(f) && isAssignment(f[i]) {
		i++
	}
	if i == len(f) {
		return true // only assignments
	}
	f = f[i:]
	switch w := f[0]; {
	case trivialWords[w]:
		return true
	case w == "command" && len(f) > 1 && f[1] == "-v":
		return true
	case w == "git" && len(f) > 1:
		if trivialGit[f[1]] {
			return true
		}
		if f[1] == "log" && len(f) == 3 && len(f[2]) > 1 && f[2][0] == '-' && allDigits(f[2][1:]) {
			return true
		}
	}
	return false
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// twoWord are programs whose first argument names what runs (the earlier
// tool's command cache keyed these by two words).
var twoWord = map[string]bool{
	"git": true, "gh": true, "go": true, "docker": true, "kubectl": true, "npm": true,
	"pnpm": true, "yarn": true, "cargo": true, "make": true, "python": true, "python3": true,
	"pip": true, "uv": true, "helm": true, "terraform": true, "systemctl": true, "journalctl": true,
	"apt": true, "apt-get": true, "brew": true, "bazel": true, "npx": true, "ccm": true,
}

// CommandPattern groups Bash commands for statistics: the first program
// (path and VAR= assignments left out; sudo, env, time and nohup skipped),
// plus its subcommand for programs like git or go: "git log", "go test",
// "cat", "find".
func CommandPattern(cmd string) string {
	f := strings.Fields(cmd)
	for len(f) > 0 && (isAssignment(f[0]) || f[0] == "sudo" || f[0] == "env" || f[0] == "time" || f[0] == "nohup") {
		f = f[1:]
	}
	if len(f) == 0 {
		return "(empty)"
	}
	w := filepath.Base(f[0])
	if twoWord[w] && len(f) > 1 && !strings.HasPrefix(f[1], "-") && !strings.ContainsAny(f[1], "|;&<>") {
		return w + " " + f[1]
	}
	return w
}
