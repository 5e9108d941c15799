package purge

import (
	"bytes"
	"context"
	"encoding/base64"
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
		// 3000 characters, 6000 bytes: bytes count (claude-context-manager
		// counted characters).
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
