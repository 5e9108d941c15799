package synth

import (
	"bufio"
	"io"
	"math/rand/v2"
	"time"
)

// gen is the state of one generation run. Only small per-turn state lives
// here: reusable byte buffers (as large as the largest record), the chain tip
// and counters. Nothing grows with the size of the transcript.
type gen struct {
	o   Options
	r   *rand.Rand // main stream: structure, sizes, ids
	pcg *rand.PCG  // re-seeded per tool call, so a call's text can be regenerated
	cr  *rand.Rand // rand over pcg
	out *bufio.Writer
	m   *Manifest

	rec      []byte // record under construction
	lastLen  int    // length of the last emitted line, still in rec's storage
	raw      []byte // raw text scratch
	raw2     []byte // second raw scratch (numbered Read output, …)
	esc      []byte // escaped (quoted) text scratch
	esc2     []byte // second escaped scratch
	scratch  []byte // base64 input scratch
	lastText []byte // start of the turn's prompt, for last-prompt

	env     []byte // envelope fields after parentUuid, main chain
	envSide []byte // same for inline sidechain records
	side    bool   // writing sidechain records (subagent file or inline)
	slug    string // session slug on every record

	now          int64 // current timestamp, Unix ms
	tip          uid   // last record of the active chain
	hasTip       bool
	chainPrompts int // user prompts on the walk from tip

	lastMsg     uid // last main-file user or assistant record, for the unterminated tail
	lastMsgLine int // its line

	ev      []event // scheduled defects, images, pins, rewinds
	defs    []Defect
	nCompct int // compactions done

	frac float64 // fraction of the run done, for scheduling
}

// Generate writes a synthetic Claude Code session transcript to w and returns
// what it wrote. Output is streamed through a buffer; memory stays bounded by
// the largest record (a few MB) whatever TargetBytes is.
func Generate(w io.Writer, opt Options) (Manifest, error) {
	o, err := opt.normalize()
	if err != nil {
		return Manifest{}, err
	}
	g := newGen(w, o, 1)
	g.schedule()
	g.runMain()
	return g.finish()
}

// newGen prepares a generator writing to w; stream separates the random
// sequences of the main file and of subagent files.
func newGen(w io.Writer, o Options, stream uint64) *gen {
	g := &gen{
		o:   o,
		r:   newRand(o.Seed, stream),
		pcg: rand.NewPCG(0, 0),
		out: bufio.NewWriterSize(w, 1<<20),
		m: &Manifest{
			Seed: o.Seed, Version: o.Version, SessionID: o.SessionID,
			Types: map[string]int{}, Subtypes: map[string]int{},
		},
	}
	g.cr = rand.New(g.pcg)
	// A fixed, seed-derived epoch: 2026-01-05 plus up to ~70 days.
	g.now = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC).UnixMilli() + int64(uint64(o.Seed)%100000)*60000
	slug := words[230+g.r.IntN(10)] + "-" + words[240+g.r.IntN(10)] + "-" + words[20+g.r.IntN(40)]
	g.slug = slug
	g.env = g.envelope(false, "", slug)
	g.envSide = g.envelope(true, "", slug)
	return g
}

