package synth

// This file plants the line-level defects (blank, invalid, array, NUL
// padding, torn last line) and writes the structural extras that sit off
// the active chain: rewind dead branches and inline sidechains.

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

// deadBranch writes a rewind fork: a prompt, one tool round and a reply
// under the current tip, then returns the tip to where it was, so the next
// prompt becomes a sibling of the dead branch's prompt.
func (g *gen) deadBranch() {
	tip, has, prompts := g.tip, g.hasTip, g.chainPrompts
	u := newUUID(g.r)
	g.tick(2000, 20000)
	g.raw = appendProse(g.raw[:0], g.r, between(g.r, 20, 200))
	g.prompt(u, g.raw, false)
	g.round(roundPlan{})
	g.finalMessage()
	g.tip, g.hasTip, g.chainPrompts = tip, has, prompts
	g.m.Rewinds++
}

// inlineSidechain writes a short subagent conversation for Task call c
// inline in the main file, as Claude Code 1.0.x did: its own root prompt,
// one tool round and a reply, all with isSidechain:true, off the main chain.
func (g *gen) inlineSidechain(c *call) {
	tip, has, prompts := g.tip, g.hasTip, g.chainPrompts
	g.side, g.hasTip = true, false
	u := newUUID(g.r)
	g.callExtras(c, g.callRand(c))
	g.raw = append(g.raw[:0], g.raw2...) // the Task prompt
	g.prompt(u, g.raw, false)
	g.m.Prompts-- // not a human prompt
	g.m.Subtypes["user/prompt"]--
	g.m.Subtypes["user/sidechain_prompt"]++
	g.round(roundPlan{})
	g.finalMessage()
	g.side = false
	g.tip, g.hasTip, g.chainPrompts = tip, has, prompts
}
