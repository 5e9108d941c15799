package hooklib

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGoldenOutputs pins, per event, the exact bytes a hook prints. Each
// output must be what the real client accepts for that event
// (docs/hooks-protocol.md, "Output: what reaches the model"):
// hookSpecificOutput with the exact event name on the context events, nothing
// on SessionEnd and Stop.
func TestGoldenOutputs(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	s.write("claude/rules/security.md", "---\npriority: 1\n---\nNever commit secrets.\n")
	s.write("claude/CLAUDE.md", "# Global\n\nBe concise.\n")
	s.write("project/.claude/rules/style.md", "Use \"tabs\" in Go files.\n")
	cases := []struct{ event, stdin string }{
		{SessionStart, `{"session_id":"s1","hook_event_name":"SessionStart","source":"startup"}`},
		{UserPromptSubmit, `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi","cwd":"PROJECT"}`},
		{PreToolUse, `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"model":"opus","subagent_type":"Explore","prompt":"look"}}`},
		{PostToolUse, `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{"stdout":"ok"}}`},
		{Stop, `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`},
		{PreCompact, `{"session_id":"s1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`},
		{SessionEnd, `{"session_id":"s1","hook_event_name":"SessionEnd","reason":"other"}`},
	}
	for _, c := range cases {
		stdin := strings.ReplaceAll(c.stdin, "PROJECT", s.project)
		out := s.run(c.event, stdin)
		out = strings.ReplaceAll(out, s.claude, "CLAUDE_DIR")
		golden(t, c.event+".json", out)
		if out != "" {
			checkAccepted(t, c.event, out)
		}
	}
}

// checkAccepted checks an output against the shapes the real client
// accepts.
func checkAccepted(t *testing.T, event, out string) {
	t.Helper()
	if len([]rune(out)) > MaxPayload {
		t.Errorf("%s: %d characters", event, len([]rune(out)))
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("%s: not exactly one JSON line: %q", event, out)
	}
	if _, ok := v["additionalContext"]; ok {
		t.Errorf("%s: top-level additionalContext is ignored by the client", event)
	}
	if hso, ok := v["hookSpecificOutput"].(map[string]any); ok {
		if !contextEvents[event] {
			t.Errorf("%s: hookSpecificOutput is rejected on this event", event)
		}
		if hso["hookEventName"] != event {
			t.Errorf("%s: hookEventName %v", event, hso["hookEventName"])
		}
	}
	if strings.ContainsAny(out, "╔═╗║╠╣╚╝┌─┐│└┘") {
		t.Errorf("%s: box drawing in output", event)
	}
}

func TestRenderRules(t *testing.T) {
	cases := []struct {
		event   string
		r       Response
		want    string
		dropped bool
	}{
		{SessionStart, Response{Context: "hi"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"hi"}}` + "\n", false},
		{PostToolUse, Response{Context: "a\"b\n\u2028"}, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"a\"b\n\u2028"}}` + "\n", false},
		{SessionEnd, Response{Context: "x", SystemMessage: "y"}, "", true},
		{Stop, Response{Context: "x"}, "", true},
		{Stop, Response{Context: "go on", Continue: true}, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"go on"}}` + "\n", false},
		{PreCompact, Response{Context: "x", SystemMessage: "note"}, `{"systemMessage":"note"}` + "\n", true},
		{PostCompact, Response{Context: "x"}, "", true},
		{UserPromptSubmit, Response{}, "", false},
		{UserPromptSubmit, Response{Context: "c", SystemMessage: "m"}, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"},"systemMessage":"m"}` + "\n", false},
	}
	for _, c := range cases {
		out, dropped := Render(c.event, c.r)
		if string(out) != c.want || dropped != c.dropped {
			t.Errorf("Render(%s, %+v) = %q, %v; want %q, %v", c.event, c.r, out, dropped, c.want, c.dropped)
		}
	}
}

func TestRenderNeverExceedsCap(t *testing.T) {
	for _, text := range []string{strings.Repeat("x", 20000), strings.Repeat("\"\n", 8000), strings.Repeat("日本😀", 5000), strings.Repeat("\x01", 3000)} {
		for _, ev := range []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse} {
			out, _ := Render(ev, Response{Context: text})
			if n := Size16(string(out)); n > MaxPayload {
				t.Errorf("%s: %d UTF-16 units", ev, n)
			}
			if !strings.Contains(string(out), "cut to fit") {
				t.Errorf("%s: no cut marker", ev)
			}
			checkAccepted(t, ev, string(out))
		}
	}
	// Exactly at the budget: no cut.
	text := strings.Repeat("y", ContextBudget(UserPromptSubmit))
	out, _ := Render(UserPromptSubmit, Response{Context: text})
	if Size16(string(out)) != MaxPayload || strings.Contains(string(out), "cut to fit") {
		t.Errorf("budget-sized context: %d units", Size16(string(out)))
	}
}

func TestSize(t *testing.T) {
	cases := map[string]int{"abc": 3, "a\nb": 4, `"`: 2, "\x01": 6, "é": 1, "😀": 2, "\u2028": 6}
	for s, want := range cases {
		if got := Size(s); got != want {
			t.Errorf("Size(%q) = %d, want %d", s, got, want)
		}
		var b strings.Builder
		writeJSONString(&b, s)
		if got := Size16(b.String()) - 2; got != want {
			t.Errorf("rendered %q is %d units, Size says %d", s, got, want)
		}
	}
}
