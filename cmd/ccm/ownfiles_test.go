package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/transcript/rewrite"
)

// ownEnv is a sandbox for one row of TestOwnFilesNoFollow: a Claude
// config dir with one old session, ccm's home and its store.
type ownEnv struct {
	claude, home, store, session string
}

// ccm runs a command in-process.
func (e ownEnv) ccm(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCCM("", args...)
}

// hook runs `ccm hook` on input, as Claude Code does.
func (e ownEnv) hook(t *testing.T, input string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := ccmMain([]string{"ccm", "hook"}, strings.NewReader(input), &out, &errb)
	return code, out.String(), errb.String()
}

// ownFiles lists every file ccm opens in place under its own folders
// (appends to, creates, locks, chmods, stamps): each with how to reach it
// and a command that writes it. Files ccm replaces whole are renamed
// into place, which replaces a symlink instead of following it; they are
// not listed. A new file ccm appends to gets a row here.
var ownFiles = []struct {
	name  string
	path  func(e ownEnv) string
	setup func(t *testing.T, e ownEnv) // before the symlink is planted
	run   func(t *testing.T, e ownEnv) (int, string, string)
	hook  bool // a hook: exit 0 and silence whatever happens
}{
	{name: "store index.jsonl", path: func(e ownEnv) string { return filepath.Join(e.store, "index.jsonl") },
		setup: func(t *testing.T, e ownEnv) { putFile(t, e, "first") },
		run: func(t *testing.T, e ownEnv) (int, string, string) {
			return e.ccm(t, "cache", "put", writeTemp(t, "second"))
		}},
	{name: "store lock", path: func(e ownEnv) string { return filepath.Join(e.store, "lock") },
		setup: func(t *testing.T, e ownEnv) { putFile(t, e, "first") },
		run: func(t *testing.T, e ownEnv) (int, string, string) {
			return e.ccm(t, "cache", "put", writeTemp(t, "second"))
		}},
	{name: "store meta.lock", path: func(e ownEnv) string { return filepath.Join(e.store, "meta.lock") },
		setup: func(t *testing.T, e ownEnv) { putFile(t, e, "first") },
		run:   func(t *testing.T, e ownEnv) (int, string, string) { return e.ccm(t, "pin", "--last") }},
	{name: "store packs/index.jsonl", path: func(e ownEnv) string { return filepath.Join(e.store, "packs", "index.jsonl") },
		setup: func(t *testing.T, e ownEnv) {
			if code, _, errs := e.ccm(t, "purge", "--threshold", "100", e.session); code != 0 {
				t.Fatalf("purge: %d %s", code, errs)
			}
		},
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.ccm(t, "pin", "--last") }},
	{name: "transcript lock", path: func(e ownEnv) string { return rewrite.LockPath(filepath.Join(e.home, "locks"), e.session) },
		run: func(t *testing.T, e ownEnv) (int, string, string) {
			return e.ccm(t, "purge", "--threshold", "100", e.session)
		}},
	{name: "maintain lock", path: func(e ownEnv) string { return filepath.Join(e.home, "locks", "maintain.lock") },
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.ccm(t, "archive", "--older-than", "1h") }},
	{name: "migrate lock", path: func(e ownEnv) string { return filepath.Join(e.home, "locks", "migrate.lock") },
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.ccm(t, "migrate", "--yes") }},
	{name: "captures.jsonl", path: func(e ownEnv) string { return filepath.Join(e.home, "captures.jsonl") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, bigBashOutput) }},
	{name: "hooks.log", path: func(e ownEnv) string { return filepath.Join(e.home, "logs", "hooks.log") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, "not json") }},
	{name: "hook state lock", path: func(e ownEnv) string { return filepath.Join(e.home, "state", ".lock") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, promptInput) }},
	{name: "hook state sweep stamp", path: func(e ownEnv) string { return filepath.Join(e.home, "state", ".gc") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, startInput) }},
	{name: "tool memory", path: func(e ownEnv) string { return filepath.Join(e.home, "tool-memory.ndjson") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, failureInput) }},
	{name: "tool memory lock", path: func(e ownEnv) string { return filepath.Join(e.home, "tool-memory.ndjson.lock") }, hook: true,
		run: func(t *testing.T, e ownEnv) (int, string, string) { return e.hook(t, failureInput) }},
}

