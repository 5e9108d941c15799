package ui

import (
	"strings"
	"testing"
)

func render(t *testing.T, tb *Table, width int) string {
	t.Helper()
	var b strings.Builder
	if err := tb.Write(&b, width); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTableAligns: left and right columns, a header, two-space gaps and
// no trailing spaces.
func TestTableAligns(t *testing.T) {
	tb := NewTable(Col{Name: "PROJECT"}, Col{Name: "SIZE", Right: true}, Col{Name: "TITLE"})
	tb.Add("~/a", "1.0 KB", "first")
	tb.Add("~/longer/project", "12.0 MB", "")
	want := "" +
		"PROJECT              SIZE  TITLE\n" +
		"~/a                1.0 KB  first\n" +
		"~/longer/project  12.0 MB\n"
	if got := render(t, tb, 0); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTableNoHeader: columns without names write no header line.
func TestTableNoHeader(t *testing.T) {
	tb := NewTable(Col{}, Col{Right: true})
	tb.Add("a", "1")
	tb.Add("bbb", "22")
	if got, want := render(t, tb, 0), "a     1\nbbb  22\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestTableFitsWidth: the widest shrinking column gives up characters
// from its middle until the line fits; fixed columns keep their width.
// PATH (40) and TITLE (23) with ID (8) and two gaps are 75 cells: PATH
// goes down to 23, then both to 14 each, 40 in all; each keeps 6 cells of
// its start and 7 of its end around the ellipsis.
func TestTableFitsWidth(t *testing.T) {
	tb := NewTable(Col{Name: "ID"}, Col{Name: "PATH", Shrink: true}, Col{Name: "TITLE", Shrink: true})
	tb.Add("58e50d6c", "/Users/me/src/github.com/example/project", "refactor the pack index")
	got := render(t, tb, 40)
	want := "" +
		"ID        PATH            TITLE\n" +
		"58e50d6c  /Users…project  refact…k index\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if Width(line) > 40 {
			t.Errorf("line %q is %d cells, over 40", line, Width(line))
		}
	}
}

// TestTableFitStopsAtMin: a width too small for the fixed columns and the
// minimum of the shrinking ones runs over rather than losing the ids.
func TestTableFitStopsAtMin(t *testing.T) {
	tb := NewTable(Col{Name: "SESSION"}, Col{Name: "PATH", Shrink: true, Min: 6})
	tb.Add("58e50d6c-1111-2222-3333-444455556666", "/a/very/long/path/to/somewhere")
	got := render(t, tb, 10)
	want := "" +
		"SESSION                               PATH\n" +
		"58e50d6c-1111-2222-3333-444455556666  /a…ere\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTableASCII: with ASCII the ellipsis is three dots and bytes that
// are not UTF-8 become '?'; control characters become spaces either way.
func TestTableASCII(t *testing.T) {
	tb := NewTable(Col{Name: "NAME", Shrink: true, Min: 8})
	tb.ASCII = true
	tb.Add("abcdefghijklmnop")
	tb.Add("bad\xffname\n\x1b[2J")
	got := render(t, tb, 8)
	want := "NAME\nab...nop\nba...[2J\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	tb.ASCII = false
	if got, want := render(t, tb, 0), "NAME\nabcdefghijklmnop\nbad\uFFFDname  [2J\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestWidthWide: wide characters take two cells, combining marks none, and
// shortening never splits a wide character over the limit.
func TestWidthWide(t *testing.T) {
	if got := Width("日本語"); got != 6 {
		t.Errorf("Width(日本語) = %d, want 6", got)
	}
	if got := Width("e\u0301"); got != 1 {
		t.Errorf("Width(e+combining acute) = %d, want 1", got)
	}
	s := Shorten("日本語のタイトルです", 9, false)
	if Width(s) > 9 {
		t.Errorf("Shorten = %q, %d cells, over 9", s, Width(s))
	}
	if s != "日本…です" {
		t.Errorf("Shorten = %q", s)
	}
	if got := Shorten("abcdef", 2, false); got != "ab" {
		t.Errorf("Shorten to 2 = %q, want the start", got)
	}
	if got := Shorten("abc", 5, true); got != "abc" {
		t.Errorf("Shorten of a short string = %q", got)
	}
}
