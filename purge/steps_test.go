package purge

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/synth"
	"ccm/transcript"
)

// thinkingFixture: four turns; old thinking alone on a line (m1), thinking
// and text on one line (m2), redacted thinking alone (m3), and the latest
// message's thinking (m4), with non-ASCII text.
func thinkingFixture() []byte {
	return jsonl(
		userPrompt("u1", "", "first"),
		assistantThinking("a1", "u1", "m1", "old thought", sig),
		assistantText("a2", "a1", "m1", "answer one"),
		userPrompt("u2", "a2", "second"),
		rec("parentUuid", "u2", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m2","role":"assistant","content":[{"type":"thinking","thinking":"mixed é","signature":"`+sig+`"},{"type":"text","text":"answer two — ✓ 🎉"}]}`), "uuid", "a3"),
		userPrompt("u3", "a3", "third"),
		rec("parentUuid", "u3", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m3","role":"assistant","content":[{"type":"redacted_thinking","data":"RVFxQkNrWUlCeGdDS2tEWm05dllt"}]}`), "uuid", "a4"),
		assistantText("a5", "a4", "m3", "answer three"),
		userPrompt("u4", "a5", "fourth: café"),
		assistantThinking("a6", "u4", "m4", "latest thought: naïve 😀", sig),
		assistantText("a7", "a6", "m4", "answer four"),
	)
}

func TestThinkingRemoval(t *testing.T) {
	e := newEnv(t)
	in := thinkingFixture()
	rep, out := e.purgeBytes(in, e.opts())
	if !rep.Changed {
		t.Fatal("purge reports no change")
	}
	if rep.ThinkingRemoved != 3 {
		t.Errorf("thinking blocks removed = %d, want 3 (m1, m2, m3)", rep.ThinkingRemoved)
	}
	if rep.DroppedThinking != 2 {
		t.Errorf("records dropped for thinking = %d, want 2 (a1, a4)", rep.DroppedThinking)
	}
	// Records whose only block was thinking are gone, their children
	// relinked to their parents.
	for _, u := range []string{"a1", "a4"} {
		if lineOf(out, u) != nil {
			t.Errorf("record %s (only thinking) still in the file", u)
		}
	}
	if p := parentOf(t, out, "a2"); p != "u1" {
		t.Errorf("a2 relinked to %q, want u1", p)
	}
	if p := parentOf(t, out, "a5"); p != "u3" {
		t.Errorf("a5 relinked to %q, want u3", p)
	}
	// A record with thinking and text keeps its text, byte for byte.
	a3 := lineOf(out, "a3")
	want := `"content":[{"type":"text","text":"answer two — ✓ 🎉"}]`
	if !bytes.Contains(a3, []byte(want)) {
		t.Errorf("a3 = %s, want content %s", a3, want)
	}
	// The latest message's thinking stays byte-identical, and so does the
	// rest of its message.
	inLines := byUUID(in)
	for _, u := range []string{"a6", "a7", "u4"} {
		if !bytes.Equal(lineOf(out, u), inLines[u]) {
			t.Errorf("%s changed:\n  %s\n  %s", u, inLines[u], lineOf(out, u))
		}
	}
	if n := bytes.Count(out, []byte(`"type":"thinking"`)); n != 1 {
		t.Errorf("%d thinking blocks left, want only the latest", n)
	}
	if bytes.Contains(out, []byte("redacted_thinking")) {
		t.Error("old redacted_thinking left")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

func TestKeepThinking(t *testing.T) {
	e := newEnv(t)
	in := thinkingFixture()
	o := e.opts()
	o.KeepThinking = true
	rep, out := e.purgeBytes(in, o)
	if rep.Changed || !bytes.Equal(in, out) {
		t.Errorf("--keep-thinking changed a file with nothing else to do (changed=%v)", rep.Changed)
	}
	if rep.ThinkingRemoved != 0 || rep.Backup != "" {
		t.Errorf("report: %+v", rep)
	}
}

// TestThinkingLatestSplit: on generated files, where each assistant
// message is split one block per line, every thinking block but those of
// the latest message on the chain goes, and the latest message's lines
// are byte-identical.
func TestThinkingLatestSplit(t *testing.T) {
	for _, o := range []synth.Options{
		{Seed: 21, Turns: 6, Thinking: true},
		{Seed: 22, Turns: 6, Thinking: true, Progress: true, Version: "2.1.330"},
		{Seed: 23, Turns: 6, Thinking: true, Sidechains: true, Rewinds: 1},
	} {
		in, m := gen(t, o)
		e := newEnv(t)
		// The latest assistant message on the chain, by walking the input.
		ix := index(t, in)
		c := ix.ActiveChain()
		lines := objectLines(in)
		latest := ""
		for k := len(c.Recs) - 1; k >= 0; k-- {
			if f := *ix.Rec(c.Recs[k]); f.Type == transcript.TypeAssistant {
				latest = gjson.GetBytes(lines[c.Recs[k]], "message.id").Str
				break
			}
		}
		if latest == "" {
			t.Fatal("no assistant message")
		}
		rep, out := e.purgeBytes(in, e.opts())
		if rep.ThinkingRemoved != m.ThinkingBlocks-1 {
			t.Errorf("seed %d: removed %d thinking blocks of %d, want all but the latest", o.Seed, rep.ThinkingRemoved, m.ThinkingBlocks)
		}
		// Each line of the latest message keeps its content byte for
		// byte (its parentUuid may be relinked past a dropped record).
		outContent := map[string]bool{}
		for _, l := range splitLines(out) {
			if u := gjson.GetBytes(l, "uuid").Str; u != "" {
				outContent[u+gjson.GetBytes(l, "message.content").Raw] = true
			}
		}
		for _, l := range lines {
			if gjson.GetBytes(l, "message.id").Str == latest && !outContent[gjson.GetBytes(l, "uuid").Str+gjson.GetBytes(l, "message.content").Raw] {
				t.Errorf("seed %d: a line of the latest message changed or went: %.200s", o.Seed, l)
			}
		}
		for _, l := range splitLines(out) {
			if bytes.Contains(l, []byte(`"type":"thinking"`)) && gjson.GetBytes(l, "message.id").Str != latest {
				t.Errorf("seed %d: old thinking left: %.200s", o.Seed, l)
			}
		}
		e.invariants(in, rep.Path, e.opts(), false)
	}
}

// pngData returns base64 data of n bytes.
func pngData(n int) string {
	b := make([]byte, n*3/4+3)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func imageBlock(n int) string {
	return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngData(n) + `"}}`
}

// stubFixture holds one of each kind of large content, old enough to be
// stubbed, plus a large result inside the recent window.
func stubFixture() []byte {
	big := bigText("out", 6000)
	bigJS := js(big)
	return jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"cat big.log","description":"show the log"}`),
		toolResult("r1", "a1", "t1", bigJS, "toolUseResult", raw(`{"stdout":`+bigJS+`,"stderr":"","interrupted":false}`)),
		assistantToolUse("a2", "r1", "m2", "t2", "Read", `{"file_path":"/src/café/é.txt"}`),
		toolResult("r2", "a2", "t2", `[{"type":"text","text":`+js(bigText("arr", 6000))+`}]`),
		assistantToolUse("a3", "r2", "m3", "t3", "Read", `{"file_path":"/img/shot.png"}`),
		toolResult("r3", "a3", "t3", `[{"type":"text","text":"an image"},`+imageBlock(2000)+`]`),
		assistantToolUse("a4", "r3", "m4", "t4", "Write", `{"file_path":"/w.go","content":`+js(bigText("write", 7000))+`}`),
		toolResult("r4", "a4", "t4", `"File created"`),
		assistantToolUse("a5", "r4", "m5", "t5", "Edit", `{"file_path":"/e.go","old_string":`+js(bigText("old", 6000))+`,"new_string":`+js(bigText("new", 6000))+`,"replace_all":false}`),
		toolResult("r5", "a5", "t5", `"ok"`),
		assistantToolUse("a6", "r5", "m6", "t6", "MultiEdit", `{"file_path":"/m.go","edits":[{"old_string":`+js(bigText("mo", 6000))+`,"new_string":"x"}]}`),
		toolResult("r6", "a6", "t6", `"ok"`),
		assistantToolUse("a7", "r6", "m7", "t7", "NotebookEdit", `{"notebook_path":"/n.ipynb","new_source":`+js(bigText("nb", 6000))+`}`),
		toolResult("r7", "a7", "t7", `"ok"`),
		assistantToolUse("a8", "r7", "m8", "t8", "Grep", `{"pattern":"needle","path":"/src"}`),
		toolResult("r8", "a8", "t8", `"small result"`),
		assistantText("a9", "r8", "m9", "done"),
		rec("parentUuid", "a9", "isSidechain", false, "type", "user",
			"message", raw(`{"role":"user","content":[{"type":"text","text":"look at this"},`+imageBlock(3000)+`]}`), "uuid", "u2"),
		assistantText("a10", "u2", "m10", "nice"),
		// The recent window: the last two prompts and what follows.
		userPrompt("u3", "a10", "recent one"),
		assistantToolUse("a11", "u3", "m11", "t11", "Bash", `{"command":"cat recent.log"}`),
		toolResult("r11", "a11", "t11", js(bigText("recent", 8000))),
		assistantText("a12", "r11", "m12", "ok"),
		userPrompt("u4", "a12", "recent two"),
		assistantText("a13", "u4", "m13", "bye"),
	)
}

// originalValue returns the raw JSON of path in the input line of uuid.
func originalValue(t testing.TB, in []byte, uuid, path string) []byte {
	t.Helper()
	v := gjson.GetBytes(lineOf(in, uuid), path)
	if !v.Exists() {
		t.Fatalf("%s has no %s", uuid, path)
	}
	return []byte(v.Raw)
}

func TestStubbing(t *testing.T) {
	e := newEnv(t)
	in := stubFixture()
	// --threshold alone (the image stays a block of its own).
	o := e.opts()
	o.OldThreshold = 0
	rep, out := e.purgeBytes(in, o)
	ctx := context.Background()
	// Each large value: the stub that replaced it, and what the store holds.
	cases := []struct {
		uuid, path string // where the content was
		stubPath   string // where the stub text is now
		source     string // the stub's source line
		desc       string
	}{
		{"r1", "message.content.0.content", "message.content.0.content", "Bash cat big.log", "show the log"},
		{"r1", "toolUseResult.stdout", "toolUseResult.stdout", "Bash cat big.log", "toolUseResult.stdout copy"},
		{"r2", "message.content.0.content", "message.content.0.content", "Read /src/café/é.txt", ""},
		{"r3", "message.content.0.content.1", "message.content.0.content.1.text", "Image (PNG)", ""},
		{"a4", "message.content.0.input.content", "message.content.0.input.content", "Write /w.go", "tool_use input content"},
		{"a5", "message.content.0.input.old_string", "message.content.0.input.old_string", "Edit /e.go", "tool_use input old_string"},
		{"a5", "message.content.0.input.new_string", "message.content.0.input.new_string", "Edit /e.go", "tool_use input new_string"},
		{"a6", "message.content.0.input.edits", "message.content.0.input.edits", "MultiEdit /m.go", "tool_use input edits"},
		{"a7", "message.content.0.input.new_source", "message.content.0.input.new_source", "NotebookEdit /n.ipynb", "tool_use input new_source"},
		{"u2", "message.content.1", "message.content.1.text", "Image (PNG)", ""},
	}
	for _, c := range cases {
		orig := originalValue(t, in, c.uuid, c.path)
		v := gjson.GetBytes(lineOf(out, c.uuid), c.stubPath)
		st, ok := stub.Parse(v.Str)
		if !ok {
			t.Errorf("%s %s: no stub at %s: %.200s", c.uuid, c.path, c.stubPath, v.Raw)
			continue
		}
		if st.Source != c.source {
			t.Errorf("%s %s: stub source %q, want %q", c.uuid, c.path, st.Source, c.source)
		}
		if st.Desc != c.desc {
			t.Errorf("%s %s: stub desc %q, want %q", c.uuid, c.path, st.Desc, c.desc)
		}
		if st.Bytes != int64(len(orig)) {
			t.Errorf("%s %s: stub bytes %d, want %d", c.uuid, c.path, st.Bytes, len(orig))
		}
		if st.Key != ccm.KeyOf(orig) {
			t.Errorf("%s %s: stub key %s is not the key of the cut bytes", c.uuid, c.path, st.Key)
		}
		got, err := e.store.Get(ctx, st.Key)
		if err != nil {
			t.Errorf("%s %s: store: %v", c.uuid, c.path, err)
		} else if !bytes.Equal(got, orig) {
			t.Errorf("%s %s: store holds %d bytes that are not the cut value (%d bytes)", c.uuid, c.path, len(got), len(orig))
		}
		if st.Pinned != ccm.PinNone {
			t.Errorf("%s %s: pinned %v without a directive", c.uuid, c.path, st.Pinned)
		}
	}
	if rep.Stubs != len(cases) {
		t.Errorf("report: %d stubs, want %d", rep.Stubs, len(cases))
	}
	// The text block next to the image, the small results and the whole
	// recent window are untouched.
	inL := byUUID(in)
	for _, u := range []string{"r4", "r5", "r8", "u3", "a11", "r11", "a12", "u4", "a13"} {
		if !bytes.Equal(lineOf(out, u), inL[u]) {
			t.Errorf("%s changed", u)
		}
	}
	if gjson.GetBytes(lineOf(out, "r3"), "message.content.0.content.0.text").Str != "an image" {
		t.Error("the text block beside the image changed")
	}
	// Bash's stdout copy is cut alone, so it is the very bytes of the
	// tool_result: one key, one blob, and the object keeps its small
	// fields.
	st, _ := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "message.content.0.content").Str)
	cp, _ := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "toolUseResult.stdout").Str)
	if st.Key == "" || cp.Key != st.Key {
		t.Errorf("stdout copy key %q, tool_result key %q: want one", cp.Key, st.Key)
	}
	if tur := gjson.GetBytes(lineOf(out, "r1"), "toolUseResult"); tur.Get("stderr").Raw != `""` || tur.Get("interrupted").Raw != "false" {
		t.Errorf("toolUseResult lost its small fields: %.300s", tur.Raw)
	}
	lst, err := e.store.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lst.Entries) != len(cases)-1 {
		t.Errorf("store holds %d blobs, want %d (the stdout copy shares the result's)", len(lst.Entries), len(cases)-1)
	}
	// The Bash stub carries the command; the store metadata too.
	meta, err := e.store.Stat(st.Key)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Source.ToolName != "Bash" || meta.Source.Command != "cat big.log" || meta.Source.SessionPath != rep.Path {
		t.Errorf("store metadata source = %+v", meta.Source)
	}
	if rep.BytesAfter >= rep.BytesBefore {
		t.Errorf("bytes %d -> %d", rep.BytesBefore, rep.BytesAfter)
	}
	if int64(len(out)) != rep.BytesAfter {
		t.Errorf("report says %d bytes after, file has %d", rep.BytesAfter, len(out))
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestStubThreshold: the threshold counts bytes of the value, and values
// at or under it stay.
func TestStubThreshold(t *testing.T) {
	mk := func(content string) []byte {
		return jsonl(
			userPrompt("u1", "", "go"),
			assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"x"}`),
			toolResult("r1", "a1", "t1", js(content)),
			assistantText("a2", "r1", "m2", "ok"),
			userPrompt("u2", "a2", "next"),
			assistantText("a3", "u2", "m3", "ok"),
			userPrompt("u3", "a3", "last"),
			assistantText("a4", "u3", "m4", "ok"),
		)
	}
	for _, c := range []struct {
		name    string
		content string
		thr     int
		stubbed bool
	}{
		{"under", strings.Repeat("a", 4000), 5000, false},
		{"over", strings.Repeat("a", 5001), 5000, true},
		// 3000 characters, 6000 bytes: bytes count (D1 #16).
		{"non-ascii-bytes", strings.Repeat("é", 3000), 5000, true},
		{"lower-threshold", strings.Repeat("a", 600), 500, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.Threshold = c.thr
			o.OldThreshold = 0 // --threshold alone
			in := mk(c.content)
			rep, out := e.purgeBytes(in, o)
			if got := rep.Stubs == 1; got != c.stubbed {
				t.Errorf("stubs = %d, want stubbed=%v", rep.Stubs, c.stubbed)
			}
			if !c.stubbed && !bytes.Equal(in, out) {
				t.Error("file changed")
			}
		})
	}
}

