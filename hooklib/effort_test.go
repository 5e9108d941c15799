package hooklib

import (
	"strings"
	"testing"
)

// The acceptance cases of the earlier thinking-policy suite
// (test_thinking_policy.py, 10 cases).
func TestEffortText(t *testing.T) {
	if s := EffortText("medium", 0); !strings.Contains(s, "medium") || !strings.Contains(s, "Sonnet") {
		t.Errorf("medium: %q", s)
	}
	if s := EffortText("low", 0); !strings.Contains(s, "low") || !strings.Contains(s, "minimal") {
		t.Errorf("low: %q", s)
	}
	if s := EffortText("high", 0); s != "" {
		t.Errorf("high without budget: %q", s)
	}
	if s := EffortText("high", 10000); !strings.Contains(s, "10,000") {
		t.Errorf("high 10000: %q", s)
	}
	if s := EffortText("medium", 5000); !strings.Contains(s, "5,000") || !strings.Contains(s, "budget") {
		t.Errorf("medium 5000: %q", s)
	}
	if EffortText("turbo", 0) != EffortText("medium", 0) {
		t.Error("unknown is not medium")
	}
}

func TestOpusNote(t *testing.T) {
	if s := OpusNote("Agent", "opus", "", "medium"); !strings.Contains(s, "opus") {
		t.Errorf("opus under medium: %q", s)
	}
	if s := OpusNote("Agent", "sonnet", "", "medium"); s != "" {
		t.Errorf("sonnet: %q", s)
	}
	if s := OpusNote("Agent", "opus", "", "high"); s != "" {
		t.Errorf("opus under high: %q", s)
	}
	if s := OpusNote("Agent", "", "", "low"); s != "" {
		t.Errorf("no model: %q", s)
	}
	// Beyond the earlier suite: Task counts too, other tools and custom
	// agent types do not.
	if OpusNote("Task", "claude-opus-4-1", "Plan", "low") == "" {
		t.Error("Task with an opus model id")
	}
	if OpusNote("Bash", "opus", "", "low") != "" || OpusNote("Agent", "opus", "security-reviewer", "low") != "" {
		t.Error("note for a non-agent tool or a custom agent")
	}
}

// TestEffortNoteBeforeTheSubagent: the note is sent on PreToolUse, as
// additionalContext, so it reaches the model before the subagent runs.
func TestEffortNoteBeforeTheSubagent(t *testing.T) {
	s := newSandbox(t)
	s.env["DEFAULT_EFFORT"] = "low"
	out := s.run(PreToolUse, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"model":"opus","prompt":"x"}}`)
	if ctx := contextOf(t, out); !strings.Contains(ctx, "profile default: low") {
		t.Errorf("%q", out)
	}
	if out := s.run(PostToolUse, `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Agent","tool_input":{"model":"opus"},"tool_response":{}}`); out != "" {
		t.Errorf("PostToolUse printed %q", out)
	}
}

func TestEffortOnSessionStart(t *testing.T) {
	s := newSandbox(t)
	for _, src := range []string{"startup", "clear", "compact", ""} {
		out := s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"`+src+`"}`)
		if contextOf(t, out) != effortMedium {
			t.Errorf("source %q: %q", src, out)
		}
	}
	// On resume and fork the text is replayed from the transcript.
	for _, src := range []string{"resume", "fork"} {
		if out := s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"`+src+`"}`); out != "" {
			t.Errorf("source %s: %q", src, out)
		}
	}
	s.env["EFFORT_POLICY_ENABLED"] = "false"
	if out := s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`); out != "" {
		t.Errorf("disabled: %q", out)
	}
	s.env["EFFORT_POLICY_ENABLED"] = "true"
	s.env["DEFAULT_EFFORT"] = "high"
	s.env["THINKING_BUDGET_TOKENS"] = "10000"
	if ctx := contextOf(t, s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`)); !strings.Contains(ctx, "Advisory thinking budget: 10,000 tokens per response.") {
		t.Errorf("budget: %q", ctx)
	}
}
