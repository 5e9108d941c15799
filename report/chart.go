package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"ccm/internal/ui"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH          = 1120, 380
	padL, padR, padT, padB  = 64, 16, 14, 34
	maxColumns              = 1000 // requests beyond this share a column
	plotW, plotH            = chartW - padL - padR, chartH - padT - padB
	areaCacheRead, areaRest = "#9ec5e8", "#2f6fae"
)

// chart is the context curve of a session, laid out for the template.
type chart struct {
	W, H       int
	Layers     []layer // stacked areas, bottom first
	After      string  // polyline points of the purge curve, or ""
	Grid       []gridLine
	Marks      []markLine
	XTicks     []tick
	PlotX      int
	PlotY      int
	PlotW      int
	PlotH      int
	Points     []hoverPoint // one per column, for the hover read-out
	ColumnStep float64
	HoverX0    float64 // the x of the first column
}

type layer struct {
	Name, Color, Points string
}

type gridLine struct {
	Y      float64
	Label  string
	Class  string
	LabelX float64
	DY     int
	Anchor string
}

type markLine struct {
	X     float64
	Label string
	Class string
}

type tick struct {
	X     float64
	Label string
}

// hoverPoint is what the read-out shows for a column.
type hoverPoint struct {
	N     int    `json:"n"` // request number, from 1
	Line  int    `json:"line"`
	Time  string `json:"t"`
	In    int64  `json:"in"`
	CR    int64  `json:"cr"`
	CC    int64  `json:"cc"`
	Out   int64  `json:"out"`
	After int64  `json:"after"` // -1 without a purge curve
	Why   string `json:"why"`
}

// columns picks the requests drawn: all of them up to maxColumns, else
// the largest context of each run of requests sharing a column.
func columns(turns []Turn) []int {
	n := len(turns)
	if n <= maxColumns {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, maxColumns)
	for c := 0; c < maxColumns; c++ {
		lo, hi := c*n/maxColumns, (c+1)*n/maxColumns
		best := lo
		for i := lo; i < hi; i++ {
			if turns[i].Context() > turns[best].Context() {
				best = i
			}
		}
		out = append(out, best)
	}
	return out
}

