package hooklib

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/internal/fsutil"
)

// tx builds a transcript line by line.
type tx struct {
	t    *testing.T
	path string
	n    int
}

func newTx(t *testing.T, s *sandbox) *tx {
	return &tx{t: t, path: filepath.Join(s.project, "sess.jsonl")}
}

func (x *tx) add(lines ...string) {
	x.t.Helper()
	f, err := os.OpenFile(x.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		x.t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		f.WriteString(l + "\n")
	}
}

// turn appends a prompt and an answer whose usage reports fill tokens
// (input 10, the rest cache reads).
func (x *tx) turn(fill int64, model string) {
	x.n++
	x.add(fmt.Sprintf(`{"type":"user","uuid":"u%d","isSidechain":false,"message":{"role":"user","content":"prompt %d"}}`, x.n, x.n),
		fmt.Sprintf(`{"type":"assistant","uuid":"a%d","parentUuid":"u%d","isSidechain":false,"message":{"id":"m%d","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_read_input_tokens":%d,"cache_creation_input_tokens":0,"output_tokens":500}}}`, x.n, x.n, x.n, model, fill-10))
}

func (s *sandbox) stop(session, path string) string {
	s.t.Helper()
	return s.run(Stop, fmt.Sprintf(`{"session_id":%q,"hook_event_name":"Stop","transcript_path":%q,"cwd":%q,"stop_hook_active":false}`, session, path, s.project))
}

func systemMessageOf(t *testing.T, out string) string {
	t.Helper()
	if out == "" {
		return ""
	}
	in, err := ParseInput([]byte(out))
	if err != nil {
		t.Fatalf("output is not one JSON object: %q", out)
	}
	if in.Get("hookSpecificOutput").Exists() {
		t.Fatalf("Stop output carries hookSpecificOutput (Claude would continue): %s", out)
	}
	return in.Get("systemMessage").String()
}

// TestMonitorWarnsOncePerCrossing: silent below 70 %, one warning at 70
// and one at 80 (to the user at Stop, to the model at the next prompt),
// nothing while the fill stays, and a compaction re-arms.
func TestMonitorWarnsOncePerCrossing(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_ENABLED"] = "false"
	s.env["EFFORT_POLICY_ENABLED"] = "false"
	x := newTx(t, s)
	steps := []struct {
		fill    int64
		warn    string // "" for silence
		toModel string
		compact bool
	}{
		{100_000, "", "", false},
		{139_000, "", "", false},
		{141_000, "Context at 70%", "70% full", false},
		{150_000, "", "", false},
		{161_000, "Context at 80%", "80% full", false},
		{165_000, "", "", false},
		{60_000, "", "", true}, // compacted: fill drops, thresholds re-armed
		{145_000, "Context at 72%", "threshold 70% crossed", false},
		{185_000, "Context nearly full at 92%", "threshold 90% crossed", false},
	}
	for i, st := range steps {
		if st.compact {
			x.add(`{"type":"system","subtype":"compact_boundary","isSidechain":false,"uuid":"cb","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":165000}}`)
			if got := systemMessageOf(t, s.stop("s1", x.path)); got != "" {
				t.Fatalf("step %d: warned right after a compaction: %q", i, got)
			}
		}
		x.turn(st.fill, "claude-sonnet-4-5")
		got := systemMessageOf(t, s.stop("s1", x.path))
		if st.warn == "" && got != "" || st.warn != "" && !strings.Contains(got, st.warn) {
			t.Errorf("step %d (fill %d): systemMessage %q, want %q", i, st.fill, got, st.warn)
		}
		if st.warn != "" && !strings.Contains(got, "/purge") {
			t.Errorf("step %d: the warning names no next step: %q", i, got)
		}
		ctx := s.prompt("s1")
		if st.toModel == "" && strings.Contains(ctx, "context monitor") || st.toModel != "" && !strings.Contains(ctx, st.toModel) {
			t.Errorf("step %d: next prompt's context %q, want %q", i, ctx, st.toModel)
		}
		if again := s.prompt("s1"); strings.Contains(again, "context monitor") {
			t.Errorf("step %d: the model got the warning twice", i)
		}
	}
}

// TestMonitorWindow: a 1M model is measured against 1M, and
// CONTEXT_MAX_TOKENS overrides the window.
func TestMonitorWindow(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(300_000, "claude-sonnet-4-5[1m]")
	if got := systemMessageOf(t, s.stop("s1", x.path)); got != "" {
		t.Errorf("30%% of a 1M window warned: %q", got)
	}
	x.turn(750_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); !strings.Contains(got, "75%") || !strings.Contains(got, "1,000,000") {
		t.Errorf("a fill past 200k is not measured against 1M: %q", got)
	}
	s.env["CONTEXT_MAX_TOKENS"] = "100000"
	x.turn(95_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s2", x.path)); !strings.Contains(got, "95%") {
		t.Errorf("CONTEXT_MAX_TOKENS=100000 ignored: %q", got)
	}
}

