package capture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
)

// load reads a fixture: a tool call as Claude Code 2.1.330 sent it to a
// PostToolUse hook (shapes from its debug log), with a large output.
func load(t *testing.T, name string) Call {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r := gjson.ParseBytes(data)
	return Call{Tool: r.Get("tool_name").String(), Input: r.Get("tool_input"), Response: r.Get("tool_response")}
}

const key = ccm.Key("sha256:8f3a000000000000000000000000000000000000000000000000000000000001")

// TestReplaceKeepsShape: for every tool ccm captures, the replacement is
// the tool_response with only the content field changed; that field holds
// the header, the stub with the key, and the first lines.
func TestReplaceKeepsShape(t *testing.T) {
	cases := []struct {
		file, field, first string
	}{
		{"bash.json", "stdout", "1\n2\n3\n"},
		{"read.json", "file.content", "00000 alpha beta gamma delta épsilon\n"},
		{"glob.json", "filenames", "dir/file_with_a_long_name_0.txt"},
		{"grep-content.json", "content", "big.txt:1:alpha line 1\n"},
		{"grep-files.json", "filenames", "src/pkg/file_000.go"},
		{"mcp.json", "0.text", "row 1 of the MCP result\n"},
	}
	for _, c := range cases {
		call := load(t, c.file)
		cp, why := Decide(call, DefaultThresholds)
		if cp == nil {
			t.Fatalf("%s: not captured: %s", c.file, why)
		}
		out, err := cp.Replace(Stored{Key: key, Lines: Lines(cp.Content)})
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("%s: replacement is not JSON: %s", c.file, out)
		}
		if call.Response.IsArray() { // MCP: one text block
			if gjson.GetBytes(out, "#").Int() != 1 || gjson.GetBytes(out, "0.type").String() != "text" {
				t.Errorf("%s: %s", c.file, out)
			}
		}
		var before, after map[string]json.RawMessage
		json.Unmarshal([]byte(call.Response.Raw), &before)
		json.Unmarshal(out, &after)
		top := strings.Split(c.field, ".")[0]
		for k, v := range before {
			if k != top && string(after[k]) != string(v) {
				t.Errorf("%s: member %s changed: %s -> %s", c.file, k, v, after[k])
			}
		}
		if len(after) != len(before) {
			t.Errorf("%s: members %d -> %d", c.file, len(before), len(after))
		}
		f := gjson.GetBytes(out, c.field)
		text := f.String()
		if f.IsArray() {
			var parts []string
			f.ForEach(func(_, v gjson.Result) bool { parts = append(parts, v.String()); return true })
			text = strings.Join(parts, "\n")
		}
		for _, want := range []string{"[ccm captured this " + call.Tool, "Not an error", "[CCM_CACHED]", "key: " + string(key), "ccm cache get " + string(key) + " --lines A:B", c.first} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: replacement lacks %q:\n%s", c.file, want, text)
			}
		}
		if len(text) > 2000 {
			t.Errorf("%s: replacement is %d bytes; the client shows only the first 2 KB of a large output", c.file, len(text))
		}
		if st, ok := stub.Parse(text[strings.Index(text, stub.Start):]); !ok || st.Key != key || st.Bytes != int64(len(cp.Content)) {
			t.Errorf("%s: stub does not parse back: %+v", c.file, st)
		}
	}
}

// TestBashPreviewHeadAndTail: the model sees the first and last lines and
// how many bytes it did not see.
func TestBashPreviewHeadAndTail(t *testing.T) {
	cp, _ := Decide(load(t, "bash.json"), DefaultThresholds)
	out, _ := cp.Replace(Stored{Key: key, Lines: Lines(cp.Content)})
	s := gjson.GetBytes(out, "stdout").String()
	if !strings.Contains(s, "\n1\n2\n") || !strings.HasSuffix(s, "2999\n3000\n--- end of preview ---") || !strings.Contains(s, "bytes not shown") {
		t.Errorf("preview:\n%s", s)
	}
	if !strings.Contains(s, "13892 bytes, 3000 lines, exit 0") {
		t.Errorf("header: %s", s[:200])
	}
}

