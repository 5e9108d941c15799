package hooklib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadInput(t *testing.T) {
	if _, err := ReadInput(strings.NewReader(""), 0); !errors.Is(err, ErrEmptyInput) {
		t.Errorf("empty: %v", err)
	}
	if _, err := ReadInput(strings.NewReader(" \n"), 0); !errors.Is(err, ErrEmptyInput) {
		t.Errorf("blank: %v", err)
	}
	for _, s := range []string{"not json", "{broken", `["array"]`, `"string"`, "{}{}"} {
		if _, err := ReadInput(strings.NewReader(s), 0); !errors.Is(err, ErrNotObject) {
			t.Errorf("%q: %v", s, err)
		}
	}
	big := strings.NewReader(`{"x":"` + strings.Repeat("a", 2000) + `"}`)
	if _, err := ReadInput(big, 1000); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("huge: %v", err)
	}
	if big.Len() != 0 {
		t.Error("the rest of a huge input was not drained")
	}
	in, err := ReadInput(strings.NewReader(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PostToolUse",
		"permission_mode":"default","prompt":"p","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"},
		"tool_use_id":"tu","source":"startup","trigger":"auto","custom_instructions":"ci","agent_id":"a","agent_type":"Explore",
		"stop_hook_active":true,"reason":"other"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{in.SessionID(), in.TranscriptPath(), in.Cwd(), in.Event(), in.PermissionMode(), in.Prompt(), in.ToolName(),
		in.ToolInput().Get("command").String(), in.ToolResponse().Get("stdout").String(), in.ToolUseID(), in.Source(),
		in.Trigger(), in.CustomInstructions(), in.AgentID(), in.AgentType(), in.Reason()}
	want := []string{"s", "/t.jsonl", "/w", "PostToolUse", "default", "p", "Bash", "ls", "x", "tu", "startup", "auto", "ci", "a", "Explore", "other"}
	if strings.Join(got, ",") != strings.Join(want, ",") || !in.StopHookActive() {
		t.Errorf("fields: %v", got)
	}
}

