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

// fitColumns drops the columns named in optional, in that order, until
// the narrowest the table can be (shrinking columns at their Min, the
// others at their widest cell) fits width; width 0 keeps them all. A
// table that still does not fit runs over: the terminal wraps it.
func fitColumns(width int, cols []ui.Col, rows [][]string, optional []int) ([]ui.Col, [][]string) {
	if width <= 0 {
		return cols, rows
	}
	dropped := map[int]bool{}
	narrowest := func() int {
		n, kept := 0, 0
		for i, c := range cols {
			if dropped[i] {
				continue
			}
			w := ui.Width(c.Name)
			for _, r := range rows {
				if i < len(r) {
					w = max(w, ui.Width(r[i]))
				}
			}
			if c.Shrink {
				m := c.Min
				if m == 0 {
					m = ui.DefaultMin
				}
				w = min(w, m)
			}
			n += w
			kept++
		}
		return n + 2*max(kept-1, 0)
	}
	for _, i := range optional {
		if narrowest() <= width {
			break
		}
		dropped[i] = true
	}
	var keepCols []ui.Col
	for i, c := range cols {
		if !dropped[i] {
			keepCols = append(keepCols, c)
		}
	}
	keepRows := make([][]string, len(rows))
	for j, r := range rows {
		for i, cell := range r {
			if !dropped[i] {
				keepRows[j] = append(keepRows[j], cell)
			}
		}
	}
	return keepCols, keepRows
}

// fittedTable is a table whose columns named optional are dropped, in
// that order, where the terminal is too narrow for them (fitColumns).
func fittedTable(g globalOptions, cols []ui.Col, rows [][]string, optional ...int) *ui.Table {
	cols, rows = fitColumns(tableWidth(g), cols, rows, optional)
	t := ui.NewTable(cols...)
	for _, r := range rows {
		t.Add(r...)
	}
	return t
}