func TestThresholds(t *testing.T) {
	mk := func(tool, field string, n int) Call {
		resp := map[string]any{}
		switch tool {
		case "Bash":
			resp = map[string]any{"stdout": strings.Repeat("x", n), "stderr": ""}
		case "Read":
			resp = map[string]any{"type": "text", "file": map[string]any{"filePath": "/p/a.go", "content": strings.Repeat("x", n), "numLines": 1, "startLine": 1, "totalLines": 1}}
		}
		b, _ := json.Marshal(resp)
		in, _ := json.Marshal(map[string]any{"command": "make build", "file_path": "/p/a.go"})
		return Call{Tool: tool, Input: gjson.ParseBytes(in), Response: gjson.ParseBytes(b)}
	}
	for _, c := range []struct {
		tool string
		n    int
		want bool
	}{
		{"Bash", 2000, false}, {"Bash", 2001, true}, {"Read", 25000, false}, {"Read", 25001, true},
	} {
		cp, why := Decide(mk(c.tool, "", c.n), DefaultThresholds)
		if (cp != nil) != c.want {
			t.Errorf("%s %d bytes: captured=%v (%s)", c.tool, c.n, cp != nil, why)
		}
	}
	th := DefaultThresholds
	th.Bash = 0
	if cp, why := Decide(mk("Bash", "", 5000), th); cp != nil || why != SkipThreshold {
		t.Errorf("BASH_THRESHOLD=0: %v %s", cp != nil, why)
	}
}

// TestPassThrough: claude-context-manager's bypass list, paging Reads, subagents,
// trivial and ccm commands, unknown tools and unexpected shapes pass
// through untouched.
func TestPassThrough(t *testing.T) {
	bash := load(t, "bash.json")
	read := load(t, "read.json")
	with := func(c Call, input string) Call { c.Input = gjson.Parse(input); return c }
	cases := []struct {
		name string
		call Call
		why  string
	}{
		{"subagent", func() Call { c := bash; c.AgentID = "a1449380ed9bf8c94"; return c }(), SkipSubagent},
		{"paging offset", with(read, `{"file_path":"/p/big.txt","offset":10}`), SkipPaging},
		{"paging limit", with(read, `{"file_path":"/p/big.txt","limit":10}`), SkipPaging},
		{"ls", with(bash, `{"command":"ls -la /usr/lib"}`), SkipTrivial},
		{"git status", with(bash, `{"command":"git status"}`), SkipTrivial},
		{"git log -5", with(bash, `{"command":"git log -5"}`), SkipTrivial},
		{"ccm cache get", with(bash, `{"command":"ccm cache get sha256:ab --lines 1:400"}`), SkipCCM},
		{"ccm by path", with(bash, `{"command":"/home/u/go/bin/ccm cache get --last"}`), SkipCCM},
		{"unknown tool", func() Call { c := bash; c.Tool = "NotebookRead"; return c }(), SkipUnknown},
		{"MCP image block", Call{Tool: "mcp__x__shot", Input: gjson.Parse(`{}`),
			Response: gjson.Parse(`[{"type":"text","text":"` + strings.Repeat("t", 20000) + `"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`)}, SkipShape},
		{"image read", func() Call {
			c := read
			c.Response = gjson.Parse(`{"type":"image","file":{"base64":"` + strings.Repeat("A", 40000) + `","type":"image/png"}}`)
			return c
		}(), SkipShape},
		{"bash string response", func() Call { c := bash; c.Response = gjson.Parse(`"` + strings.Repeat("x", 5000) + `"`); return c }(), SkipShape},
	}
	for _, f := range []string{"CLAUDE.md", "README.md", "README", "README.rst", "package.json", "ci.yaml", "a.yml", "Cargo.toml", "go.lock", ".env", ".env.local", "prod.env"} {
		cases = append(cases, struct {
			name string
			call Call
			why  string
		}{f, with(read, `{"file_path":"/p/`+f+`"}`), SkipBypass})
	}
	for _, c := range cases {
		if cp, why := Decide(c.call, DefaultThresholds); cp != nil || why != c.why {
			t.Errorf("%s: captured=%v why=%q, want %q", c.name, cp != nil, why, c.why)
		}
	}
	// .env is a name part, not a substring (claude-context-manager let
	// app.envoy.py through).
	for _, f := range []string{"app.envoy.py", "environment.go", "main.go"} {
		if bypassed(f) {
			t.Errorf("%s bypassed", f)
		}
	}
}

