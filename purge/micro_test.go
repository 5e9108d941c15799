package purge

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm/stub"
)

// microFixture is an old turn that reads a.go, then edits it (the read
// goes stale), reads b.go (stays), runs a command twice with the same
// 2,000-byte output, and writes two todo lists; then two short turns.
// Nothing in it is over the 5000-byte threshold.
func microFixture() []byte {
	same := js(bigText("same output", 2000))
	todos := func(s string) string {
		var items []string
		for i := 0; i < 12; i++ {
			items = append(items, fmt.Sprintf(`{"content":"%s step %d: refactor the parser and its tests","status":"pending","activeForm":"Refactoring %d"}`, s, i, i))
		}
		return `{"todos":[` + strings.Join(items, ",") + `]}`
	}
	return jsonl(
		userPrompt("u1", "", "fix the parser"),
		assistantToolUse("a1", "u1", "m1", "t1", "Read", `{"file_path":"/src/a.go"}`),
		toolResult("r1", "a1", "t1", js(bigText("a.go", 3000))),
		assistantToolUse("a2", "r1", "m2", "t2", "Read", `{"file_path":"/src/b.go"}`),
		toolResult("r2", "a2", "t2", js(bigText("b.go", 3000))),
		assistantToolUse("a3", "r2", "m3", "t3", "Edit", `{"file_path":"/src/a.go","old_string":"x","new_string":"y"}`),
		toolResult("r3", "a3", "t3", js("The file /src/a.go has been updated.")),
		assistantToolUse("a4", "r3", "m4", "t4", "Bash", `{"command":"go test ./..."}`),
		toolResult("r4", "a4", "t4", same),
		assistantToolUse("a5", "r4", "m5", "t5", "Bash", `{"command":"go test ./..."}`),
		toolResult("r5", "a5", "t5", same),
		assistantToolUse("a6", "r5", "m6", "t6", "TodoWrite", todos("first")),
		toolResult("r6", "a6", "t6", js("Todos have been modified successfully.")),
		assistantToolUse("a7", "r6", "m7", "t7", "TodoWrite", todos("second")),
		toolResult("r7", "a7", "t7", js("Todos have been modified successfully.")),
		assistantText("a8", "r7", "m8", "done"),
		userPrompt("u2", "a8", "next"),
		assistantText("a9", "u2", "m9", "ok"),
		userPrompt("u3", "a9", "last"),
		assistantText("a10", "u3", "m10", "ok"),
	)
}

// stubDesc returns the desc line of the stub at path in a record, "" when
// the value there is no stub.
func stubDesc(t *testing.T, out []byte, uuid, path string) (string, bool) {
	t.Helper()
	l := lineOf(out, uuid)
	if l == nil {
		t.Fatalf("no record %s", uuid)
	}
	st, ok := stub.Parse(gjson.GetBytes(l, path).Str)
	return st.Desc, ok
}

