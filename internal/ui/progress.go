// Progress: this file draws a one-line progress bar for long batch and store
// operations: label, percentage, bar, done/total (counts or bytes), rate
// and time left, redrawn in place with a carriage return at most ten times
// a second and erased when the work is done.
//
// It writes wherever it is told: the caller decides that the writer is a
// terminal (cron and pipes get no bar). It replaces schollz/progressbar,
// whose dependencies (net/http, crypto/tls, colorstring, uniseg) every
// `ccm hook` process paid for in start-up time without using them.

package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// BarInterval is the shortest time between two redraws.
const BarInterval = 100 * time.Millisecond

// barWidth is the number of cells between the brackets.
const barWidth = 30

// Bar is one progress bar. Its methods are safe to call from several
// goroutines (batch workers add to it concurrently).
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	total   int64
	done    int64
	bytes   bool
	now     func() time.Time // the clock, replaced in tests
	start   time.Time
	drawn   time.Time // time of the last redraw (start before the first)
	lineLen int       // length of the line on screen, 0 when none
	closed  bool
}

// NewBar starts a bar for total units of work labelled label, writing to w.
// With bytes the amounts and the rate are shown as sizes (KB, MB, GB).
// Nothing is drawn until BarInterval has passed, so work that finishes
// sooner leaves no trace.
func NewBar(w io.Writer, label string, total int64, bytes bool) *Bar {
	return newAt(w, label, total, bytes, time.Now)
}

func newAt(w io.Writer, label string, total int64, bytes bool, now func() time.Time) *Bar {
	t := now()
	return &Bar{w: w, label: label, total: total, bytes: bytes, now: now, start: t, drawn: t}
}

// Add records n more units done and redraws the line if BarInterval has
// passed since the last redraw.
func (b *Bar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.done += n
	if t := b.now(); t.Sub(b.drawn) >= BarInterval {
		b.drawn = t
		b.draw(t)
	}
}

// Finish erases the line if one was drawn; later calls do nothing.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	if b.lineLen > 0 {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.lineLen))
		b.lineLen = 0
	}
}

// draw writes the line, padded to cover a longer previous one.
func (b *Bar) draw(t time.Time) {
	line := b.line(t.Sub(b.start))
	pad := max(b.lineLen-len(line), 0)
	fmt.Fprintf(b.w, "\r%s%s", line, strings.Repeat(" ", pad))
	b.lineLen = len(line)
}

// line is the bar's text after elapsed time:
//
//	purging  42% [============>                 ] 42/100 (12/s, 5s left)
func (b *Bar) line(elapsed time.Duration) string {
	done := min(b.done, b.total)
	frac := 0.0
	if b.total > 0 {
		frac = float64(done) / float64(b.total)
	}
	filled := int(frac * barWidth)
	cells := strings.Repeat("=", filled)
	if filled < barWidth {
		cells += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	s := fmt.Sprintf("%s %3d%% [%s] %s/%s", b.label, int(frac*100), cells, b.amount(done), b.amount(b.total))
	secs := elapsed.Seconds()
	if secs <= 0 || done == 0 {
		return s
	}
	rate := float64(done) / secs
	left := time.Duration(float64(b.total-done) / rate * float64(time.Second))
	return fmt.Sprintf("%s (%s/s, %s left)", s, b.amount(int64(rate)), left.Round(time.Second))
}

// amount formats n units: a count, or a size in decimal units.
func (b *Bar) amount(n int64) string {
	if !b.bytes {
		return Count(n)
	}
	return Bytes(n)
}
