package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPTools drives ccm mcp in-process: the three tools over a config
// dir with one session whose Bash output a purge stubbed.
func TestMCPTools(t *testing.T) {
	claude, _ := storeEnv(t)
	t.Setenv("CCM_HOME", filepath.Join(claude, "ccm"))
	stored := "build log line 1\nline 2: error E1234 in main.go\nline 3\n"
	code, key, errOut := runCCM(stored, "cache", "put", "--tool", "Bash")
	if code != 0 {
		t.Fatal(errOut)
	}
	key = strings.TrimSpace(key)
	sid := "dddddddd-0000-4000-8000-000000000004"
	stub := fmt.Sprintf("[CCM_CACHED]\nkey: %s\nsource: Bash make\nbytes: %d\nlines: 3\npinned: none\nget: ccm cache get %s\n[/CCM_CACHED]", key, len(stored), key)
	lines := []map[string]any{
		{"type": "user", "sessionId": sid, "cwd": "/src/app", "timestamp": "2026-01-01T10:00:00Z",
			"message": map[string]any{"role": "user", "content": "why does the gazelle build fail"}},
		{"type": "assistant", "sessionId": sid, "cwd": "/src/app", "timestamp": "2026-01-01T10:01:00Z",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": "make"}}}}},
		{"type": "user", "sessionId": sid, "cwd": "/src/app", "timestamp": "2026-01-01T10:02:00Z",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": stub}}}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(append(j, '\n'))
	}
	tr := filepath.Join(claude, "projects", "-src-app", sid+".jsonl")
	os.MkdirAll(filepath.Dir(tr), 0o700)
	os.WriteFile(tr, []byte(b.String()), 0o600)

	call := func(id int, name string, args any) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, a)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		call(2, "search_sessions", map[string]any{"query": "E1234"}),
		call(3, "read_output", map[string]any{"key": key, "lines": "2:2"}),
		call(4, "read_session", map[string]any{"session": "dddddddd", "line": 2, "count": 5}),
		call(5, "search_sessions", map[string]any{"query": "!!!"}),
		call(6, "read_session", map[string]any{"session": "ffff"}),
		call(7, "read_output", map[string]any{"key": "sha256:nothex"}),
	}, "\n") + "\n"
	code, out, errOut := runCCM(in, "mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	texts := map[float64]string{}
	isErr := map[float64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			ID     float64 `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if len(r.Result.Content) > 0 {
			texts[r.ID], isErr[r.ID] = r.Result.Content[0].Text, r.Result.IsError
		}
	}
	if s := texts[2]; !strings.Contains(s, sid) || !strings.Contains(s, `"line": 3`) || !strings.Contains(s, "E1234") || isErr[2] {
		t.Fatalf("search_sessions: %s", s)
	}
	if s := texts[3]; s != "line 2: error E1234 in main.go\n" || isErr[3] {
		t.Fatalf("read_output: %q", s)
	}
	if s := texts[4]; !strings.Contains(s, `"line": 2`) || !strings.Contains(s, "make") || strings.Contains(s, "gazelle") || isErr[4] {
		t.Fatalf("read_session from line 2: %s", s)
	}
	for id, want := range map[float64]string{5: "no words", 6: "no session", 7: "key"} {
		if !isErr[id] || !strings.Contains(texts[id], want) {
			t.Errorf("call %v: error %v %q, want an error about %s", id, isErr[id], texts[id], want)
		}
	}
}
