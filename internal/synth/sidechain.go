package synth

import (
	"hash/fnv"
	"io"
)

// This file writes what hangs off the active chain: subagent files, inline
// sidechains and rewind dead branches.

// WriteSubagent writes a subagent (sidechain) transcript such as
// <session>/subagents/agent-<agentID>.jsonl: every line carries
// isSidechain:true and agentId, the first record is its own root (a user
// prompt with parentUuid null), and the rest is tool rounds ending with one
// reply. opt is read as for Generate, with the same SessionID and Cwd, but
// Turns (or TargetBytes) counts tool rounds, and only Thinking, Progress,
// Images (in tool results) and Defects apply; compactions, rewinds,
// sidechains, pins and the summary do not. The random stream differs from
// the main file's, so a main file and its subagent do not repeat each other.
func WriteSubagent(w io.Writer, opt Options, agentID string) (Manifest, error) {
	o, err := opt.normalize()
	if err != nil {
		return Manifest{}, err
	}
	o.Compactions, o.Rewinds, o.Sidechains, o.Pins, o.InFlight = 0, 0, false, false, false
	h := fnv.New64a()
	h.Write([]byte(agentID))
	g := newGen(w, o, 2+h.Sum64())
	g.side = true
	g.envSide = g.envelope(true, agentID, g.slug)
	g.m.AgentID = agentID
	g.schedule()
	for ti := 0; ; ti++ {
		if o.TargetBytes > 0 {
			g.frac = float64(g.m.Bytes) / float64(o.TargetBytes)
		} else {
			g.frac = float64(ti) / float64(o.Turns)
		}
		last := o.TargetBytes == 0 && ti == o.Turns-1
		g.arm(last)
		g.turn(ti, false)
		if last || g.out.Flush() != nil {
			break
		}
		if o.TargetBytes > 0 && g.m.Bytes >= o.TargetBytes {
			if g.pending() {
				g.arm(true)
				g.turn(ti+1, false)
			}
			break
		}
	}
	g.finalMessage()
	if count(g.defs, TornLastLine) > 0 {
		g.tornLine()
	}
	return g.finish()
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
