package hooklib

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
)

// bashCall is a PostToolUse input for a Bash call with the given stdout,
// shaped as Claude Code 2.1.330 sends it.
func (s *sandbox) bashCall(session, command, stdout string) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": filepath.Join(s.claude, "projects", "p", session+".jsonl"),
		"cwd": s.project, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
		"tool_input":    map[string]any{"command": command, "description": "x"},
		"tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false},
	})
	return string(b)
}

func (s *sandbox) store() *ccm.Store {
	st, err := ccm.Open(filepath.Join(s.claude, "cache", "ccm"))
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// TestPostToolUseCaptures: a large Bash output is stored byte for byte and
// answered with updatedToolOutput in Bash's shape, carrying the stub; the
// capture is logged for the statistics.
func TestPostToolUseCaptures(t *testing.T) {
	s := newSandbox(t)
	stdout := strings.Repeat("a line of build output\n", 3000) + "FAIL ok"
	out := s.run(PostToolUse, s.bashCall("s1", "go test ./...", stdout))
	if !gjson.Valid(out) || gjson.Get(out, "hookSpecificOutput.hookEventName").String() != "PostToolUse" {
		t.Fatalf("output %q", out)
	}
	repl := gjson.Get(out, "hookSpecificOutput.updatedToolOutput")
	for _, k := range []string{"stderr", "interrupted", "isImage", "noOutputExpected"} {
		if !repl.Get(k).Exists() {
			t.Errorf("replacement lost %s: %s", k, repl.Raw)
		}
	}
	st, ok := stub.Parse(repl.Get("stdout").String()[strings.Index(repl.Get("stdout").String(), stub.Start):])
	if !ok {
		t.Fatalf("no stub in %s", repl.Get("stdout").String())
	}
	got, err := s.store().Get(context.Background(), st.Key)
	if err != nil || string(got) != stdout {
		t.Fatalf("stored content differs (%v)", err)
	}
	m, _ := s.store().Stat(st.Key)
	if m.Source.ToolName != "Bash" || m.Source.Command != "go test ./..." || m.Source.Cwd != s.project {
		t.Errorf("metadata %+v", m.Source)
	}
	log, _ := os.ReadFile(CaptureLog(s.home()))
	var rec CaptureRecord
	if json.Unmarshal(bytes.TrimSpace(log), &rec) != nil || rec.Pattern != "go test" || rec.Bytes != len(stdout) || rec.Shown != len(repl.Raw) || rec.Project != s.project {
		t.Errorf("capture log %s", log)
	}
	if state, _ := NewStore(s.home()).Load("s1"); state.LastCapture != string(st.Key) {
		t.Errorf("last capture %q", state.LastCapture)
	}
	// Under the threshold, or disabled: nothing printed.
	if out := s.run(PostToolUse, s.bashCall("s1", "go vet", strings.Repeat("x", 2000))); out != "" {
		t.Errorf("small output answered: %s", out)
	}
	s.env["CLAUDE_HOOKS_PASSTHROUGH"] = "1"
	if out := s.run(PostToolUse, s.bashCall("s1", "go test", stdout+"2")); out != "" {
		t.Errorf("CLAUDE_HOOKS_PASSTHROUGH=1 answered: %s", out)
	}
	delete(s.env, "CLAUDE_HOOKS_PASSTHROUGH")
	s.env["BASH_THRESHOLD"] = "100000"
	if out := s.run(PostToolUse, s.bashCall("s1", "go test", stdout+"3")); out != "" {
		t.Errorf("BASH_THRESHOLD=100000 answered: %s", out)
	}
}

// TestCaptureStoreUnavailable: when the store cannot take the output (a
// prune holds it, it is not a directory), the hook exits 0, prints
// nothing (the model gets the original output) and logs one line.
func TestCaptureStoreUnavailable(t *testing.T) {
	s := newSandbox(t)
	notDir := s.write("store-file", "x")
	s.env["CCM_CACHE_DIR"] = notDir
	if out := s.run(PostToolUse, s.bashCall("s1", "make", strings.Repeat("y\n", 5000))); out != "" {
		t.Errorf("answered with a stub it could not store: %s", out)
	}
	if n := strings.Count(s.log(), "\n"); n != 1 || !strings.Contains(s.log(), "passed through") {
		t.Errorf("log:\n%s", s.log())
	}

	delete(s.env, "CCM_CACHE_DIR")
	st := s.store()
	if _, err := st.Put(context.Background(), []byte("seed"), ccm.Source{}, ccm.PinNone, ""); err != nil {
		t.Fatal(err)
	}
	unlock, err := st.LockExclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if out := s.run(PostToolUse, s.bashCall("s1", "make", strings.Repeat("z\n", 5000))); out != "" {
		t.Errorf("answered while the store was locked: %s", out)
	}
	if !strings.Contains(s.log(), "locked") {
		t.Errorf("log:\n%s", s.log())
	}
}

// TestPinDirectives: ccm:pin next pins the next capture; ccm:pin last pins
// the latest one; start..end pins everything in between.
func TestPinDirectives(t *testing.T) {
	s := newSandbox(t)
	prompt := func(text string) {
		b, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": text, "cwd": s.project})
		s.run(UserPromptSubmit, string(b))
	}
	capture := func(body string) ccm.PinLevel {
		out := s.run(PostToolUse, s.bashCall("s1", "make", strings.Repeat(body+"\n", 3000)))
		text := gjson.Get(out, "hookSpecificOutput.updatedToolOutput.stdout").String()
		st, ok := stub.Parse(text[strings.Index(text, stub.Start):])
		if !ok {
			t.Fatalf("no stub: %s", out)
		}
		m, _ := s.store().Stat(st.Key)
		return m.Pinned.Level
	}
	if p := capture("plain"); p != ccm.PinNone {
		t.Errorf("default pin %v", p)
	}
	prompt("keep it: ccm:pin next level=hard")
	if p := capture("next"); p != ccm.PinHard {
		t.Errorf("pin next: %v", p)
	}
	if p := capture("after"); p != ccm.PinNone {
		t.Errorf("pin next applied twice: %v", p)
	}
	prompt("ccm:pin last")
	st, _ := NewStore(s.home()).Load("s1")
	m, _ := s.store().Stat(ccm.Key(st.LastCapture))
	if m.Pinned.Level != ccm.PinSoft {
		t.Errorf("pin last: %v", m.Pinned.Level)
	}
	prompt("ccm:pin start level=soft")
	if p := capture("in range"); p != ccm.PinSoft {
		t.Errorf("pin start: %v", p)
	}
	prompt("ccm:pin end")
	if p := capture("out of range"); p != ccm.PinNone {
		t.Errorf("pin end: %v", p)
	}
}

// TestToolMemoryAcrossSessions: a failure in one session is shown before
// the same tool runs in the next session of the project, once; not before
// another tool, not in another project, not inside a subagent.
func TestToolMemoryAcrossSessions(t *testing.T) {
	s := newSandbox(t)
	s.run("PostToolUseFailure", `{"session_id":"a","hook_event_name":"PostToolUseFailure","cwd":"`+s.project+`","tool_name":"Bash","tool_input":{"command":"ls /nonexistent-xyz"},"tool_use_id":"t","error":"Exit code 2\nls: cannot access '/nonexistent-xyz': No such file or directory","is_interrupt":false}`)
	s.run("PostToolUseFailure", `{"session_id":"a","hook_event_name":"PostToolUseFailure","cwd":"`+s.project+`","tool_name":"Bash","tool_input":{"command":"sleep 100"},"error":"Interrupted","is_interrupt":true}`)
	pre := func(session, tool, cwd, extra string) string {
		return contextOf(t, s.run(PreToolUse, `{"session_id":"`+session+`","hook_event_name":"PreToolUse","cwd":"`+cwd+`","tool_name":"`+tool+`","tool_input":{}`+extra+`}`))
	}
	got := pre("b", "Bash", s.project, "")
	if !strings.Contains(got, "Tool memory: earlier calls of Bash") || !strings.Contains(got, "Bash -- Exit code 2 / ls: cannot access '/nonexistent-xyz'") || !strings.Contains(got, "(input: ls /nonexistent-xyz)") {
		t.Errorf("lesson not shown: %q", got)
	}
	if strings.Contains(got, "sleep") {
		t.Error("an interrupted call became a lesson")
	}
	if got := pre("b", "Bash", s.project, ""); got != "" {
		t.Errorf("shown twice in a session: %q", got)
	}
	if got := pre("c", "Read", s.project, ""); got != "" {
		t.Errorf("shown before another tool: %q", got)
	}
	if got := pre("c", "Bash", "/other/project", ""); got != "" {
		t.Errorf("shown in another project: %q", got)
	}
	if got := pre("d", "Bash", s.project, `,"agent_id":"a1","agent_type":"Explore"`); got != "" {
		t.Errorf("shown inside a subagent: %q", got)
	}
	if got := pre("c", "Bash", s.project, ""); got == "" {
		t.Error("not shown in a third session")
	}
	// An MCP tool's explicit error result at PostToolUse is a lesson too.
	s.run(PostToolUse, `{"session_id":"a","hook_event_name":"PostToolUse","cwd":"`+s.project+`","tool_name":"mcp__db__query","tool_input":{"sql":"select 1"},"tool_response":{"isError":true,"content":[{"type":"text","text":"connection refused"}]}}`)
	if got := pre("e", "mcp__db__query", s.project, ""); !strings.Contains(got, "connection refused") {
		t.Errorf("MCP lesson: %q", got)
	}
}

// TestStopScansOnlyNewBytes: at Stop the transcript written since the last
// scan is read for failed MCP calls, and the offset advances.
func TestStopScansOnlyNewBytes(t *testing.T) {
	s := newSandbox(t)
	tx := s.write("tx.jsonl", `{"type":"assistant","cwd":"`+s.project+`","message":{"content":[{"type":"tool_use","id":"m1","name":"mcp__jira__get","input":{"issue_key":"X-1"}}]}}`+"\n"+
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"m1","is_error":true,"content":"401 unauthorized"}]}}`+"\n")
	stop := `{"session_id":"s1","hook_event_name":"Stop","transcript_path":"` + tx + `","cwd":"` + s.project + `","stop_hook_active":false}`
	if out := s.run(Stop, stop); out != "" {
		t.Errorf("Stop answered: %s", out)
	}
	st, _ := NewStore(s.home()).Load("s1")
	fi, _ := os.Stat(tx)
	if st.ScanOffset != fi.Size() {
		t.Errorf("offset %d of %d", st.ScanOffset, fi.Size())
	}
	data, _ := os.ReadFile(filepath.Join(s.home(), "tool-memory.ndjson"))
	if !strings.Contains(string(data), `"tool":"mcp__jira__get"`) || !strings.Contains(string(data), "401 unauthorized") || !strings.Contains(string(data), `"input":"X-1"`) {
		t.Errorf("store: %s", data)
	}
}

// TestStopWritesStateOnce: a Stop whose scan advances the offset and whose
// context monitor updates the fill and the audit saves the session's
// state once, with both.
func TestStopWritesStateOnce(t *testing.T) {
	s := newSandbox(t)
	tx := s.write("tx.jsonl", `{"type":"assistant","cwd":"`+s.project+`","message":{"content":[{"type":"tool_use","id":"m1","name":"mcp__jira__get","input":{"issue_key":"X-1"}}]}}`+"\n"+
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"m1","is_error":true,"content":"401 unauthorized"}]}}`+"\n"+
		`{"type":"assistant","isSidechain":false,"message":{"model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0,"output_tokens":5}}}`+"\n")
	stop := `{"session_id":"s1","hook_event_name":"Stop","transcript_path":"` + tx + `","cwd":"` + s.project + `","stop_hook_active":false}`
	before := stateWrites.Load()
	s.run(Stop, stop)
	if n := stateWrites.Load() - before; n != 1 {
		t.Errorf("the Stop wrote the state %d times, want once", n)
	}
	st, _ := NewStore(s.home()).Load("s1")
	fi, _ := os.Stat(tx)
	if st.ScanOffset != fi.Size() || st.Context.Tokens != 1100 || st.Context.Audit == nil {
		t.Errorf("offset %d of %d, fill %d, audit %v", st.ScanOffset, fi.Size(), st.Context.Tokens, st.Context.Audit != nil)
	}
}

