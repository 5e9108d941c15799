package synth

// This file places everything that must happen "somewhere in the run" at a
// deterministic point: defects, images, pin directives, rewinds, forced Task
// calls and compactions. Each scheduled item has a position in [0,1) of the
// run (turns done / Turns, or bytes written / TargetBytes); it is armed at
// the first turn that starts at or past that position and planted in that
// turn. The last turn arms everything still waiting, so every requested item
// is planted even in a three-turn file. The line-level defects (blank,
// invalid, array, NUL padding, torn tail) are written here too, and so are
// the client shapes of a file's two ends (midway root, unterminated tail).

type evKind uint8

const (
	evDefect evKind = iota
	evImageTop
	evImageTool
	evPinNext
	evPinLast
	evPinStart
	evPinEnd
	evRewind
	evTask
)

type event struct {
	kind  evKind
	d     Defect
	at    float64
	armed bool
	done  bool
}

// schedule lays out the events of a main-file run.
func (g *gen) schedule() {
	o := g.o
	n := len(o.Defects)
	for i, d := range o.Defects {
		g.defs = append(g.defs, d)
		if d == TornLastLine || d == UnterminatedLastRecord || d == MidwayRoot {
			continue // always the very end, or the very start
		}
		g.ev = append(g.ev, event{kind: evDefect, d: d, at: float64(i+1) / float64(n+1)})
	}
	if o.Images {
		for i := 0; i < 6; i++ {
			k := evImageTop
			if i%2 == 1 {
				k = evImageTool
			}
			g.ev = append(g.ev, event{kind: k, at: (float64(i) + 0.5) / 6})
		}
	}
	if o.Pins {
		for i, k := range []evKind{evPinNext, evPinLast, evPinStart, evPinEnd} {
			g.ev = append(g.ev, event{kind: k, at: float64(i+1) / 5})
		}
	}
	for i := 0; i < o.Rewinds; i++ {
		g.ev = append(g.ev, event{kind: evRewind, at: float64(i+1) / float64(o.Rewinds+1)})
	}
	if o.Sidechains {
		g.ev = append(g.ev, event{kind: evTask, at: 0.3})
	}
}

// arm arms the events whose position was reached (all of them when all).
func (g *gen) arm(all bool) {
	for i := range g.ev {
		if all || g.frac >= g.ev[i].at {
			g.ev[i].armed = true
		}
	}
}

// pending reports whether some event was never armed.
func (g *gen) pending() bool {
	for _, e := range g.ev {
		if !e.armed {
			return true
		}
	}
	return false
}

// take consumes one armed event of kind k (and defect d for evDefect).
func (g *gen) take(k evKind, d Defect) bool {
	for i := range g.ev {
		e := &g.ev[i]
		if e.armed && !e.done && e.kind == k && e.d == d {
			e.done = true
			return true
		}
	}
	return false
}

// takeAll consumes every armed event of kind k / defect d and returns how
// many there were.
func (g *gen) takeAll(k evKind, d Defect) int {
	n := 0
	for g.take(k, d) {
		n++
	}
	return n
}

// maybeCompact writes a compaction before turn ti when the next one is due.
// At most one compaction happens per turn and never before the first turn.
func (g *gen) maybeCompact(ti int) {
	c := g.o.Compactions
	if ti == 0 || g.nCompct >= c || g.side {
		return
	}
	if g.frac >= float64(g.nCompct+1)/float64(c+1) {
		g.compact()
		g.nCompct++
	}
}

// nulRun is the length of a planted NUL-byte run.
const nulRun = 4096

// lineDefect writes one bad line of kind d. None of them touches the chain:
// the records they hold or cut are queue-operation records, which have no
// uuid.
func (g *gen) lineDefect(d Defect) {
	ln := g.line()
	var note string
	switch d {
	case BlankLine:
		g.writeRaw([]byte{'\n'}, 1)
		note = "empty line"
	case InvalidLine:
		b := g.queueOp("enqueue")
		b = append(b[:len(b)*2/3], '\n') // cut inside the object: never valid JSON
		g.writeRaw(b, 1)
		note = "first two thirds of a queue-operation record, then a newline"
	case ArrayLine:
		q := g.queueOp("enqueue")
		b := append(append([]byte{'['}, q...), ']', '\n')
		g.writeRaw(b, 1)
		note = "a JSON array holding one queue-operation object"
	case NULPadding:
		q := g.queueOp("enqueue")
		b := make([]byte, nulRun, nulRun+len(q)+1)
		b = append(append(b, q...), '\n')
		g.writeRaw(b, 1)
		note = "4096 NUL bytes, then a queue-operation record on the same line"
	}
	g.m.BadLines++
	g.planted(Planted{Kind: d, Line: ln, Note: note})
}

