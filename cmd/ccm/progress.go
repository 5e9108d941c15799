package main

import (
	"io"
	"os"

	"golang.org/x/term"

	"ccm/internal/ui"
)

// isTerminal reports whether w is a terminal. Progress bars and other
// decoration go only to terminals; cron and pipes get plain lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termProgress draws a progress bar on a terminal for long store
// operations (prune.Progress). newProgress returns nil (no bar) when w is
// not a terminal.
type termProgress struct {
	w   io.Writer
	bar *ui.Bar
}

func newProgress(w io.Writer) *termProgress {
	if !isTerminal(w) {
		return nil
	}
	return &termProgress{w: w}
}

func (p *termProgress) Start(label string, total int64, isBytes bool) {
	p.bar = ui.NewBar(p.w, label, total, isBytes)
}

// Add, add and Finish do nothing on a nil progress (no terminal).
func (p *termProgress) Add(n int64) {
	if p != nil && p.bar != nil {
		p.bar.Add(n)
	}
}

// add counts one item done.
func (p *termProgress) add() { p.Add(1) }

func (p *termProgress) Finish() {
	if p != nil && p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// listProgress adapts a progress bar to ccm.Store.List's callback.
func listProgress(p *termProgress) func(done, total int) {
	if p == nil {
		return nil
	}
	last := 0
	return func(done, total int) {
		if p.bar == nil && done < total {
			p.Start("reading the store", int64(total), false)
		}
		p.Add(int64(done - last))
		last = done
		if done == total {
			p.Finish()
		}
	}
}