// endless is stdin that never ends (< /dev/zero).
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestBadInputNeverHangs: empty, non-JSON, oversized (50 MB), endless and
// never-closed stdin, and an unknown tool: exit 0, no output, no hang.
func TestBadInputNeverHangs(t *testing.T) {
	s := newSandbox(t)
	big := s.bashCall("s1", "cat big", strings.Repeat("x", 50<<20))
	for name, r := range map[string]io.Reader{
		"empty":        strings.NewReader(""),
		"not JSON":     strings.NewReader("garbage {"),
		"50 MB":        strings.NewReader(big),
		"endless":      endless{},
		"unknown tool": strings.NewReader(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Frobnicate","tool_input":{},"tool_response":{"x":"` + strings.Repeat("y", 50000) + `"}}`),
	} {
		var out bytes.Buffer
		if code := Run(context.Background(), Options{Event: PostToolUse, ClaudeDir: s.claude, Stdin: r, Stdout: &out, Lookup: s.env.lookup}); code != 0 || out.Len() != 0 {
			t.Errorf("%s: exit %d, output %q", name, code, out.String())
		}
	}
	// Never closed: a complete object is answered at once; a partial one
	// is given up on after the wait.
	pr, pw := io.Pipe()
	go pw.Write([]byte(s.bashCall("s1", "make", strings.Repeat("w\n", 5000))))
	var out bytes.Buffer
	Run(context.Background(), Options{Event: PostToolUse, ClaudeDir: s.claude, Stdin: pr, Stdout: &out, Lookup: s.env.lookup, InputWait: time.Minute})
	if !strings.Contains(out.String(), "updatedToolOutput") {
		t.Errorf("complete object on an open stdin not answered: %q", out.String())
	}
	pr2, pw2 := io.Pipe()
	go pw2.Write([]byte(`{"session_id":"s1","hook_event_name":"PostToolUse"`))
	out.Reset()
	if code := Run(context.Background(), Options{Event: PostToolUse, ClaudeDir: s.claude, Stdin: pr2, Stdout: &out, Lookup: s.env.lookup, InputWait: 100 * time.Millisecond}); code != 0 || out.Len() != 0 {
		t.Errorf("partial object: exit %d, output %q", code, out.String())
	}
	if !strings.Contains(s.log(), "stdin not complete") || !strings.Contains(s.log(), "stdin larger than") {
		t.Errorf("log:\n%s", s.log())
	}
}

// TestToolMemoryConcurrentProcesses: 8 hook processes record 25 distinct
// failures each, at once, into a full store (200 of at most 200 lessons),
// so every record drops the oldest and rewrites the file: all 200 new
// lessons are kept and every old one is gone (agentihooks kept 38-42
// of the 200 and resurrected dropped ones, docs/earlier-tools.md); every line is an
// entry, none repeats.
func TestToolMemoryConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newSandbox(t)
	var old strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&old, `{"ts":"2026-01-01T00:00:00Z","tool":"Bash","error":"old %d","input":"old %d"}`+"\n", i, i)
	}
	s.write("claude/ccm/tool-memory.ndjson", old.String())
	const procs, each = 8, 25
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		go func() {
			cmd := execCommand(exe, s.claude, each)
			cmd.Env = append(cmd.Env, fmt.Sprintf("HOOKLIB_TEST_FAILURES=%d", p), "AGENTICORE_TOOL_MEMORY_MAX=200",
				"CCM_TOOL_MEMORY_ENABLED=true")
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, out)
			}
			errs <- err
		}()
	}
	for p := 0; p < procs; p++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(s.home(), "tool-memory.ndjson"))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	seen := map[string]bool{}
	news := 0
	for _, l := range lines {
		if !gjson.Valid(l) || seen[l] {
			t.Fatalf("bad or repeated line %q", l)
		}
		seen[l] = true
		if strings.Contains(l, "failure ") {
			news++
		}
	}
	if len(lines) != 200 || news != 200 {
		t.Errorf("%d lines, %d of 200 new lessons kept\n%s", len(lines), news, s.log())
	}
}