func buildChart(s *Session) *chart {
	if len(s.Turns) == 0 {
		return nil
	}
	ch := &chart{W: chartW, H: chartH, PlotX: padL, PlotY: padT, PlotW: plotW, PlotH: plotH}
	top := s.Window
	for _, t := range s.Turns {
		top = max(top, t.Context())
	}
	top = top + top/20
	cols := columns(s.Turns)
	n := len(s.Turns)
	xOf := func(i int) float64 { // request index → x
		if n == 1 {
			return padL + plotW/2
		}
		return padL + float64(i)*plotW/float64(n-1)
	}
	yOf := func(v int64) float64 { return padT + plotH - float64(v)*plotH/float64(top) }
	// A lone request is drawn as a bar, not a line of no width.
	spread := func(i int) []float64 {
		if n == 1 {
			return []float64{xOf(0) - 14, xOf(0) + 14}
		}
		return []float64{xOf(i)}
	}
	ch.ColumnStep = float64(plotW) / float64(max(1, len(cols)-1))
	ch.HoverX0 = xOf(0)
	// Stacked from the bottom: cache read, cache creation, input, output.
	parts := []struct {
		name, color string
		get         func(t Turn) int64
	}{
		{"cache read", areaCacheRead, func(t Turn) int64 { return t.Usage.CacheRead }},
		{"cache creation", "#f0b35b", func(t Turn) int64 { return t.Usage.CacheCreation }},
		{"input", areaRest, func(t Turn) int64 { return t.Usage.Input }},
		{"output", "#8e5fb5", func(t Turn) int64 { return t.Usage.Output }},
	}
	base := make([]int64, len(cols))
	for _, p := range parts {
		var b strings.Builder
		tops := make([]int64, len(cols))
		for k, i := range cols {
			tops[k] = base[k] + p.get(s.Turns[i])
			for _, x := range spread(i) {
				fmt.Fprintf(&b, "%.1f,%.1f ", x, yOf(tops[k]))
			}
		}
		for k := len(cols) - 1; k >= 0; k-- {
			xs := spread(cols[k])
			for j := len(xs) - 1; j >= 0; j-- {
				fmt.Fprintf(&b, "%.1f,%.1f ", xs[j], yOf(base[k]))
			}
		}
		ch.Layers = append(ch.Layers, layer{Name: p.name, Color: p.color, Points: strings.TrimSpace(b.String())})
		base = tops
	}
	if s.After != nil {
		var b strings.Builder
		for _, i := range cols {
			for _, x := range spread(i) {
				fmt.Fprintf(&b, "%.1f,%.1f ", x, yOf(s.After[i]))
			}
		}
		ch.After = strings.TrimSpace(b.String())
	}
	for _, g := range []struct {
		pct   int64
		class string
	}{{70, "g70"}, {80, "g80"}, {90, "g90"}, {100, "g100"}} {
		v := s.Window * g.pct / 100
		label := strconv.FormatInt(g.pct, 10) + "% of " + ui.Count(s.Window)
		// Labelled inside the plot, above the line at its right end.
		ch.Grid = append(ch.Grid, gridLine{Y: yOf(v), Label: label, Class: g.class, LabelX: padL + plotW - 4, DY: -3, Anchor: "end"})
	}
	for _, v := range niceTicks(top, 4) {
		if v == 0 {
			continue
		}
		ch.Grid = append(ch.Grid, gridLine{Y: yOf(v), Label: ui.Count(v), Class: "gy", LabelX: padL - 6, DY: 3, Anchor: "end"})
	}
	for _, m := range s.Boundaries {
		ch.Marks = append(ch.Marks, markLine{X: markX(m.Turn, n, xOf), Label: fmt.Sprintf("%s (line %d)", m.Label, m.Line), Class: "mb"})
	}
	for _, m := range s.Purges {
		ch.Marks = append(ch.Marks, markLine{X: markX(m.Turn, n, xOf), Label: m.Label, Class: "mp"})
	}
	for _, v := range niceTicks(int64(n), 6) {
		if v == 0 || v > int64(n) {
			continue
		}
		ch.XTicks = append(ch.XTicks, tick{X: xOf(int(v) - 1), Label: strconv.FormatInt(v, 10)})
	}
	for _, i := range cols {
		t := s.Turns[i]
		p := hoverPoint{N: i + 1, Line: t.Line, In: t.Usage.Input, CR: t.Usage.CacheRead, CC: t.Usage.CacheCreation,
			Out: t.Usage.Output, After: -1, Why: whyText(t.Why)}
		if !t.Time.IsZero() {
			p.Time = t.Time.UTC().Format("2006-01-02 15:04:05Z")
		}
		if s.After != nil {
			p.After = s.After[i]
		}
		ch.Points = append(ch.Points, p)
	}
	return ch
}

// markX puts a marker between the request before it and the one after.
func markX(turn, n int, xOf func(int) float64) float64 {
	switch {
	case turn <= 0:
		return xOf(0)
	case turn >= n:
		return xOf(n - 1)
	}
	return (xOf(turn-1) + xOf(turn)) / 2
}

// niceTicks returns about k round values from 0 to top.
func niceTicks(top int64, k int) []int64 {
	if top <= 0 {
		return nil
	}
	raw := float64(top) / float64(k)
	step := int64(1)
	for float64(step) < raw {
		switch {
		case float64(step*2) >= raw:
			step *= 2
		case float64(step*5) >= raw:
			step *= 5
		default:
			step *= 10
		}
	}
	var out []int64
	for v := int64(0); v <= top; v += step {
		out = append(out, v)
	}
	return out
}

func whyText(c Contribution) string {
	if c.Bytes == 0 {
		return ""
	}
	s := c.Kind
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return fmt.Sprintf("%s, %s, line %d", s, ui.Bytes(c.Bytes), c.Line)
}

// growth is one request's increase over the previous one.
type growth struct {
	N       int
	Turn    Turn
	Tokens  int64
	Context int64
}

// topGrowth returns the n requests that grew the context most.
func topGrowth(turns []Turn, n int) []growth {
	var out []growth
	for i := 1; i < len(turns); i++ {
		d := turns[i].Context() - turns[i-1].Context()
		if d > 0 {
			out = append(out, growth{N: i + 1, Turn: turns[i], Tokens: d, Context: turns[i].Context()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Tokens > out[j].Tokens })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
