package monitor

import "testing"

func TestWindow(t *testing.T) {
	cases := []struct {
		model          string
		fill, override int64
		want           int64
	}{
		{"claude-sonnet-4-5", 100_000, 0, DefaultWindow},
		{"claude-sonnet-4-5[1m]", 100_000, 0, LargeWindow},
		{"claude-opus-5-5", 100_000, 0, LargeWindow},
		{"claude-sonnet-4-5", 250_000, 0, LargeWindow},
		{"claude-opus-5-5", 100_000, 150_000, 150_000},
	}
	for _, c := range cases {
		if got := Window(c.model, c.fill, c.override); got != c.want {
			t.Errorf("Window(%q, %d, %d) = %d, want %d", c.model, c.fill, c.override, got, c.want)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	if ts, ok := ParseThresholds("90, 70,80,70"); !ok || len(ts) != 3 || ts[0] != 70 || ts[2] != 90 {
		t.Errorf("got %v %v", ts, ok)
	}
	if _, ok := ParseThresholds("70,abc,150"); ok {
		t.Error("bad values accepted")
	}
}

// TestStep: one warning per crossing, a jump warns once at the highest
// threshold crossed, a drop re-arms.
func TestStep(t *testing.T) {
	ts := []int{70, 80, 90}
	var st State
	f := func(n int64) Fill { return Fill{Tokens: n, Window: 100, Known: true} }
	for i, c := range []struct {
		fill int64
		want int
	}{{50, 0}, {95, 90}, {96, 0}, {75, 0}, {85, 80}, {10, 0}, {72, 70}} {
		if got := Step(&st, ts, f(c.fill)); got != c.want {
			t.Errorf("step %d (fill %d): crossed %d, want %d", i, c.fill, got, c.want)
		}
	}
}