// TestLessonsWithinTheCap: many long lessons are cut to what fits the
// 10,000-character hook output, rendered; the rest stay unshown (and are
// shown on a later call).
func TestLessonsWithinTheCap(t *testing.T) {
	s := newSandbox(t)
	s.env["AGENTICORE_TOOL_MEMORY_SHOW"] = "100"
	for i := 0; i < 100; i++ {
		s.run("PostToolUseFailure", fmt.Sprintf(`{"session_id":"a","hook_event_name":"PostToolUseFailure","cwd":"%s","tool_name":"Bash","tool_input":{"command":"step %d %s"},"error":"%s"}`,
			s.project, i, strings.Repeat("c", 140), strings.Repeat(`é\"rr `, 60)))
	}
	pre := `{"session_id":"b","hook_event_name":"PreToolUse","cwd":"` + s.project + `","tool_name":"Bash","tool_input":{}}`
	out := s.run(PreToolUse, pre)
	n := strings.Count(contextOf(t, out), "\n- [")
	if Size16(out) > MaxPayload || n < 5 || n >= 100 {
		t.Errorf("output %d characters with %d lessons", Size16(out), n)
	}
	if again := contextOf(t, s.run(PreToolUse, pre)); !strings.Contains(again, "\n- [") {
		t.Error("the lessons that did not fit were never shown")
	}
}