// TestBadInputIsSilent: every kind of bad input gives exit 0, no output and
// a line in the log.
func TestBadInputIsSilent(t *testing.T) {
	s := newSandbox(t)
	cases := map[string]string{
		"empty":   "",
		"notjson": "hello",
		"huge":    `{"prompt":"` + strings.Repeat("x", MaxInput) + `"}`,
		"unknown": `{"session_id":"s","hook_event_name":"NoSuchEvent"}`,
	}
	for name, stdin := range cases {
		if out := s.run(UserPromptSubmit, stdin); out != "" {
			t.Errorf("%s: printed %q", name, out)
		}
	}
	log := s.log()
	for _, want := range []string{"empty stdin", "not a JSON object", "larger than", `unknown event "NoSuchEvent"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestDisabled(t *testing.T) {
	for _, name := range []string{"CCM_HOOKS_DISABLED", "CLAUDE_HOOKS_PASSTHROUGH"} {
		s := newSandbox(t)
		s.env[name] = "1"
		if out := s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`); out != "" {
			t.Errorf("%s=1: printed %q", name, out)
		}
		if _, err := os.Stat(s.home()); err == nil {
			t.Errorf("%s=1: ccm home created", name)
		}
		// config.env can disable too.
		s2 := newSandbox(t)
		s2.write("claude/ccm/config.env", name+"=true\n")
		if out := s2.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`); out != "" {
			t.Errorf("%s in config.env: printed %q", name, out)
		}
	}
}

func TestPanicIsContained(t *testing.T) {
	s := newSandbox(t)
	handlers["Notification"] = func(context.Context, *Hook) (Response, error) { panic("boom") }
	defer delete(handlers, "Notification")
	if out := s.run("Notification", `{"session_id":"s","hook_event_name":"Notification"}`); out != "" {
		t.Errorf("printed %q", out)
	}
	if !strings.Contains(s.log(), "internal error: boom") {
		t.Errorf("log: %s", s.log())
	}
}

func TestEventFromArgumentAndStdin(t *testing.T) {
	s := newSandbox(t)
	// No hook_event_name: the argument names the event.
	out := s.run(SessionStart, `{"session_id":"s","source":"startup"}`)
	if !strings.Contains(out, `"hookEventName":"SessionStart"`) {
		t.Errorf("argument ignored: %q", out)
	}
	// Both: stdin wins, and the mismatch is logged.
	out = s.run(PreToolUse, `{"session_id":"s","hook_event_name":"SessionStart","source":"clear"}`)
	if !strings.Contains(out, `"hookEventName":"SessionStart"`) || !strings.Contains(s.log(), "registered for PreToolUse but got SessionStart") {
		t.Errorf("out %q log %s", out, s.log())
	}
}

func TestLogIsCapped(t *testing.T) {
	s := newSandbox(t)
	path := filepath.Join(s.home(), "logs", "hooks.log")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(strings.Repeat("old line\n", maxLogSize/9+10)), 0o600)
	s.run(UserPromptSubmit, "garbage")
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 1000 {
		t.Errorf("log not rotated: %v %v", fi.Size(), err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("no hooks.log.1: %v", err)
	}
}

func TestConfigSources(t *testing.T) {
	s := newSandbox(t)
	s.write("claude/ccm/config.env", "# comment\nexport DEFAULT_EFFORT=low\nCONTEXT_REFRESH_INTERVAL=\"7\"\nTHINKING_BUDGET_TOKENS=5000 # inline\nCONTEXT_REFRESH_MAX_CHARS=lots\n")
	e := env{"CONTEXT_REFRESH_INTERVAL": "9"}
	c := LoadConfig(s.claude, e.lookup)
	cases := []struct{ name, value, source string }{
		{"CCM_HOME", s.home(), "default"},
		{"DEFAULT_EFFORT", "low", "config.env"},
		{"CONTEXT_REFRESH_INTERVAL", "9", "env"},
		{"THINKING_BUDGET_TOKENS", "5000", "config.env"},
		{"CONTEXT_REFRESH_CLAUDE_MD_INTERVAL", "40", "default"},
		{"CONTEXT_REFRESH_RULES_DIR", filepath.Join(s.claude, "rules"), "default"},
		{"CLAUDE_HOOK_LOG_FILE", filepath.Join(s.home(), "logs", "hooks.log"), "default"},
	}
	for _, k := range cases {
		if v := c.Lookup(k.name); v.Value != k.value || v.Source != k.source {
			t.Errorf("%s = %+v, want %s from %s", k.name, v, k.value, k.source)
		}
	}
	if n := c.Int("CONTEXT_REFRESH_MAX_CHARS"); n != 8000 || len(c.Warnings) != 1 {
		t.Errorf("invalid int: %d, warnings %v", n, c.Warnings)
	}
	c.Validate()
	if len(c.Warnings) < 2 {
		t.Errorf("Validate did not report: %v", c.Warnings)
	}
	// CCM_HOME from the environment moves config.env with it.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "config.env"), []byte("DEFAULT_EFFORT=high\n"), 0o600)
	c = LoadConfig(s.claude, env{"CCM_HOME": other}.lookup)
	if c.String("DEFAULT_EFFORT") != "high" || c.Home != other {
		t.Errorf("CCM_HOME: %+v", c.Lookup("DEFAULT_EFFORT"))
	}
}

func TestStateStore(t *testing.T) {
	dir := t.TempDir()
	st := &Store{Dir: dir, Wait: time.Second}
	now := time.Now()
	ctx := context.Background()
	got, err := st.Load("fresh")
	if err != nil || got.Prompts != 0 || got.LastRules != 0 || got.LastClaudeMD != 0 {
		t.Errorf("fresh state: %+v %v", got, err)
	}
	st.Update(ctx, "a", now, func(s *State) error { s.Prompts = 5; return nil })
	st.Update(ctx, "b", now, func(s *State) error { s.Prompts = 3; return nil })
	if a, _ := st.Load("a"); a.Prompts != 5 {
		t.Errorf("a = %d", a.Prompts)
	}
	if b, _ := st.Load("b"); b.Prompts != 3 {
		t.Errorf("b = %d", b.Prompts)
	}
	if _, err := st.Update(ctx, "", now, func(*State) error { return nil }); err == nil {
		t.Error("empty session id accepted")
	}
	// Odd ids never share a file.
	if fileName("a/b") == fileName("a_b") || strings.ContainsAny(fileName("../../x"), "/") {
		t.Errorf("file names: %s %s %s", fileName("a/b"), fileName("a_b"), fileName("../../x"))
	}
	// A corrupt file starts over.
	os.WriteFile(filepath.Join(dir, fileName("c")), []byte("{torn"), 0o600)
	if s, err := st.Update(ctx, "c", now, func(s *State) error { s.Prompts++; return nil }); err != nil || s.Prompts != 1 {
		t.Errorf("corrupt state: %+v %v", s, err)
	}
	// Removal, also of what does not exist.
	for _, id := range []string{"a", "nope", ""} {
		if err := st.Remove(ctx, id); err != nil {
			t.Errorf("Remove(%q): %v", id, err)
		}
	}
	if a, _ := st.Load("a"); a.Prompts != 0 {
		t.Error("a survived Remove")
	}
}

func TestIdleStateRemoved(t *testing.T) {
	dir := t.TempDir()
	st := &Store{Dir: dir, Wait: time.Second}
	ctx := context.Background()
	now := time.Now()
	st.Update(ctx, "old", now, func(s *State) error { return nil })
	st.Update(ctx, "new", now, func(s *State) error { return nil })
	old := now.Add(-8 * 24 * time.Hour)
	os.Chtimes(filepath.Join(dir, fileName("old")), old, old)
	os.WriteFile(filepath.Join(dir, ".x.json.ccm-tmp-1"), nil, 0o600)
	os.Chtimes(filepath.Join(dir, ".x.json.ccm-tmp-1"), old, old)
	n, err := st.MaybeGC(ctx, now)
	if err != nil || n != 2 {
		t.Errorf("gc removed %d (%v)", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, fileName("new"))); err != nil {
		t.Error("live state removed")
	}
	// Not again within a day: the sweep is cheap because it is rare.
	os.Chtimes(filepath.Join(dir, fileName("new")), old, old)
	if n, _ := st.MaybeGC(ctx, now.Add(time.Hour)); n != 0 {
		t.Errorf("second sweep within a day removed %d", n)
	}
	if n, _ := st.MaybeGC(ctx, now.Add(25*time.Hour)); n != 1 {
		t.Errorf("sweep after a day removed %d", n)
	}
}

func TestSessionEndRemovesState(t *testing.T) {
	s := newSandbox(t)
	s.prompt("s1")
	s.prompt("s2")
	s.run(SessionEnd, `{"session_id":"s1","hook_event_name":"SessionEnd","reason":"other"}`)
	st := NewStore(s.home())
	if a, _ := st.Load("s1"); a.Prompts != 0 {
		t.Error("s1 state survived SessionEnd")
	}
	if b, _ := st.Load("s2"); b.Prompts != 1 {
		t.Error("s2 state lost")
	}
}

// TestConcurrentProcesses runs 8 real hook processes (this test binary,
// re-executed) against one session at once: no prompt may be lost.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newSandbox(t)
	const procs, each = 8, 25
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		go func() {
			cmd := execCommand(exe, s.claude, each)
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = errors.New(err.Error() + ": " + string(out))
			}
			errs <- err
		}()
	}
	for p := 0; p < procs; p++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, err := NewStore(s.home()).Load("shared")
	if err != nil || st.Prompts != procs*each {
		t.Errorf("prompts = %d, want %d (%v)\n%s", st.Prompts, procs*each, err, s.log())
	}
}

// TestMain lets the test binary act as a hook process for
// TestConcurrentProcesses.
func TestMain(m *testing.M) {
	if dir := os.Getenv("HOOKLIB_TEST_CLAUDE_DIR"); dir != "" {
		n := 0
		for _, c := range os.Getenv("HOOKLIB_TEST_RUNS") {
			n = n*10 + int(c-'0')
		}
		proc := os.Getenv("HOOKLIB_TEST_FAILURES")
		for i := 0; i < n; i++ {
			in := `{"session_id":"shared","hook_event_name":"UserPromptSubmit","prompt":"x"}`
			if proc != "" { // distinct failures, for the tool memory
				in = fmt.Sprintf(`{"session_id":"p%s","hook_event_name":"PostToolUseFailure","cwd":"/proj","tool_name":"Bash","tool_input":{"command":"step %s-%d"},"error":"Exit code 1\nfailure %s-%d"}`, proc, proc, i, proc, i)
			}
			Run(context.Background(), Options{ClaudeDir: dir, Stdout: io.Discard, Stdin: strings.NewReader(in)})
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestD73FieldNames: the fields are the ones Claude Code sends
// (tool_response, top-level cwd), not the ones the earlier docs named.
func TestD73FieldNames(t *testing.T) {
	in, _ := ParseInput([]byte(`{"tool_output":"wrong","tool_response":{"stdout":"right"},"session":{"cwd":"/wrong"},"cwd":"/right"}`))
	if in.ToolResponse().Get("stdout").String() != "right" || in.Cwd() != "/right" {
		t.Errorf("%s %s", in.ToolResponse().Raw, in.Cwd())
	}
}
