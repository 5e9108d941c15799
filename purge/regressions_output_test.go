// Regression tests for claude-context-manager's purge defects in what it
// wrote and reported: content truncated without being stored, savings
// missed, the current session's folder misnamed, non-object lines, raw
// text, a report that overstated, stray files (docs/earlier-tools.md).

package purge

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/ccm/stub"
	"ccm/internal/synth"
	"ccm/sessions"
	"ccm/transcript"

	"github.com/tidwall/gjson"
)

// claude-context-manager: lossy paths: recent results truncated without
// caching, tools without metadata truncated, --no-ccm truncating everything.
// Nothing is ever cut without its bytes stored: every output value is the
// input's, or a stub whose blob holds exactly what it replaced.
func TestNeverTruncate(t *testing.T) {
	tools := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "TodoWrite", `{"todos":[]}`),
		toolResult("r1", "a1", "t1", js(bigText("todo", 9000))),
		assistantToolUse("a2", "r1", "m2", "t2", "mcp__db__query", `{"sql":"select 1"}`),
		toolResult("r2", "a2", "t2", `[{"type":"text","text":`+js(bigText("mcp", 9000))+`}]`),
		assistantToolUse("a3", "r2", "m3", "t3", "BashOutput", `{"bash_id":"b1"}`),
		toolResult("r3", "a3", "t3", js(bigText("bg", 9000))),
		assistantText("a4", "r3", "m4", "ok"),
		userPrompt("u2", "a4", "two"),
		assistantToolUse("a5", "u2", "m5", "t5", "Bash", `{"command":"cat"}`),
		toolResult("r5", "a5", "t5", js(bigText("recent", 12000))),
		assistantText("a6", "r5", "m6", "ok"),
		userPrompt("u3", "a6", "three"),
		assistantText("a7", "u3", "m7", "ok"),
	)
	for _, noStore := range []bool{false, true} {
		e := newEnv(t)
		o := e.opts()
		o.NoStore = noStore
		rep, out := e.purgeBytes(tools, o)
		if noStore {
			if !bytes.Equal(out, tools) {
				t.Error("--no-ccm changed the file")
			}
			continue
		}
		if rep.Stubs != 3 {
			t.Errorf("%d stubs, want the 3 old outputs (tools without metadata included)", rep.Stubs)
		}
		if !bytes.Equal(lineOf(out, "r5"), lineOf(tools, "r5")) {
			t.Error("the recent result changed")
		}
		for _, u := range []string{"r1", "r2", "r3"} {
			for _, st := range stubsIn(lineOf(out, u)) {
				got, err := e.store.Get(context.Background(), st.Key)
				if err != nil || int64(len(got)) != st.Bytes {
					t.Errorf("%s: blob %s: %v (%d bytes, stub says %d)", u, st.Key, err, len(got), st.Bytes)
				}
			}
		}
		if bytes.Contains(out, []byte("TRUNCATED")) {
			t.Error("truncation marker in the output")
		}
	}
	// The benchmark mix with the smallest threshold: every stub restores.
	in, _ := gen(t, synth.Benchmark(112, 2<<20))
	e := newEnv(t)
	o := e.opts()
	o.KeepThinking, o.KeepProgress, o.KeepBookkeeping = true, true, true
	o.Threshold = 100
	p := e.write("b.jsonl", in)
	e.purge(p, o)
	rr, err := restoreFile(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Missing) != 0 || rr.Restored == 0 {
		t.Errorf("restore: %d restored, missing %v", rr.Restored, rr.Missing)
	}
	// Only the repairs differ from the input: repair the input alone and
	// compare.
	e2 := newEnv(t)
	ro := e2.opts()
	ro.RepairOnly = true
	_, repaired := e2.purgeBytes(in, ro)
	if !bytes.Equal(readFile(t, p), repaired) {
		t.Error("purge + restore differs from a repair of the input: content was lost")
	}
}

// unstubbedBytes is the size of v less the stubs in it.
func unstubbedBytes(v gjson.Result) int {
	if isStubValue(v) {
		return 0
	}
	n := len(v.Raw)
	if v.IsObject() {
		v.ForEach(func(_, m gjson.Result) bool {
			n -= len(m.Raw) - unstubbedBytes(m)
			return true
		})
	}
	return n
}

