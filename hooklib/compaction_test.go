package hooklib

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func (s *sandbox) preCompact(session, path, cwd, focus string) string {
	s.t.Helper()
	return s.run(PreCompact, fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PreCompact","transcript_path":%q,"cwd":%q,"trigger":"manual","custom_instructions":%q}`, session, path, cwd, focus))
}

func (s *sandbox) sessionStart(session, source string) string {
	s.t.Helper()
	return s.run(SessionStart, fmt.Sprintf(`{"session_id":%q,"hook_event_name":"SessionStart","source":%q,"cwd":%q}`, session, source, s.project))
}

// workLines is a session's work after an earlier compaction: a task
// created and one completed by id, an edit, a failing then passing test,
// a decision and an error.
func workLines() []string {
	return []string{
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":"old request that was compacted away"}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m0","role":"assistant","content":[{"type":"tool_use","id":"w0","name":"Write","input":{"file_path":"/src/old_before_boundary.go","content":"x"}}]}}`,
		`{"type":"system","subtype":"compact_boundary","isSidechain":false,"uuid":"cb","content":"Conversation compacted"}`,
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":"add the cache layer"}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"tc1","name":"TaskCreate","input":{"subject":"Add the cache layer"}},{"type":"tool_use","id":"tc2","name":"TaskCreate","input":{"subject":"Benchmark the cache"}}]}}`,
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tc1","content":"Task #1 created successfully: Add the cache layer"},{"type":"tool_result","tool_use_id":"tc2","content":"Task #2 created successfully: Benchmark the cache"}]}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"TaskUpdate","input":{"taskId":"2","status":"completed"}}]}}`,
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"Updated task #2 status"}]}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"I decided to use an LRU because the working set is small."},{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/src/cache.go","old_string":"a","new_string":"b"}}]}}`,
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"e1","content":"ok"}]}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m4","role":"assistant","content":[{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"go test ./cache/"}}]}}`,
		`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"b1","content":"--- FAIL: TestEvict\nExit code 1","is_error":true}]}}`,
		`{"type":"assistant","isSidechain":false,"message":{"id":"m5","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_read_input_tokens":150000}}}`,
	}
}

// TestPreserveAcrossCompaction: PreCompact saves the block and says so in
// systemMessage only; the SessionStart after the compaction injects it
// once; what came before the last boundary is not in it.
func TestPreserveAcrossCompaction(t *testing.T) {
	s := newSandbox(t)
	s.env["EFFORT_POLICY_ENABLED"] = "false"
	s.write("claude/compact-instructions.txt", "Always keep the benchmark numbers.")
	x := newTx(t, s)
	x.add(workLines()...)
	out := s.preCompact("s1", x.path, s.project, "keep the cache design")
	msg := systemMessageOf(t, out)
	if !strings.Contains(msg, "saved the working state") || !strings.Contains(msg, "1 open task") {
		t.Fatalf("PreCompact said %q", out)
	}
	if !strings.Contains(msg, "not a git repository") {
		t.Errorf("a cwd outside git is not named: %q", msg)
	}
	block := contextOf(t, s.sessionStart("s1", "compact"))
	for _, want := range []string{"WORKING STATE PRESERVED", "keep the cache design", "task #1 [pending] Add the cache layer",
		"/src/cache.go", "go test ./cache/ → failed: --- FAIL: TestEvict", "decided to use an LRU", "Always keep the benchmark numbers", "add the cache layer"} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	for _, bad := range []string{"Benchmark the cache", "old_before_boundary", "old request"} {
		if strings.Contains(block, bad) {
			t.Errorf("block holds %q (completed, or before the last boundary):\n%s", bad, block)
		}
	}
	if again := contextOf(t, s.sessionStart("s1", "compact")); again != "" {
		t.Errorf("injected twice: %q", again)
	}
	if got := contextOf(t, s.sessionStart("s2", "startup")); strings.Contains(got, "PRESERVED") {
		t.Errorf("injected at startup")
	}
}

// TestPreserveGitDiff: the session's repository's diff stat is in the
// block; a cwd that is not a directory is skipped.
func TestPreserveGitDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	s := newSandbox(t)
	repo := filepath.Join(s.project, "repo")
	os.MkdirAll(repo, 0o700)
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"}} {
		c := exec.Command("git", append([]string{"-C", repo}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("1\n"), 0o600)
	exec.Command("git", "-C", repo, "add", "a.txt").Run()
	x := newTx(t, s)
	x.add(workLines()...)
	s.preCompact("s1", x.path, repo, "")
	if block := contextOf(t, s.sessionStart("s1", "compact")); !strings.Contains(block, "GIT DIFF STAT") || !strings.Contains(block, "a.txt") {
		t.Errorf("no diff stat:\n%s", block)
	}
	msg := systemMessageOf(t, s.preCompact("s2", x.path, filepath.Join(repo, "a.txt"), ""))
	if !strings.Contains(msg, "cwd is not a directory") {
		t.Errorf("a file as cwd: %q", msg)
	}
}

// TestPreserveBudget: a session with many long items still injects within
// the output cap, newest items kept.
func TestPreserveBudget(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	for i := range 300 {
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":"m%d","role":"assistant","content":[{"type":"tool_use","id":"e%d","name":"Edit","input":{"file_path":"/src/%s/file%03d.go"}},{"type":"text","text":"- decided %d: %s"}]}}`, i, i, strings.Repeat("deep/", 30), i, i, strings.Repeat("because ", 30)),
			fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"e%d","content":"error: %s","is_error":true}]}}`, i, strings.Repeat("bad ", 100)))
	}
	s.preCompact("s1", x.path, s.project, strings.Repeat("focus ", 500))
	out := s.sessionStart("s1", "compact")
	if n := Size16(out); n > MaxPayload || n < MaxPayload/2 {
		t.Errorf("output is %d characters", n)
	}
	block := contextOf(t, out)
	if !strings.Contains(block, "file299.go") || strings.Contains(block, "file100.go") {
		t.Errorf("not the newest files kept:\n%s", block)
	}
	if !strings.HasSuffix(block, "END OF PRESERVED STATE ═══") {
		t.Errorf("block cut at the end rather than within budget")
	}
}

// TestPreserveBadInput: a missing transcript is silent and logged.
func TestPreserveBadInput(t *testing.T) {
	s := newSandbox(t)
	if out := s.preCompact("s1", filepath.Join(s.project, "nope.jsonl"), s.project, ""); out != "" {
		t.Errorf("output %q", out)
	}
	if !strings.Contains(s.log(), "preserve: read transcript") {
		t.Errorf("not logged:\n%s", s.log())
	}
	if out := s.sessionStart("s1", "compact"); strings.Contains(out, "PRESERVED") {
		t.Errorf("injected without a saved block: %q", out)
	}
}
