package purge

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/internal/synth"
	"ccm/transcript"
)

// keepsRealResults fails when the purge synthesised a "result lost" record
// for a tool call whose real result is in the original file where the
// client finds it: the client would have sent the real output, and the
// repair would replace it. A result that check calls an orphan (one the
// API would reject where it stands: after the next message, or before a
// compaction) is one the client drops too.
func keepsRealResults(t testing.TB, in, out []byte) {
	t.Helper()
	orphan := map[int]bool{}
	for _, f := range transcript.Check(index(t, in), transcript.CheckOptions{}) {
		if f.Code == "orphan-tool-result" {
			orphan[f.Line] = true
		}
	}
	real := map[string]bool{}
	for n, l := range splitLines(in) {
		if !isObject(l) || isSynthResult(l) || orphan[n+1] {
			continue
		}
		gjson.GetBytes(l, "message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "tool_result" {
				real[b.Get("tool_use_id").Str] = true
			}
			return true
		})
	}
	for _, l := range objectLines(out) {
		if !isSynthResult(l) {
			continue
		}
		gjson.GetBytes(l, "message.content").ForEach(func(_, b gjson.Result) bool {
			if id := b.Get("tool_use_id").Str; real[id] {
				t.Errorf("a synthesised 'result lost' replaces the real result of %s", id)
			}
			return true
		})
	}
}

// parallelFork is the shape of corpus file 2956cee6 (lines 51 to 62): three
// parallel calls written as a chain of tool_use lines of one message, their
// results as siblings each hanging off its own tool_use line, the first
// result carrying the text the user typed meanwhile, and the conversation
// continuing from the last result. Claude Code 2.1.330 sends all three
// results and the text (observed with the real client on that file).
func parallelFork() []byte {
	big := js(bigText("grep output", 7000))
	return jsonl(
		userPrompt("u1", "", "fix the merge conflicts"),
		assistantText("a0", "u1", "m1", "Three edits:"),
		assistantToolUse("a1", "a0", "m1", "toolu_X", "Edit", `{"file_path":"/p/a.go","old_string":"a","new_string":"b"}`),
		assistantToolUse("a2", "a1", "m1", "toolu_Y", "Grep", `{"pattern":"LastInteractionAt"}`),
		assistantToolUse("a3", "a2", "m1", "toolu_Z", "Read", `{"file_path":"/p/b.go"}`),
		progress("p1", "a3"),
		rec("parentUuid", "a1", "isSidechain", false, "type", "user",
			"message", raw(`{"role":"user","content":[{"tool_use_id":"toolu_X","type":"tool_result","content":"The file /p/a.go has been updated."},{"type":"text","text":"do we need to fix the callers too?"}]}`),
			"uuid", "r1", "sourceToolAssistantUUID", "a1"),
		progress("p2", "r1"),
		toolResult("r2", "a2", "toolu_Y", big, "sourceToolAssistantUUID", "a2"),
		toolResult("r3", "a3", "toolu_Z", `"package b"`, "sourceToolAssistantUUID", "a3"),
		assistantText("a4", "r3", "m2", "Yes, the callers too."),
		userPrompt("u2", "a4", "go on"),
		assistantText("a5", "u2", "m3", "Done."),
	)
}

func TestParallelForkKeepsRealResults(t *testing.T) {
	in := parallelFork()
	if errs := checkErrors(t, in, false); len(errs) != 0 {
		t.Fatalf("check calls the original broken: %v", errs)
	}
	e := newEnv(t)
	o := e.opts()
	o.RecentTurns = 1
	p := e.write("fork.jsonl", in)
	rep, out := e.purge(p, o)
	if rep.SynthesizedResults != 0 || rep.RemovedOrphanResult != 0 {
		t.Errorf("purge repaired a fork the client resumes as it is: %+v", rep.Stats)
	}
	keepsRealResults(t, in, out)
	r1 := lineOf(out, "r1")
	if !bytes.Contains(r1, []byte("has been updated")) || !bytes.Contains(r1, []byte("callers too?")) {
		t.Errorf("the first result and the user's text are not kept: %s", r1)
	}
	// The large sibling result is stubbed, not lost.
	if st := stubsIn(lineOf(out, "r2")); len(st) != 1 {
		t.Errorf("the large result of toolu_Y: %d stubs, want 1", len(st))
	}
	e.invariants(in, p, o, false)
}