// claude-context-manager: missed savings: toolUseResult copies, thinking, list-form
// results, images in tool results and tool_use inputs stayed. After a
// default purge, no content over the threshold is left before the recent
// window.
func TestNoMissedSavings(t *testing.T) {
	in, _ := gen(t, synth.Benchmark(113, 4<<20))
	e := newEnv(t)
	o := e.opts()
	rep, out := e.purgeBytes(in, o)
	lines := objectLines(out)
	// The window starts at the 2nd-last prompt.
	var prompts []int
	for i, l := range lines {
		if isUserPrompt(l) {
			prompts = append(prompts, i)
		}
	}
	window := prompts[len(prompts)-2]
	large := func(v gjson.Result) bool { return len(v.Raw) > o.Threshold && !isStubValue(v) }
	for i, l := range lines[:window] {
		r := gjson.ParseBytes(l)
		if r.Get("isCompactSummary").Bool() {
			continue
		}
		if n := unstubbedBytes(r.Get("toolUseResult")); n > o.Threshold {
			t.Errorf("record %d: toolUseResult holds %d bytes besides its stubs", i, n)
		}
		r.Get("message.content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "tool_result":
				if large(b.Get("content")) {
					t.Errorf("record %d: tool_result of %d bytes left", i, len(b.Get("content").Raw))
				}
				b.Get("content").ForEach(func(_, ib gjson.Result) bool {
					if ib.Get("type").Str == "image" && len(ib.Raw) > o.ImageMin {
						t.Errorf("record %d: image in a tool_result left", i)
					}
					return true
				})
			case "image":
				if len(b.Raw) > o.ImageMin {
					t.Errorf("record %d: image left", i)
				}
			case "thinking", "redacted_thinking":
				// Only the latest message may keep thinking; it is after
				// the window start in a benchmark file.
				t.Errorf("record %d: old thinking left", i)
			case "tool_use":
				for _, f := range inputFields[b.Get("name").Str] {
					if large(b.Get("input." + f)) {
						t.Errorf("record %d: %s input %s left", i, b.Get("name").Str, f)
					}
				}
			}
			return true
		})
	}
	if rep.BytesAfter > rep.BytesBefore/3 {
		t.Errorf("%d -> %d bytes: less than two thirds saved", rep.BytesBefore, rep.BytesAfter)
	}
	e.invariants(in, rep.Path, o, false)
}