// TestMicroRules: each rule stubs what it names and nothing else, says
// why in the stub, counts it in the report, and its flag turns it off;
// restore gives the input back byte for byte, and a second purge changes
// nothing.
func TestMicroRules(t *testing.T) {
	in := microFixture()
	for _, c := range []struct {
		name                 string
		set                  func(*Options)
		stale, dup, todos    bool
		staleN, dupN, todosN int
	}{
		{"all", func(*Options) {}, true, true, true, 1, 1, 1},
		{"keep-stale-reads", func(o *Options) { o.KeepStaleReads = true }, false, true, true, 0, 1, 1},
		{"keep-duplicates", func(o *Options) { o.KeepDuplicates = true }, true, false, true, 1, 0, 1},
		{"keep-old-todos", func(o *Options) { o.KeepOldTodos = true }, true, true, false, 1, 1, 0},
		// Everything in the recent window: nothing is touched.
		{"window", func(o *Options) { o.RecentTurns = 3 }, false, false, false, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.OldThreshold = 0 // the rules alone, not the old turns' threshold
			c.set(&o)
			p := e.write("s.jsonl", in)
			rep, out := e.purge(p, o)
			if rep.StaleReads != c.staleN || rep.DuplicateOutputs != c.dupN || rep.OldTodos != c.todosN {
				t.Errorf("report: %d stale reads, %d duplicates, %d todo lists; want %d, %d, %d",
					rep.StaleReads, rep.DuplicateOutputs, rep.OldTodos, c.staleN, c.dupN, c.todosN)
			}
			const res = "message.content.0.content"
			for _, w := range []struct {
				uuid, path string
				want       bool
				desc       string
			}{
				{"r1", res, c.stale, reasonStaleRead},
				{"r2", res, false, ""}, // b.go is never read again
				{"r4", res, c.dup, reasonDuplicate},
				{"r5", res, false, ""}, // the last copy stays
				{"a6", "message.content.0.input.todos", c.todos, reasonOldTodos},
				{"a7", "message.content.0.input.todos", false, ""},
			} {
				desc, ok := stubDesc(t, out, w.uuid, w.path)
				if ok != w.want {
					t.Errorf("%s %s: stubbed=%v, want %v", w.uuid, w.path, ok, w.want)
				}
				if ok && desc != w.desc {
					t.Errorf("%s: stub desc %q, want %q", w.uuid, desc, w.desc)
				}
			}
			if rep.Stubs != c.staleN+c.dupN+c.todosN {
				t.Errorf("%d stubs, want %d", rep.Stubs, c.staleN+c.dupN+c.todosN)
			}
			e.invariants(in, p, o, false)
			restoreExact(t, e, p, o, in)
		})
	}
}

// restoreExact restores path and wants in back byte for byte (the
// fixtures have nothing a purge drops), each stub's blob being the bytes
// it replaced.
func restoreExact(t *testing.T, e *env, path string, o Options, in []byte) {
	t.Helper()
	o.Backup = BackupNone
	if _, err := restoreFile(context.Background(), path, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !bytes.Equal(got, in) {
		t.Errorf("restore did not give the input back")
		reportFirstDiff(t, in, got)
	}
}

// TestMicroNeedsLaterCopy: a Read superseded only by a failed Edit stays
// (the file did not change), and a Read of another part of the file does
// not make a read stale.
func TestMicroNeedsLaterCopy(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "go"),
		assistantToolUse("a1", "u1", "m1", "t1", "Read", `{"file_path":"/a.go"}`),
		toolResult("r1", "a1", "t1", js(bigText("a", 3000))),
		assistantToolUse("a2", "r1", "m2", "t2", "Edit", `{"file_path":"/a.go","old_string":"x","new_string":"y"}`),
		toolResult("r2", "a2", "t2", js("<tool_use_error>String to replace not found in file.</tool_use_error>"), "isError", true),
		assistantToolUse("a3", "r2", "m3", "t3", "Read", `{"file_path":"/b.go","offset":1,"limit":50}`),
		toolResult("r3", "a3", "t3", js(bigText("b", 3000))),
		assistantToolUse("a4", "r3", "m4", "t4", "Read", `{"file_path":"/b.go","offset":100,"limit":50}`),
		toolResult("r4", "a4", "t4", js(bigText("b2", 3000))),
		assistantText("a5", "r4", "m5", "done"),
		userPrompt("u2", "a5", "next"),
		assistantText("a6", "u2", "m6", "ok"),
		userPrompt("u3", "a6", "last"),
		assistantText("a7", "u3", "m7", "ok"),
	)
	// The failed Edit's result must carry is_error for the rule to see it.
	in = bytes.Replace(in, []byte(`"type":"tool_result","content":"<tool_use_error>`), []byte(`"type":"tool_result","is_error":true,"content":"<tool_use_error>`), 1)
	e := newEnv(t)
	o := e.opts()
	o.OldThreshold = 0
	rep, out := e.purgeBytes(in, o)
	if rep.StaleReads != 0 || rep.Stubs != 0 || !bytes.Equal(in, out) {
		t.Errorf("%d stale reads, %d stubs: want the file unchanged", rep.StaleReads, rep.Stubs)
	}
}

