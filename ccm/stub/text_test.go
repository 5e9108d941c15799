package stub

import "testing"

// TestValueLines: the lines of a stored value's text, as cache get pages
// it; the counts are worked out by hand from the texts.
func TestValueLines(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{
		{`"a\nb\n"`, 2},                         // two terminated lines
		{`"a\nb"`, 2},                           // the last one without its newline
		{`"one"`, 1},                            // no newline at all
		{`""`, 0},                               // nothing
		{`"ends in a backslash and n: \\n"`, 1}, // the text ends with \ and n, not a newline
		{`"ends in a backslash, then a newline: \\\n"`, 1},
		{`[{"type":"text","text":"x\ny\n"},{"type":"text","text":"z"}]`, 4}, // x, y, the empty line between the blocks, z
		{`[{"type":"text","text":"only\n"}]`, 1},
		{`[{"type":"image","source":{}},{"type":"text","text":"a\nb"}]`, 1}, // not all text: its JSON, one \n escape
		{`{"stdout":"a\nb\nc"}`, 2},                                         // an object: its \n escapes
	} {
		if got := ValueLines([]byte(c.raw)); got != c.want {
			t.Errorf("ValueLines(%s) = %d, want %d", c.raw, got, c.want)
		}
	}
}

// TestValueText: a string decoded, text blocks joined by a newline,
// anything else not text.
func TestValueText(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`"a\n\"b\" é"`, "a\n\"b\" é", true},
		{` [{"type":"text","text":"x\n"},{"type":"text","text":"y"}] `, "x\n\ny", true},
		{`[{"type":"text","text":"x"},{"type":"image"}]`, "", false},
		{`[]`, "", false},
		{`{"text":"x"}`, "", false},
		{`"cut off \u12`, "", false},
	} {
		got, ok := ValueText([]byte(c.raw))
		if ok != c.ok || string(got) != c.want {
			t.Errorf("ValueText(%s) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}
