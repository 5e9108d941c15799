// Steps: this file is the one shape in which long operations report their
// progress (Progress: a step starts with a total, units are added, the
// step finishes), the one implementation that draws it (Bars, a Bar per
// step) and the one adapter from the store's done/total callbacks.

package ui

import "io"

// Progress receives the progress of long steps: listing the store (a count
// of blobs), reading transcripts (bytes), purging or deleting (a count).
// A step starts, gets units added (from several goroutines at once), and
// finishes. Code that reports progress takes a Progress and treats nil as
// no report.
type Progress interface {
	Start(label string, total int64, isBytes bool)
	Add(n int64)
	Finish()
}

// Bars is the Progress drawn on a terminal: one Bar per step. All its
// methods do nothing on a nil *Bars, so a command that has no terminal
// passes nil. Start while a step is drawn finishes it first.
type Bars struct {
	w   io.Writer
	bar *Bar
}

// NewBars draws on w, which the caller knows to be a terminal.
func NewBars(w io.Writer) *Bars { return &Bars{w: w} }

// Start begins a step of total units labelled label.
func (p *Bars) Start(label string, total int64, isBytes bool) {
	if p == nil {
		return
	}
	p.Finish()
	p.bar = NewBar(p.w, label, total, isBytes)
}

// Add records n more units of the current step.
func (p *Bars) Add(n int64) {
	if p != nil && p.bar != nil {
		p.bar.Add(n)
	}
}

// Inc records one more unit, for worker pools that count items done.
func (p *Bars) Inc() { p.Add(1) }

// Finish erases the current step's bar.
func (p *Bars) Finish() {
	if p != nil && p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// Progress returns p as a Progress, nil (no report) when p is nil, so that
// an interface holding a nil *Bars is never mistaken for a report.
func (p *Bars) Progress() Progress {
	if p == nil {
		return nil
	}
	return p
}

// DoneTotal adapts p to the callbacks that report "done of total" (the
// store's listing and verification): the first call starts a step labelled
// label, each adds what was done since the last, and the call that reaches
// the total finishes it. A nil p gives a nil callback.
func DoneTotal(p Progress, label string) func(done, total int) {
	if p == nil {
		return nil
	}
	started, last := false, 0
	return func(done, total int) {
		if !started {
			p.Start(label, int64(total), false)
			started = true
		}
		p.Add(int64(done - last))
		last = done
		if done == total {
			p.Finish()
		}
	}
}