// TestUnterminatedLastRecord: a complete last record without a newline is
// planned like any other: its parent, a progress record the purge drops,
// is relinked, and it gets the newline Claude Code always writes.
func TestUnterminatedLastRecord(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "hello"),
		assistantText("a1", "u1", "m1", "hi"),
		progress("p1", "a1"),
		progress("p2", "p1"),
	)
	in = append(in, rec("parentUuid", "p2", "isSidechain", false, "type", "system", "subtype", "stop_hook_summary",
		"hookCount", 1, "uuid", "s1", "timestamp", "2025-01-01T00:00:09.000Z")...)
	e := newEnv(t)
	p := e.write("unterminated.jsonl", in)
	rep, out := e.purge(p, e.opts())
	if !rep.AddedNewline || rep.DroppedProgress != 2 {
		t.Errorf("stats %+v: want the newline added and 2 progress records dropped", rep.Stats)
	}
	if !bytes.HasSuffix(out, []byte("}\n")) {
		t.Errorf("the purged file does not end with a newline: %q", out[len(out)-20:])
	}
	if got := parentOf(t, out, "s1"); got != "a1" {
		t.Errorf("last record's parent: %q, want a1 (its dropped parents' kept ancestor)", got)
	}
	e.invariants(in, p, e.opts(), false)
}

// TestTornLastLineCopied: a last line that is not complete JSON is torn: it
// is never parsed, and comes through byte for byte.
func TestTornLastLineCopied(t *testing.T) {
	torn := `{"parentUuid":"a1","type":"assistant","message":{"role":"assis`
	in := append(jsonl(userPrompt("u1", "", "hello"), progress("p1", "u1"), assistantText("a1", "u1", "m1", "hi")), torn...)
	e := newEnv(t)
	p := e.write("torn.jsonl", in)
	rep, out := e.purge(p, e.opts())
	if rep.AddedNewline {
		t.Error("a newline was added after a torn line")
	}
	if !bytes.HasSuffix(out, []byte("\n"+torn)) {
		t.Errorf("the torn line did not come through verbatim: %q", out[max(0, len(out)-80):])
	}
}

// TestMidwayRoot: a session that starts mid-way (its first record names a
// parent that is in no record) is a warning for check, since nothing comes
// before it, and purge makes that record a root.
func TestMidwayRoot(t *testing.T) {
	in := jsonl(
		rec("parentUuid", "gone-before-the-copy", "isSidechain", false, "type", "system", "subtype", "stop_hook_summary",
			"uuid", "s0", "timestamp", "2025-01-01T00:00:00.000Z"),
		userPrompt("u1", "s0", "continue"),
		assistantText("a1", "u1", "m1", "continuing"),
	)
	ix := index(t, in)
	fs := transcript.Check(ix, transcript.CheckOptions{})
	if n := transcript.Errors(fs); n != 0 || len(fs) != 1 || fs[0].Code != "starts-midway" {
		t.Fatalf("check: %d errors, findings %v; want one starts-midway warning", n, fs)
	}
	e := newEnv(t)
	p := e.write("midway.jsonl", in)
	rep, out := e.purge(p, e.opts())
	if rep.RootedDangling != 1 {
		t.Errorf("stats %+v: want 1 record made a root", rep.Stats)
	}
	if v := gjson.GetBytes(lineOf(out, "s0"), "parentUuid"); v.Type != gjson.Null {
		t.Errorf("s0 parentUuid %s, want null", v.Raw)
	}
	if fs := transcript.Check(index(t, out), transcript.CheckOptions{}); len(fs) != 0 {
		t.Errorf("findings after the purge: %v", fs)
	}
	e.invariants(in, p, e.opts(), false)
}