// TestNoStore: --no-ccm leaves large content in place, whole.
func TestNoStore(t *testing.T) {
	e := newEnv(t)
	in := stubFixture()
	o := e.opts()
	o.NoStore = true
	rep, out := e.purgeBytes(in, o)
	if rep.Stubs != 0 || !bytes.Equal(in, out) {
		t.Errorf("--no-ccm: %d stubs, file changed=%v", rep.Stubs, !bytes.Equal(in, out))
	}
	if e.store.Exists() {
		t.Error("--no-ccm created the store")
	}
}

// TestRecentTurns: everything after the Nth-last prompt stays as it is.
func TestRecentTurns(t *testing.T) {
	in := stubFixture()
	for _, c := range []struct {
		turns int
		stubs int
	}{
		{0, 11}, // no window: the recent result is stubbed too
		{2, 10},
		{3, 9},  // the window now starts at u2: its image stays
		{50, 0}, // fewer prompts than turns: everything is recent
	} {
		e := newEnv(t)
		o := e.opts()
		o.RecentTurns = c.turns
		rep, _ := e.purgeBytes(in, o)
		if rep.Stubs != c.stubs {
			t.Errorf("--recent-turns %d: %d stubs, want %d", c.turns, rep.Stubs, c.stubs)
		}
	}
}