// resultsSession is one prompt whose turn runs n Bash calls with
// 6,000-byte outputs (over the threshold), then a last short turn.
func resultsSession(n int) []byte {
	lines := []string{userPrompt("u1", "", "build it")}
	parent := "u1"
	for i := 0; i < n; i++ {
		a, r, id := fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("t%d", i)
		lines = append(lines,
			assistantToolUse(a, parent, "m"+a, id, "Bash", fmt.Sprintf(`{"command":"make step%d"}`, i)),
			toolResult(r, a, id, js(bigText(fmt.Sprintf("step %d", i), 6000))))
		parent = r
	}
	lines = append(lines, assistantText("done", parent, "mdone", "built"),
		userPrompt("u2", "done", "thanks"), assistantText("end", "u2", "mend", "ok"))
	return jsonl(lines...)
}

// TestRecentResults: the window ends at the Nth-last tool result as well
// as at the Nth-last prompt, whichever comes later.
func TestRecentResults(t *testing.T) {
	in := resultsSession(30)
	for _, c := range []struct {
		results, stubs int
	}{
		{0, 0},   // the two-prompt window holds the whole session
		{10, 20}, // the last 10 results stay
		{40, 0},
	} {
		t.Run(fmt.Sprint(c.results), func(t *testing.T) {
			e := newEnv(t)
			o := e.opts()
			o.RecentResults = c.results
			p := e.write("s.jsonl", in)
			rep, out := e.purge(p, o)
			if rep.Stubs != c.stubs {
				t.Errorf("%d stubs, want %d", rep.Stubs, c.stubs)
			}
			for i := 0; i < 30; i++ {
				_, ok := stubDesc(t, out, fmt.Sprintf("r%d", i), "message.content.0.content")
				if want := i < c.stubs; ok != want {
					t.Errorf("r%d: stubbed=%v, want %v", i, ok, want)
				}
			}
			e.invariants(in, p, o, false)
			restoreExact(t, e, p, o, in)
		})
	}
}

// TestRecentResultsLatestMessage: the latest assistant message and the
// results of its calls stay, however few results the window counts.
func TestRecentResultsLatestMessage(t *testing.T) {
	var blocks, lines []string
	lines = append(lines, userPrompt("u1", "", "read them all"))
	for i := 0; i < 8; i++ {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"cat f%d"}}`, i, i))
	}
	lines = append(lines, rec("parentUuid", "u1", "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":"m1","role":"assistant","content":[`+strings.Join(blocks, ",")+`]}`), "uuid", "a1"))
	parent := "a1"
	for i := 0; i < 8; i++ {
		r := fmt.Sprintf("r%d", i)
		lines = append(lines, toolResult(r, parent, fmt.Sprintf("t%d", i), js(bigText(r, 6000))))
		parent = r
	}
	in := jsonl(lines...)
	e := newEnv(t)
	o := e.opts()
	o.RecentResults = 2
	rep, out := e.purgeBytes(in, o)
	if rep.Stubs != 0 || !bytes.Equal(in, out) {
		t.Errorf("%d stubs: the latest message's results must stay", rep.Stubs)
	}
}

