package worklog

import "testing"

// Cut folds every run of white space (Unicode's too) to one space, trims
// the ends, and cuts on a rune boundary with "..." only when the folded
// text is longer than n.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  go   test\n\t./...  ", 20, "go test ./..."},
		{"go test ./...", 13, "go test ./..."},
		{"go test ./...", 12, "go test ./.." + "..."},
		{"a\u00a0b\u2003c", 10, "a b c"},
		{"abc déf", 5, "abc d..."},
		{"abc déf", 6, "abc d..."},
		{"abc déf", 7, "abc dé..."},
		{"abc    \n\n   def ghi", 7, "abc def..."},
		{"", 5, ""},
		{" \n\t ", 5, ""},
		{"abc", 0, "..."},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