// countKinds counts records by type and by type/subtype (attachment type,
// progress data.type).
func countKinds(data []byte) map[string]int {
	n := map[string]int{}
	for _, l := range objectLines(data) {
		r := gjson.ParseBytes(l)
		typ := r.Get("type").Str
		n[typ]++
		switch typ {
		case "attachment":
			n["attachment/"+r.Get("attachment.type").Str]++
		case "progress":
			n["progress/"+r.Get("data.type").Str]++
		}
	}
	return n
}

// lastOf returns the last record of a kind (type, or attachment/<type>).
func lastOf(data []byte, kind string) []byte {
	var last []byte
	for _, l := range objectLines(data) {
		r := gjson.ParseBytes(l)
		k := r.Get("type").Str
		if k == "attachment" {
			k += "/" + r.Get("attachment.type").Str
		}
		if k == kind {
			last = l
		}
	}
	return last
}

// kept reports whether the record l of the input is in out: by uuid (it
// may have been relinked), or byte for byte when it has none.
func kept(out, l []byte) bool {
	if u := gjson.GetBytes(l, "uuid").Str; u != "" {
		return lineOf(out, u) != nil
	}
	return bytes.Contains(out, l)
}

func TestBookkeepingAndProgress(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 31, Turns: 6, Version: "2.1.330", Progress: true})
	before := countKinds(in)
	for _, k := range []string{"progress", "attachment/prompt_snapshot", "api-request-shape", "api-request-blob", "attachment/environment", "attachment/date"} {
		if before[k] < 2 {
			t.Fatalf("fixture has %d %s records", before[k], k)
		}
	}
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	after := countKinds(out)
	if after["progress"] != 0 {
		t.Errorf("%d progress records left", after["progress"])
	}
	if rep.DroppedProgress != before["progress"] {
		t.Errorf("report: %d progress dropped, file had %d", rep.DroppedProgress, before["progress"])
	}
	for _, k := range []string{"attachment/prompt_snapshot", "api-request-shape", "api-request-blob"} {
		if after[k] != 1 {
			t.Errorf("%d %s records left, want the latest only", after[k], k)
		}
		if !kept(out, lastOf(in, k)) {
			t.Errorf("the latest %s was dropped", k)
		}
	}
	wantDropped := before["attachment/prompt_snapshot"] + before["api-request-shape"] + before["api-request-blob"] - 3
	if rep.DroppedBookkeeping != wantDropped {
		t.Errorf("report: %d bookkeeping dropped, want %d", rep.DroppedBookkeeping, wantDropped)
	}
	// System-rendered attachments stay, every one of them.
	for _, k := range []string{"attachment/environment", "attachment/date", "attachment/skill_listing"} {
		if after[k] != before[k] {
			t.Errorf("%s: %d -> %d", k, before[k], after[k])
		}
	}
	// The first record of the file is still a system-rendered attachment.
	first := objectLines(out)
	for _, l := range first {
		typ := gjson.GetBytes(l, "type").Str
		if typ == "file-history-snapshot" {
			continue
		}
		if typ != "attachment" {
			t.Errorf("first chain record is %s, want an attachment", typ)
		}
		break
	}
	e.invariants(in, rep.Path, e.opts(), false)

	// --keep-progress and --keep-bookkeeping keep them.
	e2 := newEnv(t)
	o := e2.opts()
	o.KeepProgress, o.KeepBookkeeping = true, true
	_, out2 := e2.purgeBytes(in, o)
	after2 := countKinds(out2)
	for k, n := range before {
		if after2[k] != n {
			t.Errorf("keep-progress/bookkeeping: %s %d -> %d", k, n, after2[k])
		}
	}
}

