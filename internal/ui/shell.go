package ui

import (
	"runtime"
	"strings"
)

// ShellQuote quotes a path or word for the shell a printed command is
// pasted into: as it is when it needs no quoting, else in single quotes
// for a POSIX shell, or double quotes on Windows.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%=") == "" {
		return s
	}
	if runtime.GOOS == "windows" {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
