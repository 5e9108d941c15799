package purge

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
	"ccm/transcript"
	"ccm/transcript/rewrite"
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

// inFlight is a session whose last turn is running a tool right now.
func inFlight() []byte {
	return jsonl(
		userPrompt("u1", "", "one"),
		assistantText("a1", "u1", "m1", "ok"),
		userPrompt("u2", "a1", "/purge"),
		assistantToolUse("a2", "u2", "m2", "t9", "Bash", `{"command":"ccm purge --current -v"}`),
	)
}

// TestInFlightLive: the in-flight last turn of a live session (--current)
// is left alone; purged as a file, the call gets a result.
func TestInFlightLive(t *testing.T) {
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("live session: the in-flight call was repaired (%+v)", rep.Stats)
	}
	o.Live = false
	rep, out = e.purgeBytes(in, o)
	if rep.SynthesizedResults != 1 {
		t.Errorf("not live: %d results synthesised, want 1", rep.SynthesizedResults)
	}
	if l := splitLines(out); !isSynthResult(l[len(l)-1]) {
		t.Errorf("last line is not the synthesised result: %s", l[len(l)-1])
	}
	mustCheck(t, out, false)
}

// TestLiveWindow: a transcript written to within LiveWindow is purged as
// live (ccm purge run from inside Claude Code on its own session, named by
// path); one untouched for longer is not.
func TestLiveWindow(t *testing.T) {
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.LiveWindow = ActiveWindow
	p := e.write("fresh.jsonl", in)
	rep, out := e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("just written: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
	p = e.write("old.jsonl", in)
	old := time.Now().Add(-ActiveWindow - time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	rep, _ = e.purge(p, o)
	if rep.Live || rep.SynthesizedResults != 1 {
		t.Errorf("untouched for 3 minutes: live %v, %d results synthesised, want 1", rep.Live, rep.SynthesizedResults)
	}
}

// TestLiveNeedsWriter: a file the user names that was just written but
// that no process holds open for writing (a fresh copy, a checkout) is
// not live; while another process holds it open for writing it is.
func TestLiveNeedsWriter(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: writers cannot be told here, the mtime rule applies")
	}
	in := inFlight()
	e := newEnv(t)
	o := e.opts()
	o.LiveWindow = ActiveWindow
	o.LiveNeedsWriter = true
	p := e.write("copied.jsonl", in)
	rep, _ := e.purge(p, o)
	if rep.Live || rep.SynthesizedResults != 1 {
		t.Errorf("fresh copy without writer: live %v, %d results synthesised, want 1", rep.Live, rep.SynthesizedResults)
	}
	p = e.write("held.jsonl", in)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer func() { child.Process.Kill(); child.Wait() }()
	rep, out := e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("held open for writing: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
	// Claude Code opens the file by path for each line: between two lines
	// its process, running in the transcript's project, is the sign.
	cwd := t.TempDir()
	dir := filepath.Join(t.TempDir(), transcript.ProjectDirName(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(dir, "running.jsonl")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(sleep, claude); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command(claude, "30")
	cc.Dir = cwd
	if err := cc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cc.Process.Kill(); cc.Wait() }()
	rep, out = e.purge(p, o)
	if !rep.Live || rep.SynthesizedResults != 0 || !bytes.Equal(in, out) {
		t.Errorf("claude running in its project: live %v, %d results synthesised", rep.Live, rep.SynthesizedResults)
	}
}

// TestInFlightLiveSynth: the generator's in-flight ending, with progress
// records in the running turn, stays byte for byte in a live purge.
func TestInFlightLiveSynth(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 51, Turns: 6, Progress: true, Thinking: true, InFlight: true, Version: "2.1.39"})
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != 0 {
		t.Errorf("live: %d results synthesised", rep.SynthesizedResults)
	}
	// The in-flight message and everything after it are byte-identical,
	// and the running turn keeps its progress records (Claude Code may
	// still name them as parents).
	lines := splitLines(in)
	lastPrompt, lastUse := -1, -1
	for i, l := range lines {
		if isObject(l) && isUserPrompt(l) {
			lastPrompt = i
		}
		if bytes.Contains(l, []byte(`"type":"tool_use"`)) {
			lastUse = i
		}
	}
	tail := bytes.Join(lines[lastUse:], []byte{'\n'})
	if !bytes.HasSuffix(out, append(tail, '\n')) {
		t.Error("the in-flight call or what follows it changed in a live purge")
	}
	for _, l := range lines[lastPrompt:] {
		if gjson.GetBytes(l, "type").Str == "progress" && lineOf(out, gjson.GetBytes(l, "uuid").Str) == nil {
			t.Errorf("a progress record of the running turn was dropped: %.120s", l)
		}
	}
	mustCheck(t, out, false)
}

// TestToolPairSynth: every planted pairing defect is repaired.
func TestToolPairSynth(t *testing.T) {
	in, m := gen(t, synth.Options{Seed: 61, Turns: 30, Thinking: true, Defects: []synth.Defect{
		synth.OrphanToolUse, synth.OrphanToolUse, synth.OrphanToolResult, synth.EmptyContent, synth.EmptyText}})
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	if rep.SynthesizedResults != len(m.DefectsOf(synth.OrphanToolUse)) {
		t.Errorf("synthesised %d, planted %d orphan tool_uses", rep.SynthesizedResults, len(m.DefectsOf(synth.OrphanToolUse)))
	}
	// The generator hangs an orphan result off the round's other
	// tool_use line: a dead branch the resume walk never sends. Whether it
	// stays or goes, it must not be on the chain.
	ix := index(t, out)
	c := ix.ActiveChain()
	for _, d := range m.DefectsOf(synth.OrphanToolResult) {
		if i, ok := ix.Lookup(d.UUID); ok && c.Reached(i) {
			t.Errorf("orphan result %s is on the active chain", d.ToolUseID)
		}
	}
	mustCheck(t, out, false)
	e.invariants(in, rep.Path, o, false)
}

// TestRepairUnsignedThinking: a thinking block without a signature is
// rejected by the API wherever it is sent. With --keep-thinking (or
// --repair-only) the old unsigned block must still go, or the purged
// file fails ccm check.
func TestRepairUnsignedThinking(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"no signature here"}]}`), "uuid", "a1"),
		assistantText("a2", "a1", "m1", "answer"),
		userPrompt("u2", "a2", "two"),
		assistantThinking("a3", "u2", "m2", "signed", sig),
		assistantText("a4", "a3", "m2", "ok"),
	)
	if len(checkErrors(t, in, false)) == 0 {
		t.Fatal("the fixture passes check")
	}
	for _, name := range []string{"keep-thinking", "repair-only"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.KeepThinking = name == "keep-thinking"
			o.RepairOnly = name == "repair-only"
			rep, out := e.purgeBytes(in, o)
			mustCheck(t, out, false)
			if !bytes.Equal(lineOf(out, "a3"), lineOf(in, "a3")) {
				t.Error("the latest message's signed thinking changed")
			}
			e.invariants(in, rep.Path, o, false)
		})
	}
}

// TestLiveTipKept: in a live purge the records Claude Code may still name
// as parents (the running turn's progress records, the in-flight call)
// stay, so what it appends after the purge attaches to the chain.
func TestLiveTipKept(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantThinking("a0", "u1", "m0", "old", sig),
		assistantText("a1", "a0", "m0", "ok"),
		progress("p0", "a1"),
		userPrompt("u2", "p0", "/purge"),
		assistantToolUse("a2", "u2", "m2", "t1", "Bash", `{"command":"ccm purge --current"}`),
		progress("p1", "a2"),
	)
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.Live = true
	rep, _ := e.purge(p, o)
	if rep.DroppedProgress != 1 || rep.ThinkingRemoved != 1 {
		t.Errorf("live purge: %+v", rep.Stats)
	}
	// Claude Code carries on from the record it wrote last.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(toolResult("r1", "p1", "t1", `"purged"`) + "\n" + assistantText("a3", "r1", "m3", "done") + "\n" + userPrompt("u3", "a3", "thanks") + "\n")
	f.Close()
	out := readFile(t, p)
	mustCheck(t, out, false)
	for _, u := range []string{"u1", "u2", "u3"} {
		if !chainPrompts(t, out)[u] {
			t.Errorf("prompt %s is not on the chain after Claude Code's appends", u)
		}
	}
}

// One transcript has one sidecar lock, whether it is named through a
// symlink or by its real path.
func TestLockPathThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(real, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if a, b := rewrite.LockPath("/locks", real), rewrite.LockPath("/locks", link); a != b {
		t.Errorf("real path lock %s, symlink lock %s", a, b)
	}
	if rewrite.LockPath("/locks", real) == rewrite.LockPath("/locks", filepath.Join(dir, "other.jsonl")) {
		t.Error("two transcripts share a lock")
	}
}

// A transcript named through a symlink is purged where it lives: the link
// stays a link, and the real file is the purged one, with its backup
// beside it.
func TestPurgeThroughSymlink(t *testing.T) {
	e := newEnv(t)
	real := e.write("real.jsonl", stubFixture())
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	rep, err := File(context.Background(), link, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Changed || rep.Path != link {
		t.Fatalf("changed %v, report path %s", rep.Changed, rep.Path)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (%v)", err)
	}
	if bytes.Equal(readFile(t, real), stubFixture()) {
		t.Error("the real file was not purged")
	}
	if filepath.Dir(rep.Backup) != filepath.Dir(real) {
		t.Errorf("backup %s is not beside the real file", rep.Backup)
	}
	rr, err := restoreFile(context.Background(), link, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if rr.Restored == 0 || !bytes.Equal(readFile(t, real), stubFixture()) {
		t.Errorf("restore through the link: %d stubs, file back: %v", rr.Restored, bytes.Equal(readFile(t, real), stubFixture()))
	}
}