// TestOldThreshold: before the --recent-turns window content over
// --old-threshold moves to the store; inside it, only over --threshold.
func TestOldThreshold(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"ls"}`),
		toolResult("r1", "a1", "t1", js(bigText("old", 3000))),
		assistantText("a2", "r1", "m2", "ok"),
		userPrompt("u2", "a2", "two"),
		assistantToolUse("a3", "u2", "m3", "t3", "Bash", `{"command":"ls"}`),
		toolResult("r3", "a3", "t3", js(bigText("recent", 3000))),
		assistantText("a4", "r3", "m4", "ok"),
		userPrompt("u3", "a4", "three"),
		assistantText("a5", "u3", "m5", "ok"),
	)
	for _, c := range []struct {
		old        int
		r1, r3     bool
		stubsCount int
	}{
		{1000, true, false, 1},
		{0, false, false, 0},
		{4000, false, false, 0},
	} {
		e := newEnv(t)
		o := e.opts()
		o.OldThreshold = c.old
		o.RecentResults = 0
		p := e.write("s.jsonl", in)
		rep, out := e.purge(p, o)
		_, s1 := stubDesc(t, out, "r1", "message.content.0.content")
		_, s3 := stubDesc(t, out, "r3", "message.content.0.content")
		if s1 != c.r1 || s3 != c.r3 || rep.Stubs != c.stubsCount {
			t.Errorf("--old-threshold %d: r1 stubbed=%v r3 stubbed=%v (%d stubs), want %v %v (%d)", c.old, s1, s3, rep.Stubs, c.r1, c.r3, c.stubsCount)
		}
		e.invariants(in, p, o, false)
		restoreExact(t, e, p, o, in)
	}
}

// hookSession is a turn of three Bash calls, each followed by the same
// 1.5 KB of hook context, as Claude Code stores it: an isMeta
// <system-reminder> text (2.1.3x) when meta is set, else a
// hook_additional_context attachment with the text the client rendered
// (2.1.330, written by the real client in the shape below); then two
// short turns.
func hookSession(meta bool) []byte {
	ctx := "Project rules: " + strings.Repeat("keep functions short and tested. ", 45)
	lines := []string{userPrompt("u1", "", "run the steps")}
	parent := "u1"
	for i := 0; i < 3; i++ {
		a, r, h, id := fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("h%d", i), fmt.Sprintf("t%d", i)
		lines = append(lines,
			assistantToolUse(a, parent, "m"+a, id, "Bash", fmt.Sprintf(`{"command":"echo step%d"}`, i)),
			toolResult(r, a, id, js(fmt.Sprintf("step%d", i))))
		if meta {
			lines = append(lines, rec("parentUuid", r, "isSidechain", false, "type", "user", "isMeta", true,
				"message", raw(`{"role":"user","content":`+js("<system-reminder>\nPostToolUse:Bash hook additional context: "+ctx+"\n</system-reminder>")+`}`), "uuid", h))
		} else {
			lines = append(lines, rec("parentUuid", r, "isSidechain", false,
				"attachment", raw(`{"type":"hook_additional_context","content":[`+js(ctx)+`],"hookName":"PostToolUse:Bash","toolUseID":`+js(id)+`,"hookEvent":"PostToolUse"}`),
				"type", "attachment", "uuid", h,
				"rendered", raw(`[{"content":`+js("<system-reminder>\nPostToolUse:Bash hook additional context: "+ctx+"\n</system-reminder>")+`}]`),
				"renderedRole", "system"))
		}
		parent = h
	}
	lines = append(lines, assistantText("a9", parent, "m9", "done"),
		userPrompt("u2", "a9", "next"), assistantText("a10", "u2", "m10", "ok"),
		userPrompt("u3", "a10", "last"), assistantText("a11", "u3", "m11", "ok"))
	return jsonl(lines...)
}

// TestMicroHookContext: hook context a later hook gave again byte for
// byte is stubbed, all but its last copy, in both of Claude Code's shapes;
// --keep-hook-context keeps it.
func TestMicroHookContext(t *testing.T) {
	for _, meta := range []bool{true, false} {
		for _, keep := range []bool{false, true} {
			t.Run(fmt.Sprintf("meta=%v/keep=%v", meta, keep), func(t *testing.T) {
				in := hookSession(meta)
				e := newEnv(t)
				o := e.opts()
				o.KeepHookContext = keep
				p := e.write("s.jsonl", in)
				rep, out := e.purge(p, o)
				want := 2
				if keep {
					want = 0
				}
				if rep.ReplayedHooks != want {
					t.Errorf("%d replayed hook contexts, want %d", rep.ReplayedHooks, want)
				}
				paths := []string{"message.content"}
				if !meta {
					paths = []string{"attachment.content.0", "rendered.0.content"}
				}
				for i := 0; i < 3; i++ {
					for _, path := range paths {
						desc, ok := stubDesc(t, out, fmt.Sprintf("h%d", i), path)
						if stubbed := !keep && i < 2; ok != stubbed || ok && desc != reasonReplayed {
							t.Errorf("h%d %s: stubbed=%v (%q), want %v", i, path, ok, desc, stubbed)
						}
					}
				}
				if !meta {
					// The attachment's content stays an array.
					if c := gjson.GetBytes(lineOf(out, "h0"), "attachment.content"); !c.IsArray() {
						t.Errorf("attachment.content is %s, want an array", c.Type)
					}
				}
				e.invariants(in, p, o, false)
				restoreExact(t, e, p, o, in)
			})
		}
	}
}