func TestTrivialAndPatterns(t *testing.T) {
	for cmd, want := range map[string]bool{
		"pwd": true, "FOO=1 BAR=2": true, "command -v go": true, "git log -20": true,
		"ls | wc -l": false, "cat big.log": false, "git log": false, "echo $(cat x)": false,
		"cd /tmp && make": false, "go test ./...": false, "git diff": false,
	} {
		if Trivial(cmd) != want {
			t.Errorf("Trivial(%q) = %v", cmd, !want)
		}
	}
	for cmd, want := range map[string]string{
		"go test ./...": "go test", "sudo apt-get install x": "apt-get install", "CGO_ENABLED=0 go build .": "go build",
		"/usr/bin/find . -name x": "find", "git -C x log": "git", "cat a b": "cat", "": "(empty)",
	} {
		if got := CommandPattern(cmd); got != want {
			t.Errorf("CommandPattern(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestControlCharsStayJSON: control characters and invalid UTF-8 in an
// output make a valid replacement (Go quoting would write \x01, \a).
func TestControlCharsStayJSON(t *testing.T) {
	out := "\x01\a\v bell\xff\xfe\n" + strings.Repeat("line\n", 1000)
	b, _ := json.Marshal(map[string]any{"filenames": strings.Split(out, "\n")})
	cp, why := Decide(Call{Tool: "Glob", Input: gjson.Parse(`{"pattern":"*"}`), Response: gjson.ParseBytes(b)}, DefaultThresholds)
	if cp == nil {
		t.Fatal(why)
	}
	r, err := cp.Replace(Stored{Key: key})
	if err != nil || !gjson.ValidBytes(r) {
		t.Fatalf("%v %q", err, r)
	}
}

// TestPersistedOutput: when the client cut a large Bash output (30,000
// characters to the hook) and saved it whole under the session's
// tool-results, the whole output is stored; a file elsewhere, of another
// size, or not starting with what was shown, is not used.
func TestPersistedOutput(t *testing.T) {
	dir := t.TempDir()
	tx := filepath.Join(dir, "s1.jsonl")
	results := filepath.Join(dir, "s1", "tool-results")
	os.MkdirAll(results, 0o700)
	whole := strings.Repeat("0123456789\n", 20000)
	path := filepath.Join(results, "b1.txt")
	os.WriteFile(path, []byte(whole), 0o600)
	other := filepath.Join(dir, "elsewhere.txt")
	os.WriteFile(other, []byte(whole), 0o600)
	mk := func(p string, size int, shown string) Call {
		b, _ := json.Marshal(map[string]any{"stdout": shown, "stderr": "", "persistedOutputPath": p, "persistedOutputSize": size})
		return Call{Tool: "Bash", Input: gjson.Parse(`{"command":"yes 0123456789 | head -20000"}`), Response: gjson.ParseBytes(b), TranscriptPath: tx}
	}
	cp, _ := Decide(mk(path, len(whole), whole[:30000]), DefaultThresholds)
	if cp == nil || string(cp.Content) != whole {
		t.Fatalf("whole output not used: %d bytes", len(cp.Content))
	}
	for name, c := range map[string]Call{
		"outside tool-results": mk(other, len(whole), whole[:30000]),
		"wrong size":           mk(path, len(whole)+1, whole[:30000]),
		"other content":        mk(path, len(whole), strings.Repeat("x\n", 15000)),
	} {
		if cp, _ := Decide(c, DefaultThresholds); cp == nil || len(cp.Content) != 30000 {
			t.Errorf("%s: stored %d bytes, want the 30000 shown", name, len(cp.Content))
		}
	}
}

// TestWholeFileOfCutRead: a Read the client cut at its token cap is stored
// as the whole file, if the file still starts with what was read.
func TestWholeFileOfCutRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.txt")
	whole := strings.Repeat("alpha beta gamma delta\n", 5000)
	os.WriteFile(p, []byte(whole), 0o600)
	shown := whole[:23*1645]
	mk := func(total int) Call {
		b, _ := json.Marshal(map[string]any{"type": "text", "file": map[string]any{"filePath": p, "content": shown, "numLines": 1645, "startLine": 1, "totalLines": total}})
		in, _ := json.Marshal(map[string]any{"file_path": p})
		return Call{Tool: "Read", Input: gjson.ParseBytes(in), Response: gjson.ParseBytes(b)}
	}
	if cp, _ := Decide(mk(5001), DefaultThresholds); cp == nil || string(cp.Content) != whole {
		t.Errorf("cut Read: whole file not stored")
	}
	if cp, _ := Decide(mk(1645), DefaultThresholds); cp == nil || string(cp.Content) != shown {
		t.Errorf("complete Read: content changed")
	}
}
