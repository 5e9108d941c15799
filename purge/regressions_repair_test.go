// Regression tests for claude-context-manager's purge defects in its
// repairs: empty content left behind, orphan calls kept, results paired
// across the file, parents relinked to any line, empty records left by
// thinking removal, a compaction injected by default
// (docs/earlier-tools.md).

package purge

import (
	"bytes"
	"testing"

	"ccm/internal/synth"

	"github.com/tidwall/gjson"
)

// claude-context-manager: removing an orphan tool_result left "content": []
// (rejected by the API).
func TestNoEmptyContent(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 106, Turns: 20, Defects: []synth.Defect{synth.OrphanToolResult, synth.EmptyContent, synth.EmptyText}})
	hand := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		toolResult("r1", "a1", "t-none", `"stray"`),
		assistantText("a2", "r1", "m2", "ok"),
	)
	for _, data := range [][]byte{in, hand} {
		e := newEnv(t)
		rep, out := e.purgeBytes(data, e.opts())
		for _, l := range objectLines(out) {
			c := gjson.GetBytes(l, "message.content")
			if c.IsArray() && len(c.Array()) == 0 {
				t.Errorf("content: [] in %.160s", l)
			}
		}
		mustCheck(t, out, false)
		e.invariants(data, rep.Path, e.opts(), false)
	}
}

