package harness

import (
	"reflect"
	"strings"
	"testing"
)

// Lines as Claude Code 2.1.330 writes them with --debug-file (from real
// runs; the commands shortened).
const sampleDebugLog = `2026-11-24T22:52:20.523Z [DEBUG] Registered 0 hooks from 3 plugins
2026-11-24T22:52:20.587Z [DEBUG] Hooks: Parsed initial response: {"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"}}
2026-11-24T22:52:20.598Z [DEBUG] Hooks: SessionStart:startup [python3 "/h/hook_echo.py" json] finished with status 0 (72ms)
2026-11-24T22:52:20.600Z [DEBUG] Successfully parsed and validated hook JSON output
2026-11-24T22:52:20.602Z [DEBUG] Hook SessionStart (python3 "/h/hook_echo.py" json) provided additionalContext (28 chars)
2026-11-24T22:52:20.703Z [DEBUG] Hooks: UserPromptSubmit [/bin/ccm hook UserPromptSubmit] finished with status 0 (40ms)
2026-11-24T22:52:20.704Z [DEBUG] Hook UserPromptSubmit (/bin/ccm hook UserPromptSubmit) provided additionalContext (32 chars)
2026-11-24T22:52:20.848Z [DEBUG] Hooks: PreToolUse:Bash [echo '{"a":[1]}'] finished with status 0 (57ms)
2026-11-24T22:52:21.015Z [DEBUG] Hooks: PreToolUse:Read [echo x] finished with status 0 (41ms)
2026-11-24T22:52:28.943Z [DEBUG] Hooks: PostToolUse:Bash [echo blocked >&2; exit 2] finished with status 2 (8ms)
2026-11-24T22:52:28.943Z [DEBUG] Hook output does not start with {, treating as plain text
2026-11-24T22:52:28.943Z [ERROR] "Hook PostToolUse:Bash (PostToolUse) error: status code 2\nstderr:\nblocked"
2026-11-24T22:52:28.591Z [ERROR] "Hook SessionStart:startup (SessionStart) error: status code 0\nstdout:\n{}\nstderr:\nHook JSON output validation failed — hookSpecificOutput.hookEventName: expected one of \"PreToolUse\""
2026-11-24T22:52:28.600Z [ERROR] Failed to fetch the MCP registry: offline
2026-11-24T22:52:28.601Z [WARN] hooks module cc-plugin-privacy@builtin settled slowly
2026-11-24T22:52:28.602Z [WARN] Hook Stop (x) timed out after 60s
2026-11-24T22:52:21.236Z [DEBUG] SessionEnd:other [/bin/ccm hook SessionEnd] completed with status 0
`

func TestParseDebugLog(t *testing.T) {
	h, err := ParseDebugLog(strings.NewReader(sampleDebugLog))
	if err != nil {
		t.Fatal(err)
	}
	wantRuns := map[string]map[string]int{
		"SessionStart":     {"exit 0": 1},
		"UserPromptSubmit": {"exit 0": 1},
		"PreToolUse":       {"exit 0": 2},
		"PostToolUse":      {"exit 2": 1},
		"SessionEnd":       {"exit 0": 1},
	}
	if !reflect.DeepEqual(h.Runs, wantRuns) {
		t.Errorf("runs %v\nwant %v", h.Runs, wantRuns)
	}
	wantCtx := map[string]int{"SessionStart": 1, "UserPromptSubmit": 1}
	if !reflect.DeepEqual(h.ContextAccepted, wantCtx) {
		t.Errorf("context accepted %v, want %v", h.ContextAccepted, wantCtx)
	}
	// The two hook [ERROR] lines and the hook timeout; not the MCP error
	// (no hook) nor the slow plugin warning (no failure).
	wantErr := []string{"Hook PostToolUse:Bash (PostToolUse) error: status code 2", "validation failed", "Hook Stop (x) timed out"}
	if len(h.Errors) != len(wantErr) {
		t.Fatalf("errors %q", h.Errors)
	}
	for i, w := range wantErr {
		if !strings.Contains(h.Errors[i], w) {
			t.Errorf("error %d: %q, want %q", i, h.Errors[i], w)
		}
	}
}

func TestParseDebugLogLongLineNoNewline(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	log := "2026-11-24T22:52:20Z [DEBUG] " + long + "\n2026-11-24T22:52:21Z [DEBUG] Hooks: Stop [c] finished with status 1 (3ms)"
	h, err := ParseDebugLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if h.Runs["Stop"]["exit 1"] != 1 {
		t.Fatalf("runs %v", h.Runs)
	}
}
