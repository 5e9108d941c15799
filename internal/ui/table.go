// Table: this file lays out rows of cells in aligned columns for a
// terminal, the one table writer of every command that prints one.
//
// Columns are separated by two spaces. Widths are counted in terminal
// cells (a wide East Asian character or emoji takes two, a combining mark
// none). To fit a width, the columns marked Shrink lose characters from
// the middle of their long cells ("~/src/very/…/deep/project"), the widest
// first, never below their Min; the other columns keep their width, so a
// table that still does not fit runs over (the terminal wraps it). Cells
// are made safe to print: control characters (a newline in a title, an
// escape sequence in a file name) become spaces and bytes that are not
// UTF-8 become U+FFFD, or '?' with ASCII.

package ui

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// Col describes one column of a Table.
type Col struct {
	// Name is the column's header. A table none of whose columns has a
	// name is written without a header line.
	Name string
	// Right aligns the column to the right (numbers, sizes).
	Right bool
	// Shrink lets Write shorten the column's long cells in the middle
	// to fit the width (paths, titles).
	Shrink bool
	// Min is the narrowest a shrinking column is cut to, in cells;
	// 0 means DefaultMin.
	Min int
}

// DefaultMin is the narrowest a shrinking column gets when its Col sets no
// Min: room for an 8-character id and its ellipsis.
const DefaultMin = 10

// gap is the space between two columns.
const gap = "  "

// Table collects rows and writes them aligned. The zero value is not
// usable: make one with NewTable.
type Table struct {
	cols []Col
	rows [][]string
	// ASCII shortens with "..." instead of "…" and shows bytes that are
	// not UTF-8 as '?', for terminals that cannot show Unicode.
	ASCII bool
}

// NewTable starts a table with the given columns.
func NewTable(cols ...Col) *Table {
	return &Table{cols: cols}
}

// Add appends a row. Missing cells are empty; cells past the last column
// are dropped.
func (t *Table) Add(cells ...string) {
	row := make([]string, len(t.cols))
	for i := range min(len(cells), len(row)) {
		row[i] = cells[i]
	}
	t.rows = append(t.rows, row)
}

// Len is the number of rows added.
func (t *Table) Len() int { return len(t.rows) }

// Write writes the header line (when any column has a name) and the rows,
// fitted to width cells; width <= 0 fits nothing and writes every cell
// whole. Lines carry no trailing spaces.
func (t *Table) Write(w io.Writer, width int) error {
	if len(t.cols) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(t.rows)+1)
	header := false
	for _, c := range t.cols {
		header = header || c.Name != ""
	}
	if header {
		names := make([]string, len(t.cols))
		for i, c := range t.cols {
			names[i] = c.Name
		}
		rows = append(rows, names)
	}
	for _, r := range t.rows {
		clean := make([]string, len(r))
		for i, c := range r {
			clean[i] = t.sanitize(c)
		}
		rows = append(rows, clean)
	}
	widths := t.fit(rows, width)
	bw := bufio.NewWriter(w)
	var line []byte
	for _, r := range rows {
		line = t.appendLine(line[:0], r, widths)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// fit returns each column's width: the widest cell, less what the
// shrinking columns give up so the line fits width.
func (t *Table) fit(rows [][]string, width int) []int {
	widths := make([]int, len(t.cols))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], Width(c))
		}
	}
	if width <= 0 {
		return widths
	}
	total := len(gap) * (len(widths) - 1)
	for _, n := range widths {
		total += n
	}
	for excess := total - width; excess > 0; excess-- {
		best := -1
		for i, c := range t.cols {
			if c.Shrink && widths[i] > t.min(i) && (best < 0 || widths[i] > widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]--
	}
	return widths
}

func (t *Table) min(i int) int {
	if m := t.cols[i].Min; m > 0 {
		return m
	}
	return DefaultMin
}

// appendLine lays out one row.
func (t *Table) appendLine(line []byte, r []string, widths []int) []byte {
	last := len(r) - 1
	for last > 0 && r[last] == "" && !t.cols[last].Right {
		last-- // no trailing gap for empty cells at the end
	}
	for i := 0; i <= last; i++ {
		if i > 0 {
			line = append(line, gap...)
		}
		c := r[i]
		n := Width(c)
		if n > widths[i] {
			c = t.shorten(c, widths[i])
			n = Width(c)
		}
		pad := widths[i] - n
		switch {
		case t.cols[i].Right:
			line = appendSpaces(line, pad)
			line = append(line, c...)
		case i == last:
			line = append(line, c...)
		default:
			line = append(line, c...)
			line = appendSpaces(line, pad)
		}
	}
	return append(line, '\n')
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// Shorten cuts s to at most width cells by replacing its middle with an
// ellipsis ("…", or "..." with ascii), keeping a little more of the end
// than the start (a file name, a path's last folders). A width too small
// for the ellipsis and a character each side keeps only the start.
func Shorten(s string, width int, ascii bool) string {
	if Width(s) <= width {
		return s
	}
	dots := "…"
	if ascii {
		dots = "..."
	}
	room := width - Width(dots)
	if room < 2 {
		return cutCells(s, max(width, 0))
	}
	head := room / 2
	tail := room - head
	return cutCells(s, head) + dots + lastCells(s, tail)
}

func (t *Table) shorten(s string, width int) string { return Shorten(s, width, t.ASCII) }

// cutCells is the longest start of s at most n cells wide.
func cutCells(s string, n int) string {
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > n {
			return s[:i]
		}
		w += rw
	}
	return s
}

// lastCells is the longest end of s at most n cells wide.
func lastCells(s string, n int) string {
	w := 0
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		rw := runeWidth(r)
		if w+rw > n {
			break
		}
		w += rw
		i -= size
	}
	// A combining mark without its base character would join the
	// ellipsis: drop it.
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if runeWidth(r) != 0 {
			break
		}
		i += size
	}
	return s[i:]
}

// sanitize makes a cell safe for one line of a terminal.
func (t *Table) sanitize(s string) string {
	bad := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || isControl(r) {
			bad = true
			break
		}
		i += size
	}
	if !bad {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if t.ASCII {
				b.WriteByte('?')
			} else {
				b.WriteRune(utf8.RuneError)
			}
		case isControl(r):
			b.WriteByte(' ')
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }

// Width is the number of terminal cells s takes: one a character, two for
// the wide characters of East Asian scripts and most emoji, none for
// combining marks. A byte that is not UTF-8 counts one (it is shown as one
// replacement character).
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is one character's cells. The ranges are the wide and
// zero-width blocks that occur in titles and paths; rarer cases count one.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case r <= 0x36f, r >= 0x200b && r <= 0x200f, r >= 0xfe00 && r <= 0xfe0f:
		return 0 // combining diacritics, zero-width spaces and joiners, variation selectors
	case r >= 0x1100 && r <= 0x115f,
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff,
		r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