// TestOwnFilesNoFollow plants a symlink at every file ccm opens in place
// under its own folders, pointing at a file of the user's outside them:
// the command writes nothing through it (the target keeps its content,
// mode and time, the symlink stays), and either refuses with one "ccm:" line or,
// for a hook, exits 0 in silence.
func TestOwnFilesNoFollow(t *testing.T) {
	for _, row := range ownFiles {
		t.Run(row.name, func(t *testing.T) {
			e := newOwnEnv(t)
			if row.setup != nil {
				row.setup(t, e)
			}
			target := filepath.Join(t.TempDir(), "users-file")
			if err := os.WriteFile(target, []byte("the user's own file\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// Old, as a stamp ccm renews when it is old would be.
			old := time.Now().AddDate(0, -1, 0).Truncate(time.Second)
			os.Chtimes(target, old, old)
			p := row.path(e)
			os.MkdirAll(filepath.Dir(p), 0o700)
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := row.run(t, e)
			if b, _ := os.ReadFile(target); string(b) != "the user's own file\n" {
				t.Errorf("the symlink's target was written: %q", b)
			}
			if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 || !fi.ModTime().Equal(old) {
				t.Errorf("the symlink's target was changed: mode %v, modified %v", fi.Mode().Perm(), fi.ModTime())
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the symlink was replaced (%v)", err)
			}
			switch {
			case row.hook:
				if code != 0 || stdout != "" && !strings.HasPrefix(stdout, "{") || stderr != "" {
					t.Errorf("hook: exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
			case code != 0:
				if !strings.HasPrefix(stderr, "ccm: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "symlink") {
					t.Errorf("exit %d, stderr %q: want one ccm: line naming the symlink", code, stderr)
				}
			}
			t.Logf("exit %d, stderr %q", code, stderr)
		})
	}
}

func newOwnEnv(t *testing.T) ownEnv {
	root := t.TempDir()
	e := ownEnv{claude: filepath.Join(root, "claude"), home: filepath.Join(root, "claude", "ccm"), store: filepath.Join(root, "claude", "cache", "ccm")}
	t.Setenv("HOME", root)
	t.Setenv("CLAUDE_CONFIG_DIR", e.claude)
	t.Setenv("CCM_HOME", e.home)
	t.Setenv("CCM_CACHE_DIR", e.store)
	proj := filepath.Join(e.claude, "projects", "-w")
	os.MkdirAll(proj, 0o700)
	e.session = filepath.Join(proj, "11111111-1111-4111-8111-111111111111.jsonl")
	b, err := os.ReadFile(filepath.Join("testdata", "ownfiles", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(e.session, b, 0o600)
	old := time.Now().AddDate(0, 0, -2)
	os.Chtimes(e.session, old, old)
	return e
}

// putFile stores content with ccm cache put.
func putFile(t *testing.T, e ownEnv, content string) {
	t.Helper()
	if code, _, errs := e.ccm(t, "cache", "put", writeTemp(t, content)); code != 0 {
		t.Fatalf("cache put: %d %s", code, errs)
	}
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(p, []byte(strings.Repeat(content+"\n", 50)), 0o600)
	return p
}

const (
	promptInput  = `{"session_id":"s1","transcript_path":"/nowhere/s1.jsonl","cwd":"/proj","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	startInput   = `{"session_id":"s1","transcript_path":"/nowhere/s1.jsonl","cwd":"/proj","hook_event_name":"SessionStart","source":"startup"}`
	failureInput = `{"session_id":"s1","transcript_path":"/nowhere/s1.jsonl","cwd":"/proj","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_use_id":"toolu_2","tool_input":{"command":"ls /nonexistent-xyz"},"error":"Exit code 2\nls: cannot access '/nonexistent-xyz': No such file or directory","is_interrupt":false}`
)

// bigBashOutput is a PostToolUse event whose Bash output is large enough
// to be captured.
var bigBashOutput = func() string {
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\\n")
	}
	return `{"session_id":"s1","transcript_path":"/nowhere/s1.jsonl","cwd":"/proj","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"make check"},"tool_response":{"stdout":"` + b.String() + `","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}}`
}()