// TestMonitorReadsMainChain: a sidechain's and an API error's usage do
// not count, and a torn last line is skipped.
func TestMonitorReadsMainChain(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(50_000, "claude-sonnet-4-5")
	x.add(`{"type":"assistant","isSidechain":true,"message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":190000}}}`,
		`{"type":"assistant","isSidechain":false,"isApiErrorMessage":true,"message":{"model":"<synthetic>","usage":{"input_tokens":0}}}`,
		`{"type":"assistant","isSidechain":false,"message":{"model":"x","usage":{"input_tokens":1900`)
	if got := systemMessageOf(t, s.stop("s1", x.path)); got != "" {
		t.Errorf("warned from a sidechain, error or torn record: %q", got)
	}
	x.turn(170_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); !strings.Contains(got, "85%") {
		t.Errorf("the main chain's 85%% was missed: %q", got)
	}
}

// TestMonitorBadInput: a missing transcript, one without usage, a
// directory, a disabled monitor: silent, and the first three logged.
func TestMonitorBadInput(t *testing.T) {
	s := newSandbox(t)
	empty := s.write("project/empty.jsonl", `{"type":"user","message":{"role":"user","content":"hi"}}`+"\n")
	for _, p := range []string{filepath.Join(s.project, "missing.jsonl"), empty, s.project} {
		if out := s.stop("s1", p); out != "" {
			t.Errorf("%s: output %q", p, out)
		}
	}
	if n := strings.Count(s.log(), "context monitor"); n != 3 {
		t.Errorf("log has %d context monitor lines, want 3:\n%s", n, s.log())
	}
	x := newTx(t, s)
	x.turn(190_000, "claude-sonnet-4-5")
	s.env["CONTEXT_MONITOR_ENABLED"] = "0"
	if out := s.stop("s1", x.path); out != "" {
		t.Errorf("disabled monitor printed %q", out)
	}
}

