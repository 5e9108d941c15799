package purge

import (
	"ccm/transcript"
)

// planDangling relinks every record whose parentUuid names no record in
// the file: the real client silently drops all history before such a
// record. A tool result is linked to the assistant record holding its
// tool_use, so the walk attaches it; anything else to the nearest earlier
// kept user, assistant or system record of the same chain (never a
// progress record), skipping any choice that would close a cycle.
// A record with nothing earlier to link to becomes a root. Compact
// boundaries and real roots have no parent and are left alone.
func (p *Plan) planDangling() {
	p.relinkChildren()
	ix := p.scan.ix
	for i := range p.scan.ix.Len() {
		if p.drop[i] != keep {
			continue
		}
		par := p.effectiveParent(i)
		if par == "" {
			continue
		}
		if _, ok := ix.Lookup(par); ok {
			continue
		}
		target := p.toolUseHolder(i)
		if target < 0 {
			target = p.nearestEarlier(i)
		}
		if target < 0 {
			// Nothing earlier to link to: the session starts mid-way
			// (or every candidate would close a loop). The record
			// becomes a root, which is what the walk already makes of
			// it, and the file no longer names a record it lacks.
			p.setParent(i, "", "its parent is not in the file and nothing earlier can take its place: made a root (the session starts mid-way)")
			p.Stats.RootedDangling++
			continue
		}
		u := p.rec(target).UUID()
		p.setParent(i, u, "its parent is not in the file: linked to the record it answers, or the nearest earlier one")
		p.Stats.RelinkedDangling++
	}
}

// planCycles breaks parent loops, which stop the walk (ccm check calls
// them an error). Claude Code writes a record after its parent, so the
// link of a loop that points forward in the file (or at the record
// itself) is the broken one: that record is relinked to the nearest
// earlier record of its chain, or becomes a root when there is none.
func (p *Plan) planCycles() {
	ix := p.scan.ix
	for i := range p.scan.ix.Len() {
		if p.drop[i] != keep {
			continue
		}
		par := p.effectiveParent(i)
		if par == "" {
			continue
		}
		j, ok := ix.Lookup(par)
		if !ok || j < i || !p.wouldCycle(i, j) {
			continue
		}
		if target := p.nearestEarlier(i); target >= 0 {
			u := p.rec(target).UUID()
			p.setParent(i, u, "its parent link closes a loop: linked to the nearest earlier record of its chain")
		} else {
			p.setParent(i, "", "its parent link closes a loop: made a root")
		}
		p.Stats.BrokenCycles++
	}
}

// toolUseHolder returns the kept earlier assistant record holding the
// tool_use that record i's first tool_result answers, or -1.
func (p *Plan) toolUseHolder(i int) int {
	f := p.rec(i)
	if f.Type != transcript.TypeUser || f.NumBlocks() == 0 || f.Block(0).Type != transcript.BlockToolResult {
		return -1
	}
	id := f.Block(0).ID
	for j := i - 1; j >= 0; j-- {
		g := p.rec(j)
		if g.Type != transcript.TypeAssistant || p.drop[j] != keep || g.Sidechain != f.Sidechain {
			continue
		}
		for _, b := range g.Blocks() {
			if b.Type == transcript.BlockToolUse && b.ID == id {
				if p.wouldCycle(i, j) {
					return -1
				}
				return j
			}
		}
	}
	return -1
}

// nearestEarlier returns the nearest earlier kept user, assistant or
// system record on the same side (main chain or sidechain) that does not
// close a cycle, or -1.
func (p *Plan) nearestEarlier(i int) int {
	f := p.rec(i)
	for j := i - 1; j >= 0; j-- {
		g := p.rec(j)
		if p.drop[j] != keep || g.Sidechain != f.Sidechain || !g.HasUUID {
			continue
		}
		switch g.Type {
		case transcript.TypeUser, transcript.TypeAssistant, transcript.TypeSystem:
		default:
			continue
		}
		if !p.wouldCycle(i, j) {
			return j
		}
	}
	return -1
}

// wouldCycle reports whether linking record i to parent j closes a loop:
// whether i is among j's ancestors.
func (p *Plan) wouldCycle(i, j int) bool {
	ix := p.scan.ix
	me := p.rec(i).UUID()
	cur := j
	for steps := 0; steps <= p.scan.ix.Len(); steps++ {
		if p.rec(cur).UUID() == me {
			return true
		}
		par := p.effectiveParent(cur)
		if par == "" {
			return false
		}
		next, ok := ix.Lookup(par)
		if !ok {
			return false
		}
		cur = next
	}
	return true
}