// envelope renders the common fields that follow parentUuid, in the order
// Claude Code writes them.
func (g *gen) envelope(side bool, agentID, slug string) []byte {
	b := []byte(`,"isSidechain":`)
	if side {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"userType":"external","cwd":`...)
	b = appendString(b, g.o.Cwd)
	b = append(b, `,"sessionId":`...)
	b = appendString(b, g.o.SessionID)
	b = append(b, `,"version":`...)
	b = appendString(b, g.o.Version)
	b = append(b, `,"gitBranch":"main"`...)
	if agentID != "" {
		b = append(b, `,"agentId":`...)
		b = appendString(b, agentID)
	}
	b = append(b, `,"slug":`...)
	return appendString(b, slug)
}

// runMain writes the turns of a main session file, then its tail.
func (g *gen) runMain() {
	o := g.o
	if count(g.defs, MidwayRoot) > 0 {
		g.midwayStart() // a file has one start: planted once however often listed
	}
	for ti := 0; ; ti++ {
		if o.TargetBytes > 0 {
			g.frac = float64(g.m.Bytes) / float64(o.TargetBytes)
		} else {
			g.frac = float64(ti) / float64(o.Turns)
		}
		last := o.TargetBytes == 0 && ti == o.Turns-1
		g.maybeCompact(ti)
		g.arm(last)
		g.turn(ti, last && o.InFlight)
		if last || g.out.Flush() != nil {
			break
		}
		if o.TargetBytes > 0 && g.m.Bytes >= o.TargetBytes {
			// Size reached. One more turn only when something scheduled
			// was never armed (a tiny target with many defects) or the
			// file must end in flight.
			if g.pending() || o.InFlight {
				g.arm(true)
				g.turn(ti+1, o.InFlight)
			}
			break
		}
	}
	if !o.InFlight {
		g.summary()
	}
	switch {
	case count(g.defs, TornLastLine) > 0:
		g.tornLine() // a file has one end: planted once however often listed
	case count(g.defs, UnterminatedLastRecord) > 0:
		g.unterminatedTail()
	}
}

// finish flushes the output and completes the manifest.
func (g *gen) finish() (Manifest, error) {
	err := g.out.Flush()
	g.m.ActivePrompts = g.chainPrompts
	if g.hasTip {
		g.m.LeafUUID = g.tip.String()
	}
	return *g.m, err
}

// tick advances the clock by lo..hi milliseconds.
func (g *gen) tick(lo, hi int) { g.now += int64(between(g.r, lo, hi)) }

// begin starts a record in g.rec: '{', parentUuid (null when parent is nil)
// and the envelope.
func (g *gen) begin(parent *uid) []byte {
	b := append(g.rec[:0], `{"parentUuid":`...)
	b = appendParent(b, parent)
	if g.side {
		return append(b, g.envSide...)
	}
	return append(b, g.env...)
}

func appendParent(b []byte, parent *uid) []byte {
	if parent == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = append(b, parent[:]...)
	return append(b, '"')
}

// appendTail appends ,"uuid":…,"timestamp":… (the order of user and
// assistant records).
func (g *gen) appendTail(b []byte, u uid) []byte {
	b = append(b, `,"uuid":"`...)
	b = append(b, u[:]...)
	b = append(b, `","timestamp":`...)
	return appendTime(b, g.now)
}

// appendTimeUUID appends ,"timestamp":…,"uuid":… (system and progress order).
func (g *gen) appendTimeUUID(b []byte, u uid) []byte {
	b = append(b, `,"timestamp":`...)
	b = appendTime(b, g.now)
	b = append(b, `,"uuid":"`...)
	b = append(b, u[:]...)
	return append(b, '"')
}

// tipRef returns a pointer to the chain tip, or nil at a root.
func (g *gen) tipRef() *uid {
	if !g.hasTip {
		return nil
	}
	t := g.tip
	return &t
}

// setTip makes u the new end of the active chain.
func (g *gen) setTip(u uid) { g.tip, g.hasTip = u, true }

// noteMsg remembers u, just emitted, as the last user or assistant record
// of the main file.
func (g *gen) noteMsg(u uid) {
	if !g.side {
		g.lastMsg, g.lastMsgLine = u, g.m.Lines
	}
}

// line returns the 1-based number of the next line to be written.
func (g *gen) line() int { return g.m.Lines + 1 }

// emit writes record b plus a newline and counts it under typ and sub
// (sub may be ""). b's storage is kept for the next record.
func (g *gen) emit(b []byte, typ, sub string) {
	b = append(b, '\n')
	g.writeRaw(b, 1)
	g.m.Types[typ]++
	if sub != "" {
		g.m.Subtypes[sub]++
	}
	if g.side {
		g.m.SidechainRecords++
	}
	g.rec, g.lastLen = b[:0], len(b)
}

// writeRaw writes bytes that make up lines whole lines (or a torn tail,
// counted as a line) and counts them. Records never hold a raw newline, so
// callers say how many lines b is.
func (g *gen) writeRaw(b []byte, lines int) {
	g.out.Write(b) // errors stick in the bufio.Writer and surface at Flush
	g.m.Bytes += int64(len(b))
	g.m.Lines += lines
}
