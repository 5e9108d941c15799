package purge

// The 20 cases of claude-context-manager's tests/test_purge.py
// (docs/earlier-tools.md, "The earlier tools' own tests"), kept for their
// intent. Cases marked as encoding a defect (12, 20) assert the intent, not
// the old behaviour.

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/pins"
	"ccm/ccm/stub"
	"ccm/transcript"
)

// Compaction detection (1-4): a compaction summary is never stubbed or
// counted as a prompt, and survives a purge.

func TestAcceptance01_CompactSummaryTopLevel(t *testing.T) {
	r := transcript.NewRecord([]byte(`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"},"uuid":"s"}`))
	if !r.IsCompactSummary() {
		t.Error("top-level isCompactSummary not detected")
	}
}

func TestAcceptance02_CompactSummaryInContent(t *testing.T) {
	r := transcript.NewRecord([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"summary","isCompactSummary":true}]},"uuid":"s"}`))
	if !r.IsCompactSummary() {
		t.Error("isCompactSummary in message.content[0] not detected")
	}
}

func TestAcceptance03_CompactSummaryTextInToolResult(t *testing.T) {
	r := transcript.NewRecord([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"{\"isCompactSummary\":true}"}]},"uuid":"s"}`))
	if r.IsCompactSummary() {
		t.Error("the text \"isCompactSummary\":true inside a tool result counted as a summary")
	}
}

func TestAcceptance04_NormalUserMessage(t *testing.T) {
	r := transcript.NewRecord([]byte(userPrompt("u", "", "hello")))
	if r.IsCompactSummary() {
		t.Error("a normal prompt counted as a summary")
	}
}

// Tool id extraction (5, 6).

func TestAcceptance05_ToolUseIDs(t *testing.T) {
	ix := index(t, jsonl(rec("type", "assistant", "uuid", "a", "message",
		raw(`{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}},{"type":"tool_use","id":"t2","name":"Bash","input":{}}]}`))))
	ids := map[string]bool{}
	for _, b := range ix.Rec(0).Blocks() {
		if b.Type == transcript.BlockToolUse {
			ids[b.ID] = true
		}
	}
	if len(ids) != 2 || !ids["t1"] || !ids["t2"] {
		t.Errorf("tool_use ids %v", ids)
	}
}

