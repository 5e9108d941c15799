package main

import (
	"io"
	"os"

	"golang.org/x/term"

	"ccm/internal/ui"
)

// isTerminal reports whether w is a terminal. Progress bars and other
// decoration go only to terminals; cron and pipes get plain lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress returns the progress bars of long operations drawn on w, nil
// (no bar; every ui.Bars method is a no-op on nil) when w is not a
// terminal.
func newProgress(w io.Writer) *ui.Bars {
	if !isTerminal(w) {
		return nil
	}
	return ui.NewBars(w)
}
