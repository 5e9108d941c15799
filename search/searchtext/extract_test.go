package searchtext

import (
	"strings"
	"testing"

	"ccm/internal/textindex"
)

func TestLineKindsAndText(t *testing.T) {
	key := "sha256:" + strings.Repeat("ab", 32)
	stub := "[CCM_CACHED]\nkey: " + key + "\nsource: Bash make\nbytes: 10\nlines: 1\npinned: none\n[/CCM_CACHED]"
	stubJSON := strings.ReplaceAll(stub, "\n", `\n`)
	cases := []struct {
		line, text, tool string
		kind             uint8
	}{
		{`{"type":"user","message":{"role":"user","content":"fix the caf\u00e9 \"bug\""}}`, `fix the café "bug"`, "", textindex.KindPrompt},
		{`{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"secret plan"},{"type":"text","text":"Done."}]}}`, "Done.", "", textindex.KindReply},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la","description":"list","n":3}}]}}`, "ls -la\nlist", "Bash", textindex.KindInput},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a.txt"},{"type":"image","source":{"data":"AAAA"}}]}]}}`, "a.txt", "Bash", textindex.KindOutput},
		{`{"type":"user","isMeta":true,"message":{"content":"<system-reminder>injected</system-reminder>"}}`, "", "", 0},
		{`{"type":"progress","data":{"type":"hook_progress"}}`, "", "", 0},
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"MultiEdit","input":{"file_path":"a.go","edits":[{"old_string":"say \"x\": 1","new_string":"y"}, {"old_string" : "z","replace_all":true}]}}]}}`, "a.go\nsay \"x\": 1\ny\nz", "MultiEdit", textindex.KindInput},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`, "ok", "MultiEdit", textindex.KindOutput},
		{`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":"` + stubJSON + `"}]}}`, stub + "\nstored make output", "", textindex.KindOutput},
	}
	x := &Extractor{Resolve: func(k string) ([]byte, error) {
		if k != key {
			t.Errorf("resolved %q", k)
		}
		return []byte(`"stored make output"`), nil
	}}
	for _, c := range cases {
		text, rec := x.Text([]byte(c.line))
		if text != c.text || rec.Kind != c.kind || rec.Tool != c.tool {
			t.Errorf("%.60s: text %q kind %d tool %q, want %q %d %q", c.line, text, rec.Kind, rec.Tool, c.text, c.kind, c.tool)
		}
	}
	if p := x.Pending(); len(p) != 0 {
		t.Errorf("a tool call whose result came is still pending: %q", p)
	}
}

func TestStoredText(t *testing.T) {
	for in, want := range map[string]string{
		`"line one\nline two"`: "line one\nline two",
		`[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","data":"QUFB"}}]`: "a",
		"plain bytes\n":  "plain bytes\n",
		`{"not": "valid`: `{"not": "valid`,
	} {
		if got := string(StoredText([]byte(in))); got != want {
			t.Errorf("StoredText(%q) = %q, want %q", in, got, want)
		}
	}
}
