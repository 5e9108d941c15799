package fsutil

import (
	"path/filepath"
	"strings"
)

// Process is a running Claude Code client as the system shows it.
type Process struct {
	Pid  int
	Cwd  string   // its working directory ("" when unreadable)
	Args []string // its command line
}

// runsClaude tells a Claude Code client's command line: claude itself, or
// an interpreter whose first argument is claude's script.
func runsClaude(args []string) bool {
	for i, a := range args {
		if i > 1 {
			break
		}
		if filepath.Base(a) == "claude" || strings.Contains(a, "@anthropic-ai/claude-code") {
			return true
		}
	}
	return false
}
