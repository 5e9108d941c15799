package synth

// This file writes one tool round: an assistant message ending in one to
// three parallel tool_use lines, then one user tool_result record per call.
// Linking follows the real files (docs/transcript-format.md, "One response,
// several lines"): the result of the
// last call continues the chain, the results of the other calls hang off the
// first tool_use line of the message, so a naive parentUuid walk misses them
// and a loader must pair them by tool_use_id / sourceToolAssistantUUID. The
// parallel-fork shape links every result to its own tool_use line instead.

// round writes one tool round as planned by p.
func (g *gen) round(p roundPlan) {
	k := 1
	switch x := g.r.IntN(10); {
	case x >= 9:
		k = 3
	case x >= 7:
		k = 2
	}
	fork := p.defect == ParallelFork
	if p.defect == OrphanToolUse || p.defect == OrphanToolResult || fork {
		k = max(k, 2)
	}
	if p.inFlight {
		k = 1
	}
	m := g.newMsg()
	unsigned := count(p.msgDefects, MissingSignature)
	for i := 0; i < unsigned; i++ {
		u := g.assistantLine(m, g.thinkingBlock(false), "null", "assistant/thinking")
		g.planted(Planted{Kind: MissingSignature, Line: g.m.Lines, UUID: u.String(),
			Note: "thinking block without signature"})
	}
	if g.o.Thinking && unsigned == 0 {
		g.assistantLine(m, g.thinkingBlock(true), "null", "assistant/thinking")
	}
	dups := count(p.msgDefects, DuplicateUUID)
	wantDup := dups > 0
	if p.pinLast || wantDup || g.r.IntN(2) == 0 {
		b := appendProse(g.raw[:0], g.r, between(g.r, 30, 400))
		if p.pinLast {
			b = append(b, ' ')
			b = append(b, pinLastText...)
		}
		g.raw = b
		u := g.assistantLine(m, g.textBlock(g.raw), "null", "assistant/text")
		if p.pinLast {
			g.m.Pins = append(g.m.Pins, Pin{Directive: pinLastText, Line: g.m.Lines, UUID: u.String(), Role: "assistant"})
		}
		// The record just emitted is still in g.rec's storage.
		first := g.m.Lines
		dup := g.rec[:g.lastLen] // the line including its '\n'
		for ; dups > 0; dups-- {
			g.writeRaw(dup, 1)
			g.m.Types["assistant"]++
			g.m.Subtypes["assistant/text"]++
			g.planted(Planted{Kind: DuplicateUUID, Line: g.m.Lines, OtherLine: first, UUID: u.String(),
				Note: "assistant text line written twice, byte for byte"})
		}
	}
	for _, d := range p.msgDefects {
		switch d {
		case EmptyText:
			u := g.assistantLine(m, []byte(`{"type":"text","text":""}`), "null", "assistant/text")
			g.planted(Planted{Kind: d, Line: g.m.Lines, UUID: u.String(), Note: `text block ""`})
		case EmptyContent:
			u := g.assistantLine(m, nil, "null", "assistant/empty")
			g.planted(Planted{Kind: d, Line: g.m.Lines, UUID: u.String(), Note: "assistant line with content []"})
		}
	}

	calls := make([]call, k)
	for i := range calls {
		g.planCall(&calls[i], p, i)
	}
	var first uid
	haveFirst := false
	for i := range calls {
		c := &calls[i]
		c.use = newUUID(g.r)
		if p.defect == OrphanToolResult && i == 0 {
			c.omitUse = true
			g.tick(300, 2000) // the removed line's time passes anyway
			continue
		}
		stop := "null"
		if i == k-1 {
			stop = `"tool_use"`
		}
		g.writeToolUse(m, c, stop)
		if p.inFlight {
			g.planted(Planted{Kind: "in-flight", Line: g.m.Lines, UUID: c.use.String(), ToolUseID: c.id,
				Note: "file ends after this tool_use; no result was written"})
		}
		if !haveFirst {
			first, haveFirst = c.use, true
		}
		if g.o.Progress && !fork {
			g.hookProgress(c)
		}
	}
	if p.inFlight {
		return
	}
	for i := range calls {
		if calls[i].tool == toolTask {
			if g.o.Sidechains && !g.side {
				g.inlineSidechain(&calls[i])
			}
			if g.o.Progress {
				g.agentProgress(&calls[i])
			}
		}
	}
	if fork {
		calls[0].typed = typedWhileRunning[g.r.IntN(len(typedWhileRunning))]
	}
	var forkUses, forkResults []int
	var forkFirst uid
	for i := range calls {
		c := &calls[i]
		last := i == k-1
		if p.defect == OrphanToolUse && i == 0 {
			g.planted(Planted{Kind: OrphanToolUse, Line: c.useLine, UUID: c.use.String(), ToolUseID: c.id,
				Note: "tool_use with no tool_result"})
			continue
		}
		if g.o.Progress && c.tool == toolBash && c.size > 2000 {
			g.bashProgress(c)
		}
		parent := g.tipRef()
		if !last {
			parent = &first
		}
		if fork {
			// Each result hangs off its own tool_use line (the shape of
			// docs/transcript-format.md seen in 2.1.x files), the last one
			// included, whatever progress records came in between.
			use := c.use
			parent = &use
			if g.o.Progress {
				g.progress(g.preHookData(c), "progress/hook_progress", c, c.id, &use, false)
			}
		}
		dangling := last && p.defect == DanglingParent
		if dangling {
			bogus := newUUID(g.r)
			parent = &bogus
			g.tick(30000, 40000)
		}
		u := g.writeResult(c, parent)
		if fork {
			forkUses, forkResults = append(forkUses, c.useLine), append(forkResults, g.m.Lines)
			if i == 0 {
				forkFirst = u
			}
		}
		if c.omitUse {
			g.planted(Planted{Kind: OrphanToolResult, Line: g.m.Lines, UUID: u.String(), ToolUseID: c.id,
				Note: "tool_result whose tool_use line is absent"})
		} else {
			g.m.ToolPairs++
		}
		if last {
			g.setTip(u)
			if dangling {
				g.chainPrompts = 0
				g.planted(Planted{Kind: DanglingParent, Line: g.m.Lines, UUID: u.String(), ToolUseID: c.id,
					Parent: parent.String(), Note: "tool_result whose parentUuid is absent from the file"})
			}
		}
		if g.o.Progress {
			g.postProgress(c, u, last)
		}
	}
	if fork {
		g.planted(Planted{Kind: ParallelFork, Line: forkResults[0], UUID: forkFirst.String(), ToolUseID: calls[0].id,
			Parent: calls[0].use.String(), UseLines: forkUses, ResultLines: forkResults,
			Note: "parallel tool_use lines chained one under the other; each tool_result hangs off its own tool_use line, the first also holds the user's text, the last continues the chain"})
	}
}

// typedWhileRunning are the messages a user types while parallel tools run.
var typedWhileRunning = [...]string{
	"do we need to fix the callers too?",
	"also check the tests under internal/",
	"wait, keep the old flag working for now",
	"and please don't touch the generated files",
}

// planted records a planted defect.
func (g *gen) planted(p Planted) { g.m.Defects = append(g.m.Defects, p) }

// count returns how often d occurs in ds.
func count(ds []Defect, d Defect) int {
	n := 0
	for _, x := range ds {
		if x == d {
			n++
		}
	}
	return n
}
