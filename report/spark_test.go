package report

import "testing"

func TestSparkline(t *testing.T) {
	// Eight levels from 0 to 700 against a top of 799: one step a level.
	vals := []int64{0, 100, 200, 300, 400, 500, 600, 700}
	if got := Sparkline(vals, 799, 80, false); got != "▁▂▃▄▅▆▇█" {
		t.Errorf("unicode = %q", got)
	}
	if got := Sparkline(vals, 799, 80, true); got != "_.-~=+*#" {
		t.Errorf("ascii = %q", got)
	}
	// Four columns for eight values: each shows the larger of its pair.
	if got := Sparkline(vals, 799, 4, true); got != ".~+#" {
		t.Errorf("4 columns = %q", got)
	}
	// A value above top raises the scale: the largest is full height.
	if got := Sparkline([]int64{50, 1000}, 100, 10, true); got != "_#" {
		t.Errorf("over top = %q", got)
	}
	if got := Sparkline(nil, 100, 10, true); got != "" {
		t.Errorf("empty = %q", got)
	}
}

func TestBar(t *testing.T) {
	for _, c := range []struct {
		n, whole int64
		ascii    bool
		want     string
	}{
		{100, 100, false, "██████████"},
		{50, 100, false, "█████"},
		{55, 100, false, "█████▌"}, // 44 eighths: 5 blocks and a half (4/8)
		{1, 1000, false, "▏"},      // anything above zero shows
		{0, 100, false, ""},
		{50, 100, true, "#####"},
		{1, 1000, true, "#"},
	} {
		if got := Bar(c.n, c.whole, 10, c.ascii); got != c.want {
			t.Errorf("Bar(%d, %d, ascii %v) = %q, want %q", c.n, c.whole, c.ascii, got, c.want)
		}
	}
}

func TestUnicodeTerminal(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "C.utf8"}, true},
		{map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"}, false}, // LC_ALL wins
		{map[string]string{"LC_CTYPE": "en_US.UTF-8", "LANG": "C"}, true},
		{map[string]string{}, false},
		{map[string]string{"LANG": "en_US.UTF-8", "TERM": "dumb"}, false},
	} {
		if got := UnicodeTerminal(env(c.env)); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}