// claude-context-manager: an orphan tool_use alone in its record was kept, so
// the API error stayed. It gets a synthesised is_error result.
func TestOrphanToolUseAlone(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 107, Turns: 20, Defects: []synth.Defect{synth.OrphanToolUse}})
	if n := len(checkErrors(t, in, false)); n == 0 {
		t.Fatal("fixture passes check")
	}
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	d := m.DefectsOf(synth.OrphanToolUse)[0]
	found := false
	for _, l := range splitLines(out) {
		if isSynthResult(l) && gjson.GetBytes(l, "message.content.0.tool_use_id").Str == d.ToolUseID {
			found = true
		}
	}
	if !found {
		t.Errorf("no synthesised result for %s", d.ToolUseID)
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// claude-context-manager: pairing was global: a result whose tool_use exists
// anywhere counted as paired, across messages and compaction boundaries. The
// API wants the result in the very next message.
func TestPairingByAdjacency(t *testing.T) {
	t.Run("result two messages late", func(t *testing.T) {
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			userPrompt("u2", "a1", "hm?"),
			assistantText("a2", "u2", "m2", "waiting"),
			toolResult("r1", "a2", "t1", `"late"`),
			assistantText("a3", "r1", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		if rep.SynthesizedResults != 1 || rep.RemovedOrphanResult != 1 {
			t.Errorf("synthesised %d, removed %d; want 1 and 1", rep.SynthesizedResults, rep.RemovedOrphanResult)
		}
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
	t.Run("across a compaction", func(t *testing.T) {
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			rec("parentUuid", nil, "logicalParentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "compact_boundary",
				"content", "Conversation compacted", "uuid", "cb"),
			rec("parentUuid", "cb", "isSidechain", false, "type", "user", "isCompactSummary", true,
				"message", raw(`{"role":"user","content":"Summary of the earlier conversation."}`), "uuid", "cs"),
			assistantText("a2", "cs", "m2", "continuing"),
			toolResult("r1", "a2", "t1", `"from before the boundary"`),
			assistantText("a3", "r1", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		if rep.RemovedOrphanResult != 1 {
			t.Errorf("removed %d orphan results, want 1", rep.RemovedOrphanResult)
		}
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
	t.Run("duplicate tool_use id", func(t *testing.T) {
		// The same tool id in two messages (a retried request written
		// twice): the API rejects duplicate ids.
		in := jsonl(
			userPrompt("u1", "", "one"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
			toolResult("r1", "a1", "t1", `"first"`),
			assistantToolUse("a2", "r1", "m2", "t1", "Bash", `{"command":"ls"}`),
			toolResult("r2", "a2", "t1", `"second"`),
			assistantText("a3", "r2", "m3", "ok"),
		)
		e := newEnv(t)
		rep, out := e.purgeBytes(in, e.opts())
		mustCheck(t, out, false)
		e.invariants(in, rep.Path, e.opts(), false)
	})
}

// claude-context-manager: the parent relink took the previous line with any
// uuid (progress, system, sidechain, other branch). Relinks go to the logical
// parent, and saved_hook_context records sharing one uuid are not a cycle.
func TestRelinkLogicalParent(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		// Another branch (a rewind) after the chain's last record.
		userPrompt("u1b", "a1", "abandoned"),
		assistantText("a1b", "u1b", "m1b", "abandoned reply"),
		progress("p1", "a1b"),
		sidechainRec("x1", "", "user", "sub task"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "attachment", "attachment", raw(`{"type":"hook_additional_context","content":"x"}`), "uuid", "h1"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "saved_hook_context", "content", "ctx", "uuid", "shc"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "system", "subtype", "saved_hook_context", "content", "ctx", "uuid", "shc"),
		userPrompt("u2", "gone", "two"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	e := newEnv(t)
	o := e.opts()
	o.KeepProgress = true
	rep, out := e.purgeBytes(in, o)
	p := parentOf(t, out, "u2")
	l := lineOf(out, p)
	if l == nil {
		t.Fatalf("u2 relinked to %q, not a record", p)
	}
	r := gjson.ParseBytes(l)
	switch {
	case r.Get("type").Str == "progress", r.Get("type").Str == "attachment", r.Get("isSidechain").Bool():
		t.Errorf("u2 relinked to a %s record (sidechain %v)", r.Get("type").Str, r.Get("isSidechain").Bool())
	}
	c := index(t, out).ActiveChain()
	if c.Cycle || c.BrokenAt >= 0 {
		t.Errorf("chain: cycle %v, broken at %d", c.Cycle, c.BrokenAt)
	}
	// u1 (the first prompt) is reachable again.
	if !chainPrompts(t, out)["u1"] {
		t.Error("u1 is not on the repaired chain")
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// claude-context-manager: --remove-thinking left empty assistant records,
// stripped the latest turn's thinking and removed redacted_thinking
// uncounted.
func TestOlderThinkingRemoved(t *testing.T) {
	in := thinkingFixture()
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	for _, l := range objectLines(out) {
		if c := gjson.GetBytes(l, "message.content"); c.IsArray() && len(c.Array()) == 0 {
			t.Errorf("empty record left: %s", l)
		}
	}
	if !bytes.Equal(lineOf(out, "a6"), lineOf(in, "a6")) {
		t.Error("the latest thinking changed")
	}
	// m1, m2 and the redacted block of m3.
	if rep.ThinkingRemoved != 3 {
		t.Errorf("counted %d thinking blocks removed, want 3 (redacted counts)", rep.ThinkingRemoved)
	}
}

// claude-context-manager: a synthetic compaction was injected by default (a
// fake summary, no boundary, a "now" timestamp out of order). By default
// nothing is injected; when asked for, the pair is a real one.
func TestNoInjectionByDefault(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 111, Turns: 12, Thinking: true})
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if n := bytes.Count(out, []byte(`"isCompactSummary":true`)); n != 0 {
		t.Errorf("%d compaction summaries injected by default", n)
	}
	if bytes.Contains(out, []byte(`"compact_boundary"`)) {
		t.Error("compact boundary injected by default")
	}
	e.invariants(in, rep.Path, e.opts(), false)

	e2 := newEnv(t)
	o := e2.opts()
	o.InjectCompaction = true
	o.KeepTurns = 3
	rep, out = e2.purgeBytes(in, o)
	lines := objectLines(out)
	b := -1
	for i, l := range lines {
		if gjson.GetBytes(l, "subtype").Str == "compact_boundary" {
			b = i
		}
	}
	if b < 0 || b+1 >= len(lines) {
		t.Fatal("no compact boundary injected")
	}
	bd, sum := gjson.ParseBytes(lines[b]), gjson.ParseBytes(lines[b+1])
	if bd.Get("parentUuid").Type != gjson.Null || bd.Get("logicalParentUuid").Str == "" || !bd.Get("compactMetadata").IsObject() {
		t.Errorf("boundary: %s", lines[b])
	}
	if !sum.Get("isCompactSummary").Bool() || sum.Get("parentUuid").Str != bd.Get("uuid").Str {
		t.Errorf("summary: %.300s", lines[b+1])
	}
	// Timestamps stay in order around the pair.
	prev := ""
	for i := b - 1; i >= 0 && prev == ""; i-- {
		prev = gjson.GetBytes(lines[i], "timestamp").Str
	}
	next := ""
	for i := b + 2; i < len(lines) && next == ""; i++ {
		next = gjson.GetBytes(lines[i], "timestamp").Str
	}
	for _, ts := range []string{bd.Get("timestamp").Str, sum.Get("timestamp").Str} {
		if ts < prev || next != "" && ts > next {
			t.Errorf("injected timestamp %s out of order (%s .. %s)", ts, prev, next)
		}
	}
	// The kept turns are what resume sends.
	if got := len(chainPrompts(t, out)); got != 3 {
		t.Errorf("%d prompts after the injected compaction, want 3", got)
	}
	mustCheck(t, out, false)
	// Purging again does not inject twice.
	rep2, again := e2.purge(rep.Path, o)
	if rep2.Changed || !bytes.Equal(again, out) {
		t.Error("a second purge with --inject-compaction changed the file")
	}
}
