package ui

import (
	"runtime"
	"testing"
)

// ShellQuote leaves a plain path as it is and quotes anything a shell
// would split or expand, a quote inside included.
func TestShellQuote(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the POSIX forms; Windows wraps in double quotes")
	}
	for in, want := range map[string]string{
		"/home/me/src/app-2.1": "/home/me/src/app-2.1",
		"/tmp/my project":      "'/tmp/my project'",
		"/tmp/it's":            `'/tmp/it'\''s'`,
		"/tmp/$HOME":           "'/tmp/$HOME'",
		"":                     "''",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