// TestProgressRelink: a progress record inside the chain goes and its
// child hangs off the progress record's parent.
func TestProgressRelink(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "go"),
		progress("p1", "u1"),
		progress("p2", "p1"),
		assistantText("a1", "p2", "m1", "ok"),
		userPrompt("u2", "a1", "again"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.DroppedProgress != 2 {
		t.Errorf("dropped %d progress records, want 2", rep.DroppedProgress)
	}
	if p := parentOf(t, out, "a1"); p != "u1" {
		t.Errorf("a1 relinked to %q, want u1", p)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestThinkingLatestWithoutMessageID: the latest message is found by its
// place on the chain, not only by message.id, which some writers omit.
func TestThinkingLatestWithoutMessageID(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"`+sig+`"},{"type":"text","text":"a"}]}`), "uuid", "a1"),
		userPrompt("u2", "a1", "two"),
		rec("parentUuid", "u2", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"thinking","thinking":"latest","signature":"`+sig+`"}]}`), "uuid", "a2"),
		rec("parentUuid", "a2", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"text","text":"b"}]}`), "uuid", "a3"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.ThinkingRemoved != 1 {
		t.Errorf("removed %d thinking blocks, want the old one only", rep.ThinkingRemoved)
	}
	if !bytes.Equal(lineOf(out, "a2"), lineOf(in, "a2")) {
		t.Error("the latest message's thinking was removed")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestImageMetadata: the store's metadata of every stored image names
// its media type, as written in the transcript. (The media type is read
// from a line buffer the reader reuses while blobs are stored in the
// background; go test -race flags a view kept past its line.)
func TestImageMetadata(t *testing.T) {
	var lines []string
	parent := ""
	for i := 0; i < 40; i++ {
		u, a, r := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i)
		media := []string{"image/png", "image/jpeg", "image/webp", "image/gif"}[i%4]
		img := `{"type":"image","source":{"type":"base64","media_type":"` + media + `","data":"` + pngData(3000+i) + `"}}`
		lines = append(lines,
			rec("parentUuid", nullable(parent), "isSidechain", false, "type", "user",
				"message", raw(`{"role":"user","content":[{"type":"text","text":"see"},`+img+`]}`), "uuid", u),
			assistantToolUse(a, u, "m"+a, "t"+a, "Bash", `{"command":"cat big"}`),
			// A large line after each image makes the reader refill its buffer.
			toolResult(r, a, "t"+a, js(bigText(r, 300<<10))))
		parent = r
	}
	lines = append(lines, userPrompt("x1", parent, "one"), assistantText("x2", "x1", "mx2", "ok"),
		userPrompt("x3", "x2", "two"), assistantText("x4", "x3", "mx4", "ok"))
	in := jsonl(lines...)
	e := newEnv(t)
	_, out := e.purgeBytes(in, e.opts())
	images := 0
	for i := 0; i < 40; i++ {
		want := []string{"image/png", "image/jpeg", "image/webp", "image/gif"}[i%4]
		for _, st := range stubsIn(lineOf(out, fmt.Sprintf("u%d", i))) {
			meta, err := e.store.Stat(st.Key)
			if err != nil {
				t.Fatal(err)
			}
			images++
			if meta.Source.MediaType != want {
				t.Errorf("u%d: stored media type %q, want %q", i, meta.Source.MediaType, want)
			}
		}
	}
	if images != 40 {
		t.Errorf("%d images stored, want 40", images)
	}
}

// TestToolUseResultCopies: a toolUseResult loses its large members, each
// stored under the key of its bytes (so a copy of content cut elsewhere
// is stored once), and keeps its small ones; it is stubbed whole when it
// is no object, or when its bulk is in members under the threshold.
func TestToolUseResultCopies(t *testing.T) {
	e := newEnv(t)
	body := js(bigText("file", 7000))
	half := js(bigText("half", 3000))
	errText := js("Error: " + bigText("err", 6000))
	in := jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Write", `{"file_path":"/w.go","content":`+body+`}`),
		toolResult("r1", "a1", "t1", `"File created successfully at: /w.go"`,
			"toolUseResult", raw(`{"type":"create","filePath":"/w.go","content":`+body+`,"structuredPatch":[]}`)),
		assistantToolUse("a2", "r1", "m2", "t2", "Grep", `{"pattern":"x"}`),
		toolResult("r2", "a2", "t2", `"3 matches"`, "toolUseResult", raw(`{"mode":"content","a":`+half+`,"b":`+half+`}`)),
		assistantToolUse("a3", "r2", "m3", "t3", "Bash", `{"command":"false"}`),
		toolResult("r3", "a3", "t3", `"short"`, "toolUseResult", raw(errText)),
		assistantText("a4", "r3", "m4", "done"),
		userPrompt("u2", "a4", "recent one"),
		assistantText("a5", "u2", "m5", "ok"),
		userPrompt("u3", "a5", "recent two"),
		assistantText("a6", "u3", "m6", "bye"),
	)
	rep, out := e.purgeBytes(in, e.opts())

	input, _ := stub.Parse(gjson.GetBytes(lineOf(out, "a1"), "message.content.0.input.content").Str)
	copied, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "toolUseResult.content").Str)
	if !ok || input.Key == "" || copied.Key != input.Key {
		t.Errorf("Write's content copy: stub %+v, input stub %+v: want one key", copied, input)
	}
	if copied.Key != ccm.KeyOf([]byte(body)) {
		t.Errorf("the copy's key %s is not the key of its bytes", copied.Key)
	}
	if tur := gjson.GetBytes(lineOf(out, "r1"), "toolUseResult"); tur.Get("filePath").Str != "/w.go" || tur.Get("structuredPatch").Raw != "[]" {
		t.Errorf("toolUseResult lost its small fields: %.300s", tur.Raw)
	}
	for _, u := range []string{"r2", "r3"} {
		v := gjson.GetBytes(lineOf(out, u), "toolUseResult")
		st, ok := stub.Parse(v.Str)
		orig := originalValue(t, in, u, "toolUseResult")
		if !ok || st.Key != ccm.KeyOf(orig) {
			t.Errorf("%s: toolUseResult not stubbed whole: %.200s", u, v.Raw)
		}
	}
	if rep.Stubs != 4 {
		t.Errorf("%d stubs, want 4", rep.Stubs)
	}
	e.invariants(in, rep.Path, e.opts(), false)

	// Restore puts every copy back byte for byte.
	o := e.opts()
	p := e.write("copies.jsonl", in)
	e.purge(p, o)
	if _, err := restoreFile(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, in) {
		reportFirstDiff(t, in, got)
	}
}

// TestToolUseResultPurgedAgain: a toolUseResult that holds a stub is
// never cut whole by a later purge, even with a threshold that its other
// members together exceed: that would store a stub and nest stubs.
func TestToolUseResultPurgedAgain(t *testing.T) {
	e := newEnv(t)
	mid := js(bigText("mid", 1500))
	in := jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"make"}`),
		toolResult("r1", "a1", "t1", `"built"`, "toolUseResult",
			raw(`{"stdout":`+js(bigText("out", 7000))+`,"a":`+mid+`,"b":`+mid+`}`)),
		assistantText("a2", "r1", "m2", "done"),
		userPrompt("u2", "a2", "recent one"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "recent two"),
		assistantText("a4", "u3", "m4", "bye"),
	)
	p := e.write("again.jsonl", in)
	e.purge(p, e.opts())
	once := readFile(t, p)
	if st, ok := stub.Parse(gjson.GetBytes(lineOf(once, "r1"), "toolUseResult.stdout").Str); !ok || st.Key == "" {
		t.Fatalf("first purge: stdout not stubbed: %.300s", lineOf(once, "r1"))
	}
	o := e.opts()
	o.Threshold = 1000
	rep, twice := e.purge(p, o)
	tur := gjson.GetBytes(lineOf(twice, "r1"), "toolUseResult")
	if !tur.IsObject() {
		t.Fatalf("second purge cut the toolUseResult holding a stub whole: %.300s", tur.Raw)
	}
	// Its other large members are cut now, the stub stays as it was.
	for _, k := range []string{"a", "b"} {
		if _, ok := stub.Parse(tur.Get(k).Str); !ok {
			t.Errorf("member %s not stubbed at threshold 1000", k)
		}
	}
	if tur.Get("stdout").Raw != gjson.GetBytes(lineOf(once, "r1"), "toolUseResult.stdout").Raw {
		t.Error("the first stub changed")
	}
	if rep.Stubs != 2 {
		t.Errorf("second purge: %d stubs, want 2", rep.Stubs)
	}
	// One restore brings back the original.
	if _, err := restoreFile(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, in) {
		reportFirstDiff(t, in, got)
	}
}