// TestParentCycleBroken: a loop of parents stops the walk; the link that
// points forward in the file is the broken one, and its record (with
// nothing before it) becomes the root.
func TestParentCycleBroken(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "a2", "hello"),
		assistantText("a1", "u1", "m1", "hi"),
		userPrompt("u2", "a1", "again"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	if errs := checkErrors(t, in, false); len(errs) == 0 {
		t.Fatal("check does not report the loop")
	}
	e := newEnv(t)
	p := e.write("cycle.jsonl", in)
	rep, out := e.purge(p, e.opts())
	if rep.BrokenCycles != 1 {
		t.Errorf("stats %+v: want 1 loop broken", rep.Stats)
	}
	if v := gjson.GetBytes(lineOf(out, "u1"), "parentUuid"); v.Type != gjson.Null {
		t.Errorf("u1 parentUuid %s, want null", v.Raw)
	}
	e.invariants(in, p, e.opts(), false)
}

// TestOnlyProgressRefused: a purge never empties a file.
func TestOnlyProgressRefused(t *testing.T) {
	in := jsonl(progress("p1", ""), progress("p2", "p1"))
	e := newEnv(t)
	p := e.write("progress.jsonl", in)
	_, err := File(t.Context(), p, e.opts())
	if !errors.Is(err, ErrNothingLeft) {
		t.Fatalf("purge of a progress-only file: %v, want ErrNothingLeft", err)
	}
	if got := readFile(t, p); !bytes.Equal(got, in) {
		t.Error("the file changed")
	}
	fs := transcript.Check(index(t, in), transcript.CheckOptions{})
	if len(fs) != 1 || fs[0].Code != "no-conversation" {
		t.Errorf("check: %v, want one no-conversation warning", fs)
	}
}

// TestDuplicateUUIDAcrossFork: two branches whose first records share a
// uuid get a warning from check and nothing broken by the purge.
func TestDuplicateUUIDAcrossFork(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "hello"),
		assistantText("a1", "u1", "m1", "hi"),
		userPrompt("dup", "a1", "branch one"),
		assistantText("b1", "dup", "m2", "one"),
		userPrompt("dup", "a1", "branch two"),
		assistantText("b2", "dup", "m3", "two"),
	)
	fs := transcript.Check(index(t, in), transcript.CheckOptions{})
	dup := false
	for _, f := range fs {
		dup = dup || f.Code == "duplicate-uuid"
	}
	if !dup {
		t.Errorf("check: %v, want a duplicate-uuid warning", fs)
	}
	e := newEnv(t)
	p := e.write("dupfork.jsonl", in)
	e.purge(p, e.opts())
	e.invariants(in, p, e.opts(), false)
	if out := readFile(t, p); strings.Count(string(out), `"uuid":"dup"`) != 2 {
		t.Error("a branch was lost")
	}
}

// TestClientShapesCheck: the generated client shapes read as the client
// reads them: the fork and the unterminated last record are no error, the
// mid-way start is a warning; the purge repairs nothing that has a real
// result, and leaves a file that check passes without a finding.
func TestClientShapesCheck(t *testing.T) {
	for _, v := range []string{"", "2.1.330"} {
		data, m := gen(t, synth.Options{Seed: 21, Turns: 10, Version: v, Progress: true, Defects: synth.ClientShapes})
		if len(m.Defects) != 3 {
			t.Fatalf("%d shapes planted, want 3", len(m.Defects))
		}
		fs := transcript.Check(index(t, data), transcript.CheckOptions{})
		var codes []string
		for _, f := range fs {
			if f.Code != "off-chain" {
				codes = append(codes, f.Code)
			}
		}
		if len(codes) != 1 || codes[0] != "starts-midway" || transcript.Errors(fs) != 0 {
			t.Errorf("version %q: findings %v, want one starts-midway warning", v, fs)
		}
		e := newEnv(t)
		p := e.write("shapes.jsonl", data)
		rep, out := e.purge(p, e.opts())
		if rep.SynthesizedResults != 0 || rep.RootedDangling != 1 || !rep.AddedNewline {
			t.Errorf("version %q: stats %+v: want no synthesised result, one root, the newline added", v, rep.Stats)
		}
		if fs := transcript.Check(index(t, out), transcript.CheckOptions{}); transcript.Errors(fs) != 0 {
			t.Errorf("version %q: after the purge: %v", v, fs)
		}
		e.invariants(data, p, e.opts(), false)
	}
}