// TestMonitorCorruptState: a corrupt state file is set aside (and logged),
// not trusted; the monitor carries on from zero.
func TestMonitorCorruptState(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(150_000, "claude-sonnet-4-5")
	s.write("claude/ccm/state/s1.json", `{"session_id":"s1","context":{"level":90`)
	if got := systemMessageOf(t, s.stop("s1", x.path)); !strings.Contains(got, "75%") {
		t.Errorf("after a corrupt state: %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.home(), "state", "s1.json.corrupt")); err != nil {
		t.Errorf("not set aside: %v", err)
	}
	if !strings.Contains(s.log(), "corrupt file set aside") {
		t.Errorf("not logged:\n%s", s.log())
	}
}

// TestMonitorSurvivesSessionEnd: a session resumed after its end does not
// warn again for a threshold it already crossed.
func TestMonitorSurvivesSessionEnd(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(150_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); got == "" {
		t.Fatal("no warning at 75%")
	}
	s.run(SessionEnd, `{"session_id":"s1","hook_event_name":"SessionEnd","reason":"other"}`)
	x.turn(152_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); got != "" {
		t.Errorf("warned again after a resume: %q", got)
	}
	// A session never warned leaves no state behind.
	y := newTx(t, s)
	y.path = filepath.Join(s.project, "quiet.jsonl")
	y.turn(20_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s2", y.path)); got != "" {
		t.Fatalf("warned at 10%%: %q", got)
	}
	s.run(SessionEnd, `{"session_id":"s2","hook_event_name":"SessionEnd","reason":"other"}`)
	if _, err := os.Stat(filepath.Join(s.home(), "state", "s2.json")); !os.IsNotExist(err) {
		t.Errorf("the state of a session never warned outlived SessionEnd: %v", err)
	}
}

// TestMonitorWaitsForTheResponse: the client writes the transcript after
// it runs the Stop hook at times; the hook waits for the response named
// by last_assistant_message and reads its usage, not the one before.
func TestMonitorWaitsForTheResponse(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(100_000, "claude-sonnet-4-5")
	late := `{"type":"assistant","uuid":"late","isSidechain":false,"message":{"id":"mlate","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[{"type":"text","text":"All   done,\nthe cache is in."}],"usage":{"input_tokens":150000}}}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(200 * time.Millisecond)
		x.add(late)
	}()
	out := s.run(Stop, fmt.Sprintf(`{"session_id":"s1","hook_event_name":"Stop","transcript_path":%q,"last_assistant_message":"All done, the cache is in."}`, x.path))
	<-done
	if got := systemMessageOf(t, out); !strings.Contains(got, "75%") {
		t.Errorf("read the usage before the response: %q", got)
	}
}

// TestMonitorAudit: past CONTEXT_AUDIT_THRESHOLD_PCT the warning names the
// top consumers, by command for Bash and by server for MCP, and the
// suggestion; tool output before the last compaction does not count.
func TestMonitorAudit(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	out := func(id, name, input string, n int) {
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]}}`, id, name, input),
			fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}}`, id, strings.Repeat("y", n)))
	}
	out("old", "Grep", `{}`, 90000)
	x.add(`{"type":"system","subtype":"compact_boundary","isSidechain":false}`)
	out("r1", "Read", `{"file_path":"/big.log"}`, 40000)
	x.turn(100_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); got != "" {
		t.Fatalf("warned at 50%%: %q", got)
	}
	out("b1", "Bash", `{"command":"git diff HEAD~5"}`, 30000)
	out("m1", "mcp__github__get_file", `{}`, 20000)
	out("r2", "Read", `{"file_path":"/other"}`, 2000)
	x.turn(150_000, "claude-sonnet-4-5")
	got := systemMessageOf(t, s.stop("s1", x.path))
	for _, want := range []string{"Context at 75%", "Context audit", "Read: 42.0 KB, ~10,500 tokens", "Bash git diff: 30.0 KB", "MCP github: 20.0 KB",
		"/compact drop the raw outputs of Read, Bash git diff, MCP github", "would save at least 39.6 KB (~9,900 tokens) by moving 1 tool output over 1.0 KB from before the last 2 prompts"} {
		if !strings.Contains(got, want) {
			t.Errorf("warning lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Grep") {
		t.Errorf("output from before the compaction counted:\n%s", got)
	}
	if ctx := s.prompt("s1"); !strings.Contains(ctx, "Context audit") || !strings.Contains(ctx, "Suggestion") {
		t.Errorf("the model did not get the audit: %q", ctx)
	}
	s.env["COMPACT_SUGGEST_ENABLED"] = "false"
	x.turn(165_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", x.path)); !strings.Contains(got, "Context audit") || strings.Contains(got, "Suggestion") {
		t.Errorf("COMPACT_SUGGEST_ENABLED=false: %q", got)
	}
}

// TestMonitorStateLocked: with the state lock held by another process for
// longer than the hook waits, Stop exits 0, prints nothing and logs one
// line; the warning comes at the next Stop.
func TestMonitorStateLocked(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	x.turn(150_000, "claude-sonnet-4-5")
	l, err := fsutil.LockFile(context.Background(), filepath.Join(s.home(), "state", ".lock"), true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out := s.stop("s1", x.path); out != "" {
		t.Errorf("printed with the state locked: %q", out)
	}
	l.Unlock()
	if !strings.Contains(s.log(), "context monitor: session state") {
		t.Errorf("not logged:\n%s", s.log())
	}
	if got := systemMessageOf(t, s.stop("s1", x.path)); !strings.Contains(got, "75%") {
		t.Errorf("no warning once the lock was free: %q", got)
	}
}

// TestMonitorAuditOtherFile: the same session read from another file (a
// copy, a fork) is audited from that file, not from the old offset.
func TestMonitorAuditOtherFile(t *testing.T) {
	s := newSandbox(t)
	out := func(x *tx, id, name string, n int) {
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":{}}]}}`, id, name),
			fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}}`, id, strings.Repeat("y", n)))
	}
	a := newTx(t, s)
	out(a, "r1", "Read", 40000)
	a.turn(150_000, "claude-sonnet-4-5")
	if got := systemMessageOf(t, s.stop("s1", a.path)); !strings.Contains(got, "Read: 40.0 KB") {
		t.Fatalf("first file: %q", got)
	}
	b := newTx(t, s)
	b.path = filepath.Join(s.project, "copy.jsonl")
	out(b, "g1", "Grep", 30000) // larger than the first file: an old offset would land inside it
	out(b, "g2", "Glob", 20000)
	b.turn(165_000, "claude-sonnet-4-5")
	got := systemMessageOf(t, s.stop("s1", b.path))
	if !strings.Contains(got, "Grep: 30.0 KB") || !strings.Contains(got, "Glob: 20.0 KB") || strings.Contains(got, "Read") {
		t.Errorf("the other file's audit: %q", got)
	}
}