// tornLine ends the file with the first part of an assistant record that
// would have continued the chain, and no newline.
func (g *gen) tornLine() {
	ln := g.line()
	m := g.newMsg()
	g.raw = appendProse(g.raw[:0], g.r, between(g.r, 200, 2000))
	blk := g.textBlock(g.raw)
	tip := g.tip
	g.tick(300, 4000)
	b := g.begin(g.tipRef())
	b = append(b, `,"message":{"model":"`...)
	b = append(b, g.model()...)
	b = append(b, `","id":"`...)
	b = append(b, m.id...)
	b = append(b, `","type":"message","role":"assistant","content":[`...)
	cut := len(b) + len(blk)/2
	b = append(b, blk...)
	g.rec = b
	g.writeRaw(b[:cut], 1)
	g.m.BadLines++
	g.planted(Planted{Kind: TornLastLine, Line: ln, Parent: tip.String(),
		Note: "file ends inside an assistant record (its text block), no newline; Parent is its parentUuid"})
}

// midwayStart begins the file mid-way: a stop_hook_summary whose parent is
// a uuid absent from the file (the previous file's last record, say), so
// the chain's first record dangles and nothing precedes it.
func (g *gen) midwayStart() {
	absent := newUUID(g.r)
	g.setTip(absent)
	u := g.stopSummary(newUUID(g.r))
	g.planted(Planted{Kind: MidwayRoot, Line: g.m.Lines, UUID: u.String(), Parent: absent.String(),
		Note: "first record with a uuid: a stop_hook_summary whose parentUuid is absent from the file; Parent is that uuid"})
}

// unterminatedTail ends the file with one or two Stop hook_progress records
// hanging off the last assistant or user record, then a complete
// stop_hook_summary under them with no newline after it.
func (g *gen) unterminatedTail() {
	anchor, anchorLine := g.lastMsg, g.lastMsgLine
	g.setTip(anchor)
	hook := newUUID(g.r) // the Stop hook run: toolUseID of all three records
	c := &call{id: hook.String()}
	var lines []int
	for i, n := 0, between(g.r, 1, 2); i < n; i++ {
		d := append(g.esc2[:0], `{"type":"hook_progress","hookEvent":"Stop","hookName":"Stop","command":"`...)
		d = append(d, stopHooks[i]...)
		d = append(d, `"}`...)
		g.esc2 = d
		lines = append(lines, g.line())
		g.progress(d, "progress/hook_progress", c, c.id, nil, true)
	}
	parent := g.tip
	ln := g.line()
	u := newUUID(g.r)
	g.tick(20, 300)
	b := g.begin(g.tipRef())
	b = append(b, `,"type":"system","subtype":"stop_hook_summary",`...)
	b = append(b, stopSummaryBody...)
	b = g.appendTimeUUID(b, u)
	b = append(b, `,"toolUseID":"`...)
	b = append(b, hook[:]...)
	b = append(b, `"}`...)
	g.writeRaw(b, 1) // no newline: the record is whole, its line is not
	g.m.Types["system"]++
	g.m.Subtypes["system/stop_hook_summary"]++
	g.rec = b[:0]
	g.setTip(u)
	g.planted(Planted{Kind: UnterminatedLastRecord, Line: ln, UUID: u.String(), Parent: parent.String(),
		OtherLine: anchorLine, ProgressLines: lines,
		Note: "complete stop_hook_summary as the last line, no newline; its parent is a Stop hook_progress hanging off the last assistant or user record (OtherLine)"})
}

// stopHooks are the commands of the Stop hooks the unterminated tail runs.
var stopHooks = [...]string{"${CLAUDE_PLUGIN_ROOT}/hooks/stop-hook.sh", "terminal-notifier -message done"}