// claude-context-manager: --current replaced only "/" in the working
// directory, so paths with "_", "." or spaces never matched, and
// CLAUDE_CONFIG_DIR was ignored. The CLI side is in
// cmd/ccm/testdata/script/purge_current.txtar.
func TestCurrentSessionFolderNaming(t *testing.T) {
	cfg := t.TempDir()
	cwd := "/home/u/x/my_proj.v2/with space+plus"
	dir := filepath.Join(transcript.ProjectsDir(cfg), "-home-u-x-my-proj-v2-with-space-plus")
	if transcript.ProjectDirName(cwd) != filepath.Base(dir) {
		t.Fatalf("ProjectDirName(%q) = %q", cwd, transcript.ProjectDirName(cwd))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := thinkingFixture()
	p := filepath.Join(dir, "0b5c8d2e-1111-4222-8333-444455556666.jsonl")
	if err := os.WriteFile(p, in, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Current(cfg, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if s.Main.Path != p {
		t.Errorf("current session %s, want %s", s.Main.Path, p)
	}
	e := newEnv(t)
	o := e.opts()
	o.Live = true
	if _, err := File(context.Background(), s.Main.Path, o); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, readFile(t, p), false)
}

// claude-context-manager: a JSON line that is not an object crashed the tool
// before any write. Such lines, and every other bad line, pass through
// verbatim.
func TestNonObjectLines(t *testing.T) {
	in := jsonl(
		`[{"type":"user"}]`,
		userPrompt("u1", "", "one"),
		`123`,
		`"a string"`,
		``,
		`null`,
		assistantThinking("a1", "u1", "m1", "old", sig),
		assistantText("a2", "a1", "m1", "ok"),
		`{"parentUuid":"a2","type":"user","mess`,
		string(bytes.Repeat([]byte{0}, 64))+`{"type":"queue-operation","operation":"enqueue"}`,
		userPrompt("u2", "a2", "two"),
		assistantText("a3", "u2", "m2", "ok"),
	)
	in = append(in, []byte(`{"parentUuid":"a3","type":"assis`)...) // torn last line
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if !rep.Changed {
		t.Error("nothing changed")
	}
	for _, bad := range []string{`[{"type":"user"}]`, "\n123\n", `"a string"`, "\n\n", "\nnull\n", `{"parentUuid":"a2","type":"user","mess`, `{"parentUuid":"a3","type":"assis`} {
		if !bytes.Contains(out, []byte(bad)) {
			t.Errorf("bad line %q was not kept", bad)
		}
	}
	if !bytes.HasSuffix(out, []byte(`{"parentUuid":"a3","type":"assis`)) {
		t.Error("the torn last line is not the last line any more")
	}
	if !bytes.Contains(out, bytes.Repeat([]byte{0}, 64)) {
		t.Error("the NUL run was not kept")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// claude-context-manager: thresholds counted characters, and modified lines were
// re-serialised with \uXXXX escapes. Sizes are bytes; edited lines keep
// their raw non-ASCII text and escapes as written.
func TestBytesAndRawText(t *testing.T) {
	escaped := `"escaped: \u00e9 \ud83d\ude00 \"q\" \/ \t"`
	in := jsonl(
		userPrompt("u1", "", "first é ✓ 🎉"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant",
			"message", raw(`{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"`+sig+`"},{"type":"text","text":`+escaped+`},{"type":"text","text":"raw: café naïve 日本語 😀"}]}`), "uuid", "a1"),
		assistantToolUse("a2", "a1", "m1", "t1", "Read", `{"file_path":"/données/é.txt"}`),
		toolResult("r1", "a2", "t1", js(strings.Repeat("é", 3000)), "toolUseResult", raw(`{"file":{"filePath":"/données/é.txt","content":"short é"}}`)),
		userPrompt("u2", "r1", "two ✓"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "three"),
		assistantText("a4", "u3", "m4", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	a1 := lineOf(out, "a1")
	if !bytes.Contains(a1, []byte(escaped)) || !bytes.Contains(a1, []byte("raw: café naïve 日本語 😀")) {
		t.Errorf("a1's text changed: %s", a1)
	}
	// 3000 characters, 6002 bytes of JSON: over the 5000-byte threshold.
	st, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "message.content.0.content").Str)
	if !ok {
		t.Fatal("a 6000-byte result of 3000 characters was not stubbed")
	}
	if st.Bytes != 6002 {
		t.Errorf("stub says %d bytes, the value has 6002", st.Bytes)
	}
	if st.Source != "Read /données/é.txt" || !bytes.Contains(lineOf(out, "r1"), []byte("source: Read /données/é.txt")) {
		t.Errorf("stub source %q not kept raw", st.Source)
	}
	if got := checkEdits(t, in, out); got != 2 {
		t.Errorf("%d lines edited, want a1 and r1", got)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// claude-context-manager: the savings report was absurd ("15,839 % of message
// space"). The report's sizes are the files' sizes and the token estimate
// shrinks.
func TestHonestReport(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 117, Turns: 14, Thinking: true, Progress: true, Images: true})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	o := e.opts()
	o.Tokens = true
	rep, out := e.purge(p, o)
	if rep.BytesBefore != int64(len(in)) || rep.BytesAfter != int64(len(out)) {
		t.Errorf("report %d -> %d bytes, files %d -> %d", rep.BytesBefore, rep.BytesAfter, len(in), len(out))
	}
	if rep.TokensBefore == nil || rep.TokensAfter == nil {
		t.Fatal("no token estimate")
	}
	if !(rep.TokensAfter.Tokens > 0 && rep.TokensAfter.Tokens < rep.TokensBefore.Tokens) {
		t.Errorf("tokens %d -> %d", rep.TokensBefore.Tokens, rep.TokensAfter.Tokens)
	}
	// The estimate after is the estimate of the file as written.
	ix := index(t, out)
	f, _ := os.Open(p)
	defer f.Close()
	c := ix.ActiveChain()
	est, err := ix.EstimateContext(f, c, ix.Messages(c))
	if err != nil {
		t.Fatal(err)
	}
	if d := est.Tokens - rep.TokensAfter.Tokens; d > est.Tokens/50 || -d > est.Tokens/50 {
		t.Errorf("report says %d tokens after, the purged file has %d", rep.TokensAfter.Tokens, est.Tokens)
	}
	// Nothing to do: the report says so.
	rep2, _ := e.purge(p, o)
	if rep2.Changed || rep2.BytesAfter != rep2.BytesBefore || rep2.Backup != "" {
		t.Errorf("second run report: %+v", rep2)
	}
}

// claude-context-manager: the proxy flag
// (~/.claude/proxy-state/no-thinking/<stem>) was touched on every run, even
// in tests. ccm writes nothing outside the transcript's directory (new file,
// backup), the store and the lock dir.
func TestNoStrayFiles(t *testing.T) {
	home := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	t.Setenv("TMPDIR", tmp)
	in, _ := gen(t, synth.Options{Seed: 118, Turns: 12, Thinking: true, Images: true, Defects: synth.AllDefects})
	for _, o := range []func(*Options){
		func(*Options) {},
		func(o *Options) { o.RepairOnly = true },
		func(o *Options) { o.Backup = BackupZstd },
	} {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		opt := e.opts()
		o(&opt)
		opt.Tokens = true
		rep, _ := e.purge(p, opt)
		base := filepath.Dir(filepath.Dir(e.dir))
		filepath.WalkDir(base, func(q string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch {
			case q == p, q == rep.Backup:
			case strings.HasPrefix(q, e.root+"/"), strings.HasPrefix(q, e.locks+"/"):
			default:
				t.Errorf("purge wrote %s", q)
			}
			return nil
		})
	}
	for _, dir := range []string{home, tmp} {
		filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
			if err == nil && q != dir {
				t.Errorf("purge wrote %s", q)
			}
			return nil
		})
	}
}
