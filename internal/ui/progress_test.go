package ui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a hand-moved clock for the bar.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)} }
func bar(w *strings.Builder, c *clock, total int64, bytes bool) *Bar {
	return newAt(w, "purging", total, bytes, c.now)
}

// TestQuickWorkLeavesNoTrace: work that ends within the first interval
// draws nothing and Finish erases nothing.
func TestQuickWorkLeavesNoTrace(t *testing.T) {
	var w strings.Builder
	c := newClock()
	b := bar(&w, c, 100, false)
	c.advance(BarInterval - time.Millisecond)
	b.Add(100)
	b.Finish()
	if w.Len() != 0 {
		t.Fatalf("wrote %q, want nothing", w.String())
	}
}

// TestLineShowsCountRateAndTimeLeft: 40 of 100 after 2 s is 40%, 12 of 30
// cells, 20 a second and 3 s left.
func TestLineShowsCountRateAndTimeLeft(t *testing.T) {
	var w strings.Builder
	c := newClock()
	b := bar(&w, c, 100, false)
	c.advance(2 * time.Second)
	b.Add(40)
	want := "\rpurging  40% [============>                 ] 40/100 (20/s, 3s left)"
	if w.String() != want {
		t.Fatalf("drew\n%q\nwant\n%q", w.String(), want)
	}
}

// TestRedrawsAtMostOncePerInterval: adds within the interval after a
// redraw are counted but not drawn; the next redraw shows them all.
func TestRedrawsAtMostOncePerInterval(t *testing.T) {
	var w strings.Builder
	c := newClock()
	b := bar(&w, c, 1000, false)
	c.advance(BarInterval)
	b.Add(1)
	first := w.Len()
	for range 50 {
		c.advance(time.Millisecond)
		b.Add(1)
	}
	if w.Len() != first {
		t.Fatalf("redrew within the interval: %q", w.String())
	}
	c.advance(BarInterval)
	b.Add(1)
	if got := strings.Count(w.String(), "\r"); got != 2 {
		t.Fatalf("%d redraws, want 2: %q", got, w.String())
	}
	if !strings.Contains(w.String(), " 52/1,000 ") {
		t.Fatalf("last redraw does not show 52/1000: %q", w.String())
	}
}

// TestBytesAndErase: sizes in decimal units, and Finish blanks exactly the
// line that is on screen and returns the cursor to its start.
func TestBytesAndErase(t *testing.T) {
	var w strings.Builder
	c := newClock()
	b := newAt(&w, "reading blobs", 10_000_000, true, c.now)
	c.advance(time.Second)
	b.Add(2_500_000)
	line := "reading blobs  25% [=======>                      ] 2.5 MB/10.0 MB (2.5 MB/s, 3s left)"
	if w.String() != "\r"+line {
		t.Fatalf("drew\n%q\nwant\n%q", w.String(), "\r"+line)
	}
	b.Finish()
	want := "\r" + line + "\r" + strings.Repeat(" ", len(line)) + "\r"
	if w.String() != want {
		t.Fatalf("after Finish\n%q\nwant\n%q", w.String(), want)
	}
	b.Add(1)
	b.Finish()
	if w.String() != want {
		t.Fatalf("wrote after Finish: %q", w.String()[len(want):])
	}
}

// TestShorterLineCoversLonger: when the time left drops from minutes to
// seconds, the new line is padded over the end of the old one.
func TestShorterLineCoversLonger(t *testing.T) {
	var w strings.Builder
	c := newClock()
	b := bar(&w, c, 100, false)
	c.advance(time.Second)
	b.Add(1) // 1/s, 99 s left: 1m39s
	first := w.String()
	c.advance(time.Second)
	b.Add(97) // 98/2 s, 2 left: 0s
	second := strings.TrimPrefix(w.String(), first)
	if !strings.Contains(first, "1/100 (1/s, 1m39s left)") || !strings.Contains(second, "98/100 (49/s, 0s left)") {
		t.Fatalf("lines %q then %q", first, second)
	}
	if len(second) != len(first) || !strings.HasSuffix(second, ")"+strings.Repeat(" ", len(first)-len(strings.TrimRight(second, " ")))) {
		t.Fatalf("second line %q (%d bytes) does not cover the first (%d bytes)", second, len(second), len(first))
	}
}

// TestConcurrentAdds: workers add at once; every unit is counted.
func TestConcurrentAdds(t *testing.T) {
	var w strings.Builder
	var mu sync.Mutex
	b := NewBar(lockedWriter{&mu, &w}, "x", 8000, false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Finish()
	if b.done != 8000 {
		t.Fatalf("counted %d, want 8000", b.done)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// recorder is a Progress that writes down what it is told.
type recorder struct{ calls []string }

func (r *recorder) Start(label string, total int64, isBytes bool) {
	r.calls = append(r.calls, fmt.Sprintf("start %s %d %v", label, total, isBytes))
}
func (r *recorder) Add(n int64) { r.calls = append(r.calls, fmt.Sprintf("add %d", n)) }
func (r *recorder) Finish()     { r.calls = append(r.calls, "finish") }

// TestDoneTotal: the first callback starts the step with its total, each
// adds the difference, reaching the total finishes; nil gives nil.
func TestDoneTotal(t *testing.T) {
	var r recorder
	f := DoneTotal(&r, "reading the store")
	f(0, 10)
	f(4, 10)
	f(10, 10)
	want := []string{"start reading the store 10 false", "add 0", "add 4", "add 6", "finish"}
	if fmt.Sprint(r.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %q, want %q", r.calls, want)
	}
	if DoneTotal(nil, "x") != nil {
		t.Fatal("DoneTotal(nil) is not nil")
	}
}

// TestBarsNil: a nil *Bars does nothing and is no Progress.
func TestBarsNil(t *testing.T) {
	var p *Bars
	p.Start("x", 1, false)
	p.Inc()
	p.Finish()
	if p.Progress() != nil {
		t.Fatal("nil *Bars gave a non-nil Progress")
	}
}
