package harness

import (
	"strings"
	"testing"
)

// A resumed session as the client sends it: a prompt, a thinking +
// tool_use turn, its result, a system turn, the new prompt.
const goodBody = `{"model":"claude-opus-5-5","stream":true,"messages":[
 {"role":"user","content":"list the files"},
 {"role":"assistant","content":[
   {"type":"thinking","thinking":"I will run ls.","signature":"EqQBCkYIBxgCKkBsignaturebytes0123456789"},
   {"type":"text","text":"Let me look."},
   {"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"ls"}},
   {"type":"tool_use","id":"toolu_02","name":"Read","input":{"file_path":"a.txt"}}]},
 {"role":"user","content":[
   {"type":"tool_result","tool_use_id":"toolu_01","content":"a.txt"}]},
 {"role":"user","content":[
   {"type":"tool_result","tool_use_id":"toolu_02","content":[{"type":"text","text":"hello"}]},
   {"type":"text","text":"thanks"}]},
 {"role":"assistant","content":[{"type":"text","text":"There is a.txt."}]},
 {"role":"system","content":"<system-reminder>date changed</system-reminder>"},
 {"role":"user","content":[{"type":"text","text":"ping"}]}]}`

func TestValidateGood(t *testing.T) {
	v := Validate([]byte(goodBody), "ping")
	if !v.Valid() || len(v.Warnings) != 0 {
		t.Fatalf("problems %q, warnings %q", v.Problems, v.Warnings)
	}
	s := v.Stats
	// Counted by hand from goodBody: 7 messages (4 user, 2 assistant, 1
	// system); user messages 2 and 3 merge and the system turn is skipped,
	// so 5 turns (user, assistant, user, assistant, user); two tool pairs.
	if s.Messages != 7 || s.User != 4 || s.Assistant != 2 || s.System != 1 || s.Turns != 5 ||
		s.ToolPairs != 2 || s.Thinking != 1 || s.Model != "claude-opus-5-5" {
		t.Fatalf("stats %+v", s)
	}
	if s.RequestBytes != len(goodBody) {
		t.Fatalf("request_bytes %d, want %d", s.RequestBytes, len(goodBody))
	}
	start := strings.Index(goodBody, "[\n {\"role\"")
	end := strings.LastIndex(goodBody, "]")
	if want := end + 1 - start; s.MessagesBytes != want {
		t.Fatalf("messages_bytes %d, want %d", s.MessagesBytes, want)
	}
}

// Each bad body breaks one rule; want is a piece of the one problem it
// must give.
func TestValidateBad(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"no messages", `{"model":"m"}`, "messages missing or empty"},
		{"empty messages", `{"messages":[]}`, "messages missing or empty"},
		{"unknown role", `{"messages":[{"role":"tool","content":"x"},{"role":"user","content":"ping"}]}`, `unknown role "tool"`},
		{"empty string", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"user","content":"ping"}]}`, "messages.1: empty string content"},
		{"empty array", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[]},{"role":"user","content":"ping"}]}`, "messages.1: empty content array"},
		{"empty text", `{"messages":[{"role":"user","content":[{"type":"text","text":""}]},{"role":"assistant","content":"b"},{"role":"user","content":"ping"}]}`, "messages.0.content.0: empty text block"},
		{"whitespace text", `{"messages":[{"role":"user","content":[{"type":"text","text":" \n"}]},{"role":"assistant","content":"b"},{"role":"user","content":"ping"}]}`, "whitespace-only text block"},
		{"orphan tool_use", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},{"role":"user","content":"ping"}]}`, "tool_use ids without tool_result immediately after: t1"},
		{"orphan tool_result", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"},{"type":"text","text":"ping"}]}]}`, "tool_result t9 has no tool_use in the previous assistant turn"},
		{"system between pair", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},{"role":"system","content":"note"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":"ping"}]}]}`, "a system turn sits between tool_use and its tool_result"},
		{"result after text", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"text","text":"first"},{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":"ping"}]}]}`, "tool_result t1 comes after non-tool_result content"},
		{"duplicate id", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":"ping"}]}]}`, "duplicate tool_use id t1"},
		{"input not object", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":"ls"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"text","text":"ping"}]}]}`, "tool_use.input is not an object"},
		{"unsigned thinking", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"b"}]},{"role":"user","content":"ping"}]}`, "thinking block without signature"},
		{"redacted without data", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"redacted_thinking"},{"type":"text","text":"b"}]},{"role":"user","content":"ping"}]}`, "redacted_thinking without data"},
		{"thinking in user", `{"messages":[{"role":"user","content":[{"type":"thinking","thinking":"hmm","signature":"EqQBCkYIBxgCKkBsignaturebytes"},{"type":"text","text":"ping"}]}]}`, "thinking block in a user message"},
		{"tool_use in user", `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}},{"type":"text","text":"ping"}]}]}`, "tool_use in a user message"},
		{"last turn assistant", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, "last turn is assistant, not user"},
		{"wrong prompt", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"pong"}]}`, `does not end with the prompt "ping"`},
	}
	for _, c := range cases {
		v := Validate([]byte(c.body), "ping")
		if len(v.Problems) != 1 || !strings.Contains(v.Problems[0], c.want) {
			t.Errorf("%s: problems %q, want exactly one with %q", c.name, v.Problems, c.want)
		}
	}
}

func TestValidateWarnings(t *testing.T) {
	body := `{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"[REDACTED_SIGNATURE]"},{"type":"text","text":"b"}]},{"role":"user","content":"ping"}]}`
	v := Validate([]byte(body), "")
	if !v.Valid() {
		t.Fatalf("problems %q", v.Problems)
	}
	want := []string{"thinking signature looks fake or redacted", "first turn is assistant, not user"}
	if len(v.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %q", v.Warnings, want)
	}
	for i, w := range want {
		if !strings.Contains(v.Warnings[i], w) {
			t.Errorf("warning %d: %q, want %q", i, v.Warnings[i], w)
		}
	}
}
