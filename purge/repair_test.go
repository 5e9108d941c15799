package purge

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
)

func sidechainRec(uuid, parent, typ, content string) string {
	role := typ
	msg := `{"role":"user","content":` + js(content) + `}`
	if typ == "assistant" {
		msg = `{"id":"m-` + uuid + `","role":"assistant","content":[{"type":"text","text":` + js(content) + `}]}`
	}
	_ = role
	return rec("parentUuid", nullable(parent), "isSidechain", true, "agentId", "ag1", "type", typ, "message", raw(msg), "uuid", uuid)
}

func systemRec(uuid, parent, subtype string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "system", "subtype", subtype, "content", "x", "uuid", uuid)
}

// TestChainRepair: a parentUuid naming no record is relinked to the
// logical parent: the nearest earlier user, assistant or system record of
// the same chain.
func TestChainRepair(t *testing.T) {
	cases := []struct {
		name   string
		lines  []string
		o      func(*Options)
		uuid   string // the record whose parent is dangling
		want   string // where it must point now
		relink int
	}{
		{
			name: "previous conversation record",
			lines: []string{
				userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"),
				userPrompt("u2", "gone-1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			uuid: "u2", want: "a1", relink: 1,
		},
		{
			name: "never a progress record",
			lines: []string{
				userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"),
				progress("p1", "a1"), progress("p2", "p1"),
				userPrompt("u2", "gone-1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			o:    func(o *Options) { o.KeepProgress = true },
			uuid: "u2", want: "a1", relink: 1,
		},
		{
			name: "a system record may be the parent",
			lines: []string{
				userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"), systemRec("s1", "a1", "turn_duration"),
				userPrompt("u2", "gone-1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			uuid: "u2", want: "s1", relink: 1,
		},
		{
			name: "never a sidechain record for a main-chain record",
			lines: []string{
				userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"),
				sidechainRec("x1", "", "user", "sub task"), sidechainRec("x2", "x1", "assistant", "sub done"),
				userPrompt("u2", "gone-1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			uuid: "u2", want: "a1", relink: 1,
		},
		{
			name: "a sidechain record relinks within its sidechain",
			lines: []string{
				userPrompt("u1", "", "one"),
				sidechainRec("x1", "", "user", "sub task"), sidechainRec("x2", "x1", "assistant", "sub one"),
				assistantText("a1", "u1", "m1", "ok"),
				sidechainRec("x3", "gone-x", "user", "sub more"), sidechainRec("x4", "x3", "assistant", "sub two"),
				userPrompt("u2", "a1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			uuid: "x3", want: "x2", relink: 1,
		},
		{
			name: "a tool result relinks to its tool_use",
			lines: []string{
				userPrompt("u1", "", "one"),
				assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
				progress("p1", "a1"),
				assistantText("a0", "u1", "m0", "other branch"),
				toolResult("r1", "gone-1", "t1", `"files"`),
				assistantText("a2", "r1", "m2", "ok"),
			},
			o:    func(o *Options) { o.KeepProgress = true },
			uuid: "r1", want: "a1", relink: 1,
		},
		{
			name: "no cycle: a forward reference is skipped",
			lines: []string{
				userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"),
				// x names u2, which comes later; u2 is dangling. Linking u2
				// to x would close a loop.
				systemRec("x", "u2", "turn_duration"),
				userPrompt("u2", "gone-1", "two"), assistantText("a2", "u2", "m2", "ok"),
			},
			uuid: "u2", want: "a1", relink: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			if c.o != nil {
				c.o(&o)
			}
			in := jsonl(c.lines...)
			rep, out := e.purgeBytes(in, o)
			if p := parentOf(t, out, c.uuid); p != c.want {
				t.Errorf("%s relinked to %q, want %q", c.uuid, p, c.want)
			}
			if rep.RelinkedDangling != c.relink {
				t.Errorf("report: %d dangling parents relinked, want %d", rep.RelinkedDangling, c.relink)
			}
			mustCheck(t, out, false)
			if c := index(t, out).ActiveChain(); c.Cycle || c.BrokenAt >= 0 {
				t.Errorf("chain: cycle=%v broken at %d", c.Cycle, c.BrokenAt)
			}
			checkEdits(t, in, out)
			e.invariants(in, rep.Path, o, false)
		})
	}
}

// TestChainRepairLeavesRoots: roots and compact boundaries (null parents,
// a logicalParentUuid naming nothing) are left alone.
func TestChainRepairLeavesRoots(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"), assistantText("a1", "u1", "m1", "ok"),
		rec("parentUuid", nil, "logicalParentUuid", "gone-logical", "isSidechain", false, "type", "system", "subtype", "compact_boundary",
			"content", "Conversation compacted", "compactMetadata", raw(`{"trigger":"auto","preTokens":150000}`), "uuid", "cb"),
		rec("parentUuid", "cb", "isSidechain", false, "type", "user", "isCompactSummary", true,
			"message", raw(`{"role":"user","content":"This session is being continued from a previous conversation."}`), "uuid", "cs"),
		userPrompt("u2", "cs", "two"), assistantText("a2", "u2", "m2", "ok"),
		userPrompt("u3", "", "a new root"), assistantText("a3", "u3", "m3", "ok"),
	)
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	if rep.Changed || !bytes.Equal(in, out) {
		t.Errorf("a file with roots and a boundary was changed (%+v)", rep.Stats)
	}
}

// TestChainRepairSubagent: the dangling parents of subagent files (the
// compaction agent's included) point into the main session on purpose.
func TestChainRepairSubagent(t *testing.T) {
	in := jsonl(
		sidechainRec("x1", "main-session-uuid", "user", "summarise"),
		sidechainRec("x2", "x1", "assistant", "summary"),
	)
	for _, name := range []string{"sess/subagents/agent-acompact-e1f845.jsonl", "sess/subagents/agent-a1.jsonl", "agent-a1.jsonl"} {
		e := newEnv(t)
		p := e.write(name, in)
		rep, out := e.purge(p, e.opts())
		if rep.Changed || !bytes.Equal(in, out) || rep.RelinkedDangling != 0 {
			t.Errorf("%s: subagent parent relinked (%+v)", name, rep.Stats)
		}
	}
}

// TestChainRepairSynth: every planted dangling parent is relinked, and
// the prompts before it are back on the chain.
func TestChainRepairSynth(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 41, Turns: 20, Progress: true, Defects: []synth.Defect{synth.DanglingParent, synth.DanglingParent}})
	if len(m.DefectsOf(synth.DanglingParent)) != 2 {
		t.Fatalf("planted %d dangling parents", len(m.DefectsOf(synth.DanglingParent)))
	}
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	if rep.RelinkedDangling != 2 {
		t.Errorf("relinked %d, want 2", rep.RelinkedDangling)
	}
	for _, d := range m.DefectsOf(synth.DanglingParent) {
		p := parentOf(t, out, d.UUID)
		l := lineOf(out, p)
		if l == nil {
			t.Errorf("%s relinked to %q, not a record", d.UUID, p)
			continue
		}
		if typ := gjson.GetBytes(l, "type").Str; typ == "progress" {
			t.Errorf("%s relinked to a progress record", d.UUID)
		}
	}
	if got := len(chainPrompts(t, out)); got != m.Prompts {
		t.Errorf("%d prompts on the chain after repair, want all %d", got, m.Prompts)
	}
	e.invariants(in, rep.Path, o, false)
}

// TestOrphanToolUse: an unanswered tool_use gets a synthesised is_error
// tool_result right after its message, and the next record continues
// from it.
func TestOrphanToolUse(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"sleep 1000"}`),
		userPrompt("u2", "a1", "never mind"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.SynthesizedResults != 1 {
		t.Errorf("synthesised %d results, want 1", rep.SynthesizedResults)
	}
	lines := splitLines(out)
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	s := gjson.ParseBytes(lines[2])
	if !isSynthResult(lines[2]) {
		t.Fatalf("line 3 is not a synthesised result: %s", lines[2])
	}
	if s.Get("parentUuid").Str != "a1" || s.Get("message.content.0.tool_use_id").Str != "t1" || s.Get("message.role").Str != "user" {
		t.Errorf("synthesised result: %s", lines[2])
	}
	if s.Get("uuid").Str == "" || lineOf(in, s.Get("uuid").Str) != nil {
		t.Errorf("synthesised result uuid %q", s.Get("uuid").Str)
	}
	if p := parentOf(t, out, "u2"); p != s.Get("uuid").Str {
		t.Errorf("u2 hangs off %q, want the synthesised result", p)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestOrphanToolUseParallel: of two parallel calls, only the unanswered
// one gets a result.
func TestOrphanToolUseParallel(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "Read", `{"file_path":"/a"}`),
		assistantToolUse("a2", "a1", "m1", "t2", "Read", `{"file_path":"/b"}`),
		toolResult("r2", "a2", "t2", `"b"`),
		assistantText("a3", "r2", "m2", "ok"),
		userPrompt("u2", "a3", "two"),
		assistantText("a4", "u2", "m3", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.SynthesizedResults != 1 {
		t.Errorf("synthesised %d results, want 1", rep.SynthesizedResults)
	}
	n := 0
	for _, l := range splitLines(out) {
		if isSynthResult(l) {
			n++
			if id := gjson.GetBytes(l, "message.content.#.tool_use_id").Raw; id != `["t1"]` {
				t.Errorf("synthesised ids %s, want [t1]", id)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d synthesised records", n)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestOrphanToolResult: a tool_result without its tool_use is removed; a
// record left empty goes (never content: []), its child relinked.
func TestOrphanToolResult(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "thinking about it"),
		toolResult("r1", "a1", "t-none", `"stray"`),
		assistantText("a2", "r1", "m2", "ok"),
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m3", "ok"),
		// A result beside text: only the block goes.
		rec("parentUuid", "a3", "isSidechain", false, "type", "user",
			"message", raw(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t-gone","content":"x"},{"type":"text","text":"and a question"}]}`), "uuid", "u3"),
		assistantText("a4", "u3", "m4", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.RemovedOrphanResult != 2 {
		t.Errorf("removed %d orphan results, want 2", rep.RemovedOrphanResult)
	}
	if lineOf(out, "r1") != nil {
		t.Error("the record holding only an orphan result is still there")
	}
	if p := parentOf(t, out, "a2"); p != "a1" {
		t.Errorf("a2 relinked to %q, want a1", p)
	}
	if c := gjson.GetBytes(lineOf(out, "u3"), "message.content").Raw; c != `[{"type":"text","text":"and a question"}]` {
		t.Errorf("u3 content = %s", c)
	}
	if bytes.Contains(out, []byte(`"content":[]`)) {
		t.Error("content: [] in the output")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestEmptyContentRepair: empty content records go, empty text blocks
// are removed.
func TestEmptyContentRepair(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant", "message", raw(`{"id":"m1","role":"assistant","content":[]}`), "uuid", "a1"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "assistant", "message", raw(`{"id":"m1","role":"assistant","content":[{"type":"text","text":""},{"type":"text","text":"real"}]}`), "uuid", "a2"),
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m3", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if lineOf(out, "a1") != nil || rep.DroppedEmpty != 1 {
		t.Errorf("empty record kept (dropped %d)", rep.DroppedEmpty)
	}
	if p := parentOf(t, out, "a2"); p != "u1" {
		t.Errorf("a2 relinked to %q", p)
	}
	if c := gjson.GetBytes(lineOf(out, "a2"), "message.content").Raw; c != `[{"type":"text","text":"real"}]` {
		t.Errorf("a2 content = %s", c)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}