func TestAcceptance06_ToolResultIDs(t *testing.T) {
	ix := index(t, jsonl(rec("type", "user", "uuid", "u", "message",
		raw(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"},{"type":"tool_result","tool_use_id":"t2","content":"b"}]}`))))
	ids := map[string]bool{}
	for _, b := range ix.Rec(0).Blocks() {
		if b.Type == transcript.BlockToolResult {
			ids[b.ID] = true
		}
	}
	if len(ids) != 2 || !ids["t1"] || !ids["t2"] {
		t.Errorf("tool_result ids %v", ids)
	}
}

// Analysis (7-9), as a dry run reports it.

func analysisFixture() []byte {
	return jsonl(
		systemRec("s1", "", "local_command"),
		userPrompt("u1", "s1", "hello"),
		rec("parentUuid", "missing", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"`+sig+`"}]}`), "uuid", "a1"),
	)
}

func TestAcceptance07_CountsRecordTypes(t *testing.T) {
	ix := index(t, analysisFixture())
	n := map[transcript.RecType]int{}
	for ri := range ix.Len() {
		f := ix.Rec(ri)
		n[f.Type]++
	}
	if n[transcript.TypeSystem] != 1 || n[transcript.TypeUser] != 1 || n[transcript.TypeAssistant] != 1 {
		t.Errorf("counts %v", n)
	}
}

func TestAcceptance08_DetectsBrokenParent(t *testing.T) {
	in := analysisFixture()
	if d := index(t, in).Dangling(); len(d) != 1 {
		t.Errorf("%d dangling parents, want 1", len(d))
	}
	e := newEnv(t)
	o := e.opts()
	o.DryRun = true
	rep, _ := e.purgeBytes(in, o)
	if rep.RelinkedDangling != 1 {
		t.Errorf("dry run would relink %d, want 1", rep.RelinkedDangling)
	}
}

func TestAcceptance09_CountsThinking(t *testing.T) {
	ix := index(t, analysisFixture())
	n := 0
	for ri := range ix.Len() {
		f := ix.Rec(ri)
		for _, b := range f.Blocks() {
			if b.Type == transcript.BlockThinking {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("%d thinking blocks, want 1", n)
	}
}

// Purge (10-13).

// 10: a session whose only assistant message has a 1000-character thinking
// block and an answer: the thinking is the latest, so it stays.
func TestAcceptance10_LatestThinkingKept(t *testing.T) {
	thinking := strings.Repeat("x", 1000)
	in := jsonl(
		userPrompt("u1", "", "question"),
		assistantThinking("a1", "u1", "m1", thinking, sig),
		assistantText("a2", "a1", "m1", "answer"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.ThinkingRemoved != 0 {
		t.Errorf("thinking removed: %d", rep.ThinkingRemoved)
	}
	if !bytes.Contains(out, []byte(thinking)) || !bytes.Contains(out, []byte(`"answer"`)) {
		t.Error("the thinking or the answer is gone")
	}
}

func TestAcceptance11_CompactSummarySurvives(t *testing.T) {
	summary := "This session is being continued from a previous conversation. " + bigText("summary", 8000)
	in := jsonl(
		rec("parentUuid", nil, "logicalParentUuid", "old", "isSidechain", false, "type", "system", "subtype", "compact_boundary", "content", "Conversation compacted", "uuid", "cb"),
		rec("parentUuid", "cb", "isSidechain", false, "type", "user", "isCompactSummary", true,
			"message", raw(`{"role":"user","content":[{"type":"text","text":`+js(summary)+`}]}`), "uuid", "cs"),
		userPrompt("u1", "cs", "go on"),
		assistantText("a1", "u1", "m1", "ok"),
		userPrompt("u2", "a1", "more"),
		assistantText("a2", "u2", "m2", "ok"),
		userPrompt("u3", "a2", "more"),
		assistantText("a3", "u3", "m3", "ok"),
	)
	e := newEnv(t)
	o := e.opts()
	o.RecentTurns = 0
	o.Threshold = 100
	_, out := e.purgeBytes(in, o)
	if !bytes.Equal(lineOf(out, "cs"), lineOf(in, "cs")) {
		t.Error("the compaction summary changed")
	}
}

// 12: --repair-only repairs one broken parentUuid. claude-context-manager pointed
// it at the previous line (uuid "1"); the intent is the logical parent,
// which here is that line, and never the progress record after it.
func TestAcceptance12_RepairOnlyBrokenParent(t *testing.T) {
	in := jsonl(
		userPrompt("1", "", "hello"),
		progress("p", "1"),
		assistantText("2", "missing", "m1", "hi"),
	)
	e := newEnv(t)
	o := e.opts()
	o.RepairOnly = true
	rep, out := e.purgeBytes(in, o)
	if rep.RelinkedDangling != 1 {
		t.Errorf("relinked %d, want 1", rep.RelinkedDangling)
	}
	if p := parentOf(t, out, "2"); p != "1" {
		t.Errorf("relinked to %q, want \"1\"", p)
	}
	if lineOf(out, "p") == nil {
		t.Error("--repair-only dropped a progress record")
	}
}

func TestAcceptance13_DryRunKeepsMtime(t *testing.T) {
	e := newEnv(t)
	p := e.write("s.jsonl", stubFixture())
	old := time.Date(2025, 5, 5, 5, 5, 5, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.DryRun = true
	if _, err := File(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if !fi.ModTime().Equal(old) {
		t.Errorf("mtime %v, want %v", fi.ModTime(), old)
	}
}

// Pins (14-18).

func TestAcceptance14_ParseLast(t *testing.T) {
	ds := pins.Parse(`ccm:pin last level=soft reason="important"`)
	if len(ds) != 1 || ds[0].Kind != "last" || ds[0].Level != ccm.PinSoft || ds[0].Reason != "important" {
		t.Errorf("%+v", ds)
	}
}

func TestAcceptance15_ParseNextInString(t *testing.T) {
	in := jsonl(userPrompt("u", "", "please ccm:pin next level=hard"))
	text := gjson.GetBytes(splitLines(in)[0], "message.content").Str
	ds := pins.Parse(text)
	if len(ds) != 1 || ds[0].Kind != "next" || ds[0].Level != ccm.PinHard {
		t.Errorf("%+v", ds)
	}
}

func TestAcceptance16_ParseStartEnd(t *testing.T) {
	ds := pins.Parse("ccm:pin start level=soft\nsome text\nccm:pin end")
	if len(ds) != 2 || ds[0].Kind != "start" || ds[1].Kind != "end" {
		t.Errorf("%+v", ds)
	}
}

// pinResolveFixture: a 6000-character result, a prompt with a directive,
// another 6000-character result.
func pinResolveFixture(directive string) []byte {
	return jsonl(
		userPrompt("u0", "", "go"),
		assistantToolUse("a0", "u0", "m0", "t0", "Bash", `{"command":"one"}`),
		toolResult("r0", "a0", "t0", js(strings.Repeat("a", 6000))),
		assistantText("a1", "r0", "m1", "ok"),
		userPrompt("u1", "a1", directive),
		assistantToolUse("a2", "u1", "m2", "t2", "Bash", `{"command":"two"}`),
		toolResult("r1", "a2", "t2", js(strings.Repeat("b", 6000))),
		assistantText("a3", "r1", "m3", "ok"),
		userPrompt("u2", "a3", "later"),
		assistantText("a4", "u2", "m4", "ok"),
		userPrompt("u3", "a4", "later"),
		assistantText("a5", "u3", "m5", "ok"),
	)
}

func pinOf(t *testing.T, out []byte, uuid string) ccm.PinLevel {
	t.Helper()
	st, ok := stub.Parse(gjson.GetBytes(lineOf(out, uuid), "message.content.0.content").Str)
	if !ok {
		t.Fatalf("%s not stubbed", uuid)
	}
	return st.Pinned
}

func TestAcceptance17_LastResolvesBackward(t *testing.T) {
	e := newEnv(t)
	_, out := e.purgeBytes(pinResolveFixture("ccm:pin last level=hard"), e.opts())
	if pinOf(t, out, "r0") != ccm.PinHard || pinOf(t, out, "r1") != ccm.PinNone {
		t.Errorf("last: r0 %v, r1 %v; want hard, none", pinOf(t, out, "r0"), pinOf(t, out, "r1"))
	}
}

func TestAcceptance18_NextResolvesForward(t *testing.T) {
	e := newEnv(t)
	_, out := e.purgeBytes(pinResolveFixture("ccm:pin next level=hard"), e.opts())
	if pinOf(t, out, "r0") != ccm.PinNone || pinOf(t, out, "r1") != ccm.PinHard {
		t.Errorf("next: r0 %v, r1 %v; want none, hard", pinOf(t, out, "r0"), pinOf(t, out, "r1"))
	}
}

// CCM stubbing (19, 20).

func TestAcceptance19_OldBashResultStubbed(t *testing.T) {
	body := strings.Repeat("z", 13000)
	lines := []string{
		userPrompt("u0", "", "go"),
		assistantToolUse("a0", "u0", "m0", "t0", "Bash", `{"command":"make"}`),
		toolResult("r0", "a0", "t0", js(body)),
	}
	parent := "r0"
	for i := 0; i < 12; i++ { // more than 20 lines after it, and 2 newer prompts
		u, a := "u"+string(rune('a'+i)), "a"+string(rune('a'+i))
		lines = append(lines, userPrompt(u, parent, "next"), assistantText(a, u, "m"+a, "ok"))
		parent = a
	}
	in := jsonl(lines...)
	e := newEnv(t)
	_, out := e.purgeBytes(in, e.opts())
	st, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r0"), "message.content.0.content").Str)
	if !ok {
		t.Fatal("the old 13,000-character Bash result was not stubbed")
	}
	got, err := e.store.Get(context.Background(), st.Key)
	if err != nil || string(got) != js(body) {
		t.Errorf("store: %v", err)
	}
}

// 20: a 10,000-character result within the recent window. claude-context-manager
// truncated it without storing it; the intent is that recent content
// stays whole.
func TestAcceptance20_RecentResultKeptWhole(t *testing.T) {
	body := strings.Repeat("y", 10000)
	in := jsonl(
		userPrompt("u0", "", "go"),
		assistantText("a0", "u0", "m0", "ok"),
		userPrompt("u1", "a0", "run it"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"make"}`),
		toolResult("r1", "a1", "t1", js(body)),
		assistantText("a2", "r1", "m2", "done"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.Stubs != 0 || !bytes.Contains(out, []byte(body)) {
		t.Error("a recent result was cut")
	}
	if !bytes.Equal(in, out) {
		t.Error("file changed")
	}
}