// virtual builds the index of the structure the plan produces: kept
// records with their new parents and remaining blocks, plus synthesised
// tool results. orig maps each of its records to the original index (-1
// for a synthesised one, whose synthResult is in synths at that position).
func (p *Plan) virtual() (vix *transcript.Index, orig []int, synths []*synthResult) {
	// The copies' new parents and blocks go to an overlay, which goes
	// away with the virtual index, not into the scan's index.
	ov := p.scan.ix.Overlay()
	recs := make([]transcript.Facts, 0, p.kept()+len(p.synth)+2)
	for i := range p.scan.ix.Len() {
		if p.drop[i] != keep {
			continue
		}
		f := *p.rec(i) // a copy
		ov.Adopt(&f)
		if p.inject != nil && p.inject.before == i {
			for _, jf := range p.inject.facts(f.Sidechain) {
				recs = append(recs, jf)
				orig = append(orig, -1)
				synths = append(synths, nil)
			}
		}
		f.SetParent(p.effectiveParent(i))
		if rn := p.renames[i]; rn != nil {
			bs := f.Blocks()
			for b, id := range rn {
				bs[b].ID = id
			}
			f.SetBlocks(bs)
		}
		if rm := p.remove[i]; rm != nil {
			var bs []transcript.BlockFacts
			for b, bf := range f.Blocks() {
				if !rm[b] {
					bs = append(bs, bf)
				}
			}
			f.SetBlocks(bs)
			f.ContentEmpty = len(bs) == 0
		}
		recs = append(recs, f)
		orig = append(orig, i)
		synths = append(synths, nil)
		if s := p.synth[i]; s != nil {
			sf := transcript.Facts{Line: f.Line, Type: transcript.TypeUser, HasUUID: true, Sidechain: f.Sidechain}
			ov.Adopt(&sf)
			sf.SetTypeName("user")
			sf.SetRole("user")
			sf.SetUUID(s.UUID)
			sf.SetParent(s.Parent)
			var bs []transcript.BlockFacts
			for _, id := range s.IDs {
				bs = append(bs, transcript.BlockFacts{Type: transcript.BlockToolResult, ID: id, IsError: true})
			}
			sf.SetBlocks(bs)
			recs = append(recs, sf)
			orig = append(orig, -1)
			synths = append(synths, s)
		}
	}
	return transcript.NewIndex(recs), orig, synths
}

// planToolPairs applies the API's adjacency rule to the chain the plan
// produces, repeating until it holds: thinking without a signature (or
// redacted thinking without data) is removed; an unanswered tool_use gets a
// synthesised is_error tool_result right after its message; an orphan
// tool_result block is removed; empty content and empty text are removed;
// a record left with nothing is dropped and its children relinked. The
// in-flight last turn of a live session is left alone.
func (p *Plan) planToolPairs() {
	for round := 0; round < 8; round++ {
		p.relinkChildren()
		vix, orig, _ := p.virtual()
		c := vix.ActiveChain()
		msgs := vix.Messages(c)
		changed := false
		byLine := map[int]int{} // line → original index
		for _, i := range orig {
			if i >= 0 {
				byLine[int(p.rec(i).Line)] = i
			}
		}
		if p.renameDuplicates(vix, orig, msgs) {
			continue // re-check with the new ids
		}
		for _, f := range vix.CheckAPI(c, msgs) {
			i, ok := byLine[f.Line]
			if !ok {
				continue
			}
			switch f.Code {
			case "tool-use-in-flight":
				if p.opt.Live {
					continue
				}
				fallthrough
			case "orphan-tool-use":
				if p.synthesizeFor(vix, orig, c, msgs, i) {
					changed = true
				}
			case "orphan-tool-result":
				if p.removeOrphanResults(i, msgs, vix, orig) {
					changed = true
				}
			case "empty-content":
				p.setDrop(i, dropEmpty)
				changed = true
			case "thinking-unsigned", "thinking-fake-signature", "redacted-thinking-empty":
				// The API rejects these whatever else happens: removing them
				// is a repair, even under --keep-thinking or --repair-only,
				// and even in the latest message.
				for b, bf := range p.rec(i).Blocks() {
					broken := bf.Type == transcript.BlockThinking && (bf.NoSignature || bf.FakeSignature) ||
						bf.Type == transcript.BlockRedactedThinking && bf.Empty
					if broken && !p.isRemoved(i, b) {
						p.removeBlock(i, b)
						p.Stats.RemovedBrokenThinking++
						changed = true
					}
				}
				if p.allRemoved(i) {
					p.setDrop(i, dropEmpty)
				}
			case "empty-text":
				for b, bf := range p.rec(i).Blocks() {
					if bf.Type == transcript.BlockText && bf.Empty && !p.isRemoved(i, b) {
						p.removeBlock(i, b)
						p.Stats.RemovedEmptyText++
						changed = true
					}
				}
				if p.allRemoved(i) {
					p.setDrop(i, dropEmpty)
				}
			}
		}
		if !changed {
			return
		}
	}
}

func (p *Plan) isRemoved(i, b int) bool {
	rm := p.remove[i]
	return rm != nil && rm[b]
}

