package hooklib

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// env is a fake environment for hook runs.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// sandbox is a Claude config dir and a project dir in a temp dir.
type sandbox struct {
	t       *testing.T
	claude  string
	project string
	env     env
	now     time.Time
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{t: t, claude: filepath.Join(dir, "claude"), project: filepath.Join(dir, "project"), env: env{},
		now: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)}
	for _, d := range []string{s.claude, s.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *sandbox) home() string { return filepath.Join(s.claude, "ccm") }

// write creates a file under the sandbox (path relative to its root).
func (s *sandbox) write(path, content string) string {
	s.t.Helper()
	p := filepath.Join(filepath.Dir(s.claude), path)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// run runs one hook with stdin and returns its stdout.
func (s *sandbox) run(event, stdin string) string {
	s.t.Helper()
	var out bytes.Buffer
	code := Run(context.Background(), Options{Event: event, ClaudeDir: s.claude, Stdin: strings.NewReader(stdin),
		Stdout: &out, Lookup: s.env.lookup, Now: func() time.Time { return s.now }})
	if code != 0 {
		s.t.Fatalf("hook %s exited %d", event, code)
	}
	return out.String()
}

// prompt runs UserPromptSubmit for session and returns the additional
// context ("" when there is none).
func (s *sandbox) prompt(session string) string {
	s.t.Helper()
	out := s.run(UserPromptSubmit, `{"session_id":"`+session+`","hook_event_name":"UserPromptSubmit","prompt":"go on","cwd":"`+s.project+`"}`)
	return contextOf(s.t, out)
}

// contextOf extracts additionalContext from a hook's output.
func contextOf(t *testing.T, out string) string {
	t.Helper()
	if out == "" {
		return ""
	}
	in, err := ParseInput([]byte(out))
	if err != nil {
		t.Fatalf("output is not one JSON object: %q", out)
	}
	return in.Get("hookSpecificOutput.additionalContext").String()
}

func (s *sandbox) log() string {
	data, _ := os.ReadFile(filepath.Join(s.home(), "logs", "hooks.log"))
	return string(data)
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// tx is the session's transcript path.
func (s *sandbox) tx() string { return filepath.Join(s.claude, "projects", "-p", "s1.jsonl") }

// persisted is where the client saves a cut Bash output of the session.
func (s *sandbox) persisted() string {
	return filepath.Join(strings.TrimSuffix(s.tx(), ".jsonl"), "tool-results", "b1.txt")
}

// in is a hook input for session s1 of the sandbox's project.
func (s *sandbox) in(event string, more map[string]any) string {
	m := map[string]any{"session_id": "s1", "transcript_path": s.tx(), "cwd": s.project, "hook_event_name": event, "tool_use_id": "toolu_1"}
	for k, v := range more {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}
