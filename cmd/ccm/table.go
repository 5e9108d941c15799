package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"ccm/internal/ui"
)

// tableWidth is the width, in terminal cells, that the tables written to
// g's stdout are fitted to: $COLUMNS when it is a positive number, else
// the terminal's width; 0 (every cell whole) with --wide, or when stdout is
// not a terminal and $COLUMNS is not set (a pipe, a file, cron).
func tableWidth(g globalOptions) int {
	if g.Wide {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f, ok := g.Stdout.(*os.File); ok && g.Terminal {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// writeTable writes t to g's stdout, fitted to tableWidth, in plain ASCII
// where the terminal cannot show Unicode.
func writeTable(g globalOptions, t *ui.Table) error {
	return writeTableTo(g.Stdout, g, t)
}

func writeTableTo(w io.Writer, g globalOptions, t *ui.Table) error {
	t.ASCII = g.ASCII
	return t.Write(w, tableWidth(g))
}

// shortID is a session id as a table fitted to a terminal shows it: its
// first 8 characters, the prefix every command that takes a session id
// accepts. A table not fitted (--wide, a pipe) shows it whole.
func shortID(g globalOptions, id string) string {
	if len(id) <= 8 || tableWidth(g) == 0 {
		return id
	}
	return id[:8]
}
