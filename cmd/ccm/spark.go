package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"

	"ccm/internal/ui"
	"ccm/report"
)

// spark says how terminal charts are drawn: how wide, and whether in
// plain ASCII.
type spark struct {
	Width int
	ASCII bool
}

// sparkStyle fits charts to the terminal w writes to: its width ($COLUMNS
// or 80 when it is not a terminal), and ASCII when asked or when the locale
// cannot show Unicode.
func sparkStyle(w io.Writer, ascii bool) spark {
	width := 80
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if c, _, err := term.GetSize(int(f.Fd())); err == nil && c > 0 {
			width = c
		}
	} else if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		width = c
	}
	return spark{Width: width, ASCII: ascii || !report.UnicodeTerminal(os.Getenv)}
}

// printGrowth draws the context of every request as a sparkline against
// the 200k window (or the largest context, when larger).
func printGrowth(w io.Writer, contexts []int64, sp spark) {
	fmt.Fprintf(w, "\ncontext growth\n")
	if len(contexts) == 0 {
		fmt.Fprintf(w, "  no request records its usage\n")
		return
	}
	var peak int64
	for _, c := range contexts {
		peak = max(peak, c)
	}
	window := int64(200_000)
	if peak > window {
		window = 1_000_000
	}
	line := report.Sparkline(contexts, window, max(10, sp.Width-4), sp.ASCII)
	fmt.Fprintf(w, "  %s\n", line)
	per := ""
	if len(contexts) > len([]rune(line)) {
		per = fmt.Sprintf(", %.1f requests a column (each shows the largest)", float64(len(contexts))/float64(len([]rune(line))))
	}
	fmt.Fprintf(w, "  %s requests, first %s, peak %s, last %s tokens; full height is the %s-token window%s\n",
		ui.Count(len(contexts)), ui.Count(contexts[0]), ui.Count(peak), ui.Count(contexts[len(contexts)-1]), ui.Count(window), per)
}
