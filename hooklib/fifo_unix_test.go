//go:build unix

package hooklib

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccm/internal/fsutil"
)

// fifoCases put a FIFO, which nobody ever writes to, at every path a hook
// opens: the path fields of its input (transcript_path at Stop,
// PreCompact and after a Bash call, a cut-off Read's filePath, a Bash
// output's persistedOutputPath, the cwd's CLAUDE.md and rules), and the
// files and folders it reads or appends to in ccm's home. Each returns
// the event and its input; fifos are the paths to make FIFOs.
var fifoCases = []struct {
	name  string
	fifos func(s *sandbox) []string
	input func(s *sandbox) (event, stdin string)
}{
	{"Stop transcript_path", func(s *sandbox) []string { return []string{s.tx()} },
		func(s *sandbox) (string, string) { return Stop, s.in(Stop, nil) }},
	{"PreCompact transcript_path", func(s *sandbox) []string { return []string{s.tx()} },
		func(s *sandbox) (string, string) {
			return PreCompact, s.in(PreCompact, map[string]any{"trigger": "auto"})
		}},
	{"PostToolUse Bash transcript_path", func(s *sandbox) []string { return []string{s.tx()} },
		func(s *sandbox) (string, string) {
			return PostToolUse, s.in(PostToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "make"},
				"tool_response": map[string]any{"stdout": "ok", "stderr": ""}})
		}},
	{"PostToolUse Read filePath", func(s *sandbox) []string { return []string{filepath.Join(s.project, "big.txt")} },
		func(s *sandbox) (string, string) {
			p := filepath.Join(s.project, "big.txt")
			shown := strings.Repeat("alpha beta gamma delta\n", 2000)
			return PostToolUse, s.in(PostToolUse, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": p},
				"tool_response": map[string]any{"type": "text", "file": map[string]any{"filePath": p, "content": shown, "numLines": 2000, "startLine": 1, "totalLines": 5000}}})
		}},
	{"PostToolUse Bash persistedOutputPath", func(s *sandbox) []string { return []string{s.persisted()} },
		func(s *sandbox) (string, string) {
			shown := strings.Repeat("0123456789\n", 2800)
			return PostToolUse, s.in(PostToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "yes"},
				"tool_response": map[string]any{"stdout": shown, "stderr": "", "persistedOutputPath": s.persisted(), "persistedOutputSize": 220000}})
		}},
	{"UserPromptSubmit CLAUDE.md", func(s *sandbox) []string {
		return []string{filepath.Join(s.project, "CLAUDE.md"), filepath.Join(s.claude, "CLAUDE.md")}
	}, func(s *sandbox) (string, string) {
		return UserPromptSubmit, s.in(UserPromptSubmit, map[string]any{"prompt": "go on"})
	}},
	{"UserPromptSubmit rules folder", func(s *sandbox) []string {
		return []string{filepath.Join(s.project, ".claude", "rules"), filepath.Join(s.claude, "rules")}
	}, func(s *sandbox) (string, string) {
		return UserPromptSubmit, s.in(UserPromptSubmit, map[string]any{"prompt": "go on"})
	}},
	{"UserPromptSubmit rule file", func(s *sandbox) []string { return []string{filepath.Join(s.claude, "rules", "a.md")} },
		func(s *sandbox) (string, string) {
			return UserPromptSubmit, s.in(UserPromptSubmit, map[string]any{"prompt": "go on"})
		}},
	{"session state file", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "state", "s1.json")} },
		func(s *sandbox) (string, string) {
			return UserPromptSubmit, s.in(UserPromptSubmit, map[string]any{"prompt": "go on"})
		}},
	{"state folder", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "state")} },
		func(s *sandbox) (string, string) {
			return SessionStart, s.in(SessionStart, map[string]any{"source": "startup"})
		}},
	{"config file", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "config.env")} },
		func(s *sandbox) (string, string) {
			return SessionStart, s.in(SessionStart, map[string]any{"source": "startup"})
		}},
	{"hooks.log", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "logs", "hooks.log")} },
		func(s *sandbox) (string, string) { return SessionStart, "not json" }},
	{"saved state after compaction", func(s *sandbox) []string { return []string{preservedPath(s.home(), "s1")} },
		func(s *sandbox) (string, string) {
			return SessionStart, s.in(SessionStart, map[string]any{"source": "compact"})
		}},
	{"tool memory", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "tool-memory.ndjson")} },
		func(s *sandbox) (string, string) {
			return PreToolUse, s.in(PreToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
		}},
	{"tool memory, a failure", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "tool-memory.ndjson")} },
		func(s *sandbox) (string, string) {
			return "PostToolUseFailure", s.in("PostToolUseFailure", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls /x"}, "error": "Exit code 2\nls: cannot access '/x'"})
		}},
	{"captures.jsonl", func(s *sandbox) []string { return []string{filepath.Join(s.home(), "captures.jsonl")} },
		func(s *sandbox) (string, string) {
			return PostToolUse, s.in(PostToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "seq 5000"},
				"tool_response": map[string]any{"stdout": strings.Repeat("a line of output\n", 1000), "stderr": ""}})
		}},
}

// TestHooksNeverBlockOnFIFO: with a FIFO at any path a hook opens, the
// hook returns at once (not by giving up at its budget, which is set out
// of reach here), exits 0 and writes nothing but a valid answer.
func TestHooksNeverBlockOnFIFO(t *testing.T) {
	for _, c := range fifoCases {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t)
			s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
			s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "1"
			s.env["CONTEXT_THRESHOLD"] = "0"
			s.write("claude/rules/b.md", "Never commit secrets.\n")
			for _, p := range c.fifos(s) {
				os.RemoveAll(p)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			event, stdin := c.input(s)
			var out bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Run(context.Background(), Options{Event: event, ClaudeDir: s.claude, Stdin: strings.NewReader(stdin),
					Stdout: &out, Lookup: s.env.lookup, Now: func() time.Time { return s.now }, Budget: time.Hour})
			}()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("exit %d", code)
				}
			case <-time.After(time.Minute):
				t.Fatalf("the %s hook blocked on a FIFO", event)
			}
			if o := out.String(); o != "" && !json.Valid([]byte(o)) {
				t.Errorf("output is not JSON: %q", o)
			}
			if log, err := fsutil.ReadRegular(filepath.Join(s.home(), "logs", "hooks.log"), 1<<20); err == nil {
				t.Logf("log: %s", log)
			}
		})
	}
}
