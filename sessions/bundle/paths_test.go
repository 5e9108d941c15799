package bundle

import (
	"testing"
)

func TestMappingPath(t *testing.T) {
	for _, c := range []struct {
		old, new, in, want string
		ok                 bool
	}{
		{"/Users/a/proj", "/home/b/p", "/Users/a/proj", "/home/b/p", true},
		{"/Users/a/proj", "/home/b/p", "/Users/a/proj/sub/x", "/home/b/p/sub/x", true},
		{"/Users/a/proj/", "/home/b/p", "/Users/a/proj/sub", "/home/b/p/sub", true},
		{"/Users/a/proj", "/home/b/p", "/Users/a/project", "", false},
		{"/Users/a/proj", "/home/b/p", "/Users/a", "", false},
		{"/Users/a/proj", "/home/b/p", "relative/Users/a/proj", "", false},
		{`C:\Users\me\proj`, "/home/b/p", `C:\Users\me\proj`, "/home/b/p", true},
		{`C:\Users\me\proj`, "/home/b/p", `C:\Users\me\proj\sub\deep`, "/home/b/p/sub/deep", true},
		{`C:\Users\me\proj`, "/home/b/p", `C:\Users\me\proj/mixed\seps`, "/home/b/p/mixed/seps", true},
		{`C:\Users\me\proj`, "/home/b/p", `C:\Users\me\proj2`, "", false},
		{`\\server\share\proj`, "/srv/p", `\\server\share\proj\a`, "/srv/p/a", true},
		{"/Users/a/proj", `D:\work\p`, "/Users/a/proj/sub/x", `D:\work\p\sub\x`, true},
		{"/same", "/same", "/same/x", "", false},
	} {
		m := &Mapping{OldRoot: Root(c.old), NewRoot: Root(c.new)}
		got, ok := m.Path(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s -> %s: Path(%q) = %q, %v; want %q, %v", c.old, c.new, c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestMappingLine: the location fields and the session id change; every
// other byte of the record, its key order and the conversation's
// mentions of the old path stay as they were.
func TestMappingLine(t *testing.T) {
	m := &Mapping{OldRoot: "/Users/a/proj", NewRoot: "/home/b/my proj", OldID: "old-id", NewID: "new-id"}
	for _, c := range []struct {
		name, in, want string
		located, ided  bool
	}{
		{"record",
			`{"parentUuid":null,"cwd":"/Users/a/proj/sub","sessionId":"old-id","message":{"content":"cd /Users/a/proj && ls"},"uuid":"u1"}` + "\n",
			`{"parentUuid":null,"cwd":"/home/b/my proj/sub","sessionId":"new-id","message":{"content":"cd /Users/a/proj && ls"},"uuid":"u1"}` + "\n",
			true, true},
		{"crlf and spacing",
			`{"cwd": "/Users/a/proj", "type":"user"}` + "\r\n",
			`{"cwd": "/home/b/my proj", "type":"user"}` + "\r\n",
			true, false},
		{"relocated",
			`{"type":"relocated","sessionId":"old-id","relocatedCwd":"/Users/a/proj/wt"}`,
			`{"type":"relocated","sessionId":"new-id","relocatedCwd":"/home/b/my proj/wt"}`,
			true, true},
		{"worktree",
			`{"type":"worktree-state","worktreeSession":{"originalCwd":"/Users/a/proj","worktreePath":"/Users/a/proj/.claude/worktrees/x","worktreeBranch":"b"},"sessionId":"other"}`,
			`{"type":"worktree-state","worktreeSession":{"originalCwd":"/home/b/my proj","worktreePath":"/home/b/my proj/.claude/worktrees/x","worktreeBranch":"b"},"sessionId":"other"}`,
			true, false},
		{"elsewhere", `{"cwd":"/tmp/x","sessionId":"another"}`, `{"cwd":"/tmp/x","sessionId":"another"}`, false, false},
		{"tool input keeps its path", `{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"file_path":"/Users/a/proj/a.go"}}]}}`,
			`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"file_path":"/Users/a/proj/a.go"}}]}}`, false, false},
		{"not json", `{"cwd":"/Users/a/proj", torn`, `{"cwd":"/Users/a/proj", torn`, false, false},
		{"escaped", `{"cwd":"/Users/a/proj/\u00e9t\u00e9"}`, `{"cwd":"/home/b/my proj/été"}`, true, false},
	} {
		out, located, ided, err := m.Line([]byte(c.in))
		if err != nil || string(out) != c.want || located != c.located || ided != c.ided {
			t.Errorf("%s:\n got %s (%v %v %v)\nwant %s (%v %v)", c.name, out, located, ided, err, c.want, c.located, c.ided)
		}
	}
}

func TestRename(t *testing.T) {
	const o, n = "old", "new"
	for in, want := range map[string]string{
		"projects/F/old.jsonl":                          "projects/G/new.jsonl",
		"projects/F/old":                                "projects/G/new",
		"file-history/old":                              "file-history/new",
		"projects/F/old/subagents/agent-a.jsonl":        "projects/G/new/subagents/agent-a.jsonl",
		"projects/F/old.jsonl.backup.20260101_0000.000": "projects/G/new.jsonl.backup.20260101_0000.000",
		"projects/F/agent-a.jsonl":                      "projects/G/agent-a.jsonl",
		"file-history/old/h@v2":                         "file-history/new/h@v2",
		"todos/old-agent-old.json":                      "todos/new-agent-new.json",
		"debug/old.txt":                                 "debug/new.txt",
	} {
		if got := Rename(in, "F", "G", o, n); got != want {
			t.Errorf("Rename(%q) = %q, want %q", in, got, want)
		}
	}
}
