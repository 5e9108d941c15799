package purge

import (
	"slices"

	"ccm/ccm/pins"
	"ccm/transcript"
)

// The recent window is what a purge leaves exactly as it is, apart from
// the two removals that apply everywhere: thinking of every assistant
// message but the latest, and progress and per-turn bookkeeping records
// (the client sends neither progress records nor the thinking of earlier
// turns). It starts at the later of
//
//   - the --recent-turns Nth-last real user prompt, and
//   - the record of the --recent-results Nth-last tool result,
//
// and never after the first record of the latest assistant message (so
// that message, its thinking, its tool calls and their results stay),
// nor, in a live session, after the last prompt (its turn is in flight).
// One prompt of an agentic session can span hundreds of tool calls, so a
// window in prompts alone kept most of the bytes a resume sends.

// boundWindow returns the start of the recent window, given the start of
// the --recent-turns window.
func (p *Plan) boundWindow(turns int) int {
	start := turns
	if n := p.opt.RecentResults; n > 0 {
		seen := 0
		for i := p.scan.ix.Len() - 1; i >= start && seen < n; i-- {
			f := p.rec(i)
			if f.Sidechain || lostResultRecord(f) {
				continue
			}
			for _, b := range f.Blocks() {
				if b.Type == transcript.BlockToolResult {
					seen++
				}
			}
			if seen >= n {
				start = i
			}
		}
	}
	for r := range p.latestRecs {
		start = min(start, r)
	}
	if p.opt.Live {
		start = min(start, p.lastPrompt())
	}
	return start
}

// thresholdFor is the size over which a record's content moves to the
// store: --old-threshold (or --threshold where that is lower) before the
// recent window, --threshold in it.
func (p *Plan) thresholdFor(rec int) int {
	if rec < p.windowStart && p.opt.OldThreshold > 0 {
		return min(p.opt.OldThreshold, p.opt.Threshold)
	}
	return p.opt.Threshold
}

// settleLarge marks as large the records before the recent window that
// hold content over --old-threshold, and rebuilds the pin
// events so that directives resolve to the records that get stubs.
func (p *Plan) settleLarge() {
	for i := 0; i < p.windowStart && i < len(p.scan.info); i++ {
		if p.scan.info[i].largeOld {
			p.scan.info[i].large = true
		}
	}
	ev := make([]pins.Event, 0, len(p.scan.events))
	k := 0
	old := p.scan.events
	for i, ri := range p.scan.info {
		for k < len(old) && old[k].Item <= i {
			if old[k].IsDirective {
				ev = append(ev, old[k])
			}
			k++
		}
		if ri.large {
			ev = append(ev, pins.Event{Item: i})
		}
	}
	p.scan.events = slices.Clip(ev)
}

// lostResultRecord reports a record of results ccm purge synthesised
// (every block an is_error result of lostResultText). They do not count
// towards --recent-results: a purge adds them, and counting them would
// move the window of the next purge and make it stub more.
func lostResultRecord(f *transcript.Facts) bool {
	if f.NumBlocks() == 0 {
		return false
	}
	for _, b := range f.Blocks() {
		if b.Type != transcript.BlockToolResult || !b.IsError {
			return false
		}
	}
	return f.TextBytes == int64(f.NumBlocks()*(lostResultLen-2))
}