// synthesizeFor adds a tool_result record for the unanswered tool calls of
// the assistant message holding record i, after that message's last record,
// and relinks that record's child on the chain to it.
func (p *Plan) synthesizeFor(vix *transcript.Index, orig []int, c *transcript.Chain, msgs []transcript.Message, i int) bool {
	line := p.rec(i).Line
	for k := range msgs {
		m := &msgs[k]
		holds := false
		for _, r := range m.Recs {
			if vix.Rec(r).Line == line {
				holds = true
				break
			}
		}
		if !holds {
			continue
		}
		lastV := m.Recs[len(m.Recs)-1]
		last := orig[lastV]
		if last < 0 || p.synth[last] != nil {
			return false
		}
		answered := map[string]bool{}
		if k+1 < len(msgs) {
			for _, r := range msgs[k+1].Recs {
				for _, b := range vix.Rec(r).Blocks() {
					if b.Type == transcript.BlockToolResult {
						answered[b.ID] = true
					}
				}
			}
		}
		s := &synthResult{After: last, Parent: p.rec(last).UUID()}
		for _, r := range m.Recs {
			for _, b := range vix.Rec(r).Blocks() {
				if b.Type == transcript.BlockToolUse && !answered[b.ID] {
					s.IDs = append(s.IDs, b.ID)
				}
			}
		}
		if len(s.IDs) == 0 {
			return false
		}
		s.UUID = newUUID(append([]string{"ccm-synth", s.Parent}, s.IDs...)...)
		p.synth[last] = s
		p.Stats.SynthesizedResults += len(s.IDs)
		// The chain record after the message continues from the new result.
		for pos, r := range c.Recs {
			if r == lastV && pos+1 < len(c.Recs) {
				next := orig[c.Recs[pos+1]]
				if next >= 0 && p.effectiveParent(next) == s.Parent {
					u := s.UUID
					p.setParent(next, u, "continues from the tool results added for the unanswered calls before it")
				}
				break
			}
		}
		return true
	}
	return false
}

// removeOrphanResults removes the tool_result blocks of record i that have
// no tool_use in the previous message; a record left empty is dropped.
func (p *Plan) removeOrphanResults(i int, msgs []transcript.Message, vix *transcript.Index, orig []int) bool {
	line := p.rec(i).Line
	prev := map[string]bool{}
	for k := range msgs {
		found := false
		for _, r := range msgs[k].Recs {
			if vix.Rec(r).Line == line && orig[r] == i {
				found = true
			}
		}
		if !found {
			continue
		}
		if k > 0 && msgs[k-1].Role == "assistant" {
			for _, r := range msgs[k-1].Recs {
				for _, b := range vix.Rec(r).Blocks() {
					if b.Type == transcript.BlockToolUse {
						prev[b.ID] = true
					}
				}
			}
		}
		break
	}
	changed := false
	for b, bf := range p.rec(i).Blocks() {
		if bf.Type == transcript.BlockToolResult && !prev[bf.ID] && !p.isRemoved(i, b) {
			p.removeBlock(i, b)
			p.Stats.RemovedOrphanResult++
			changed = true
		}
	}
	if p.allRemoved(i) {
		p.setDrop(i, dropOrphanResult)
	}
	return changed
}

// renameDuplicates gives the later of two tool calls with the same id on
// the chain a new id, in its tool_use block and in the tool_result of the
// next message that answers it. The API rejects duplicate ids; renaming
// keeps both calls and both results (a retried request written twice).
func (p *Plan) renameDuplicates(vix *transcript.Index, orig []int, msgs []transcript.Message) bool {
	seen := map[string]bool{}
	changed := false
	for k := range msgs {
		m := &msgs[k]
		if m.Role != "assistant" {
			continue
		}
		for _, ref := range m.Blocks {
			if ref.Block < 0 {
				continue
			}
			b := vix.Rec(ref.Rec).Block(ref.Block)
			if b.Type != transcript.BlockToolUse {
				continue
			}
			if !seen[b.ID] {
				seen[b.ID] = true
				continue
			}
			i := orig[ref.Rec]
			if i < 0 {
				continue
			}
			newID := b.ID + "_ccm" + newUUID("dup", p.rec(i).UUID(), b.ID)[:8]
			p.rename(i, ref.Block, newID)
			if k+1 < len(msgs) {
				for _, r2 := range msgs[k+1].Blocks {
					if r2.Block < 0 || orig[r2.Rec] < 0 {
						continue
					}
					if rb := vix.Rec(r2.Rec).Block(r2.Block); rb.Type == transcript.BlockToolResult && rb.ID == b.ID {
						p.rename(orig[r2.Rec], r2.Block, newID)
						break
					}
				}
			}
			p.Stats.RenamedDuplicateIDs++
			changed = true
		}
	}
	return changed
}

func (p *Plan) rename(i, b int, id string) {
	if p.renames[i] == nil {
		p.renames[i] = map[int]string{}
	}
	p.renames[i][b] = id
}
