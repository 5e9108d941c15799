package hooklib

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ccm/hooklib/coldtask"
)

func (s *sandbox) postTool(session, path, tool string) string {
	s.t.Helper()
	return s.run(PostToolUse, fmt.Sprintf(`{"session_id":%q,"hook_event_name":"PostToolUse","transcript_path":%q,"cwd":%q,"tool_name":%q,"tool_input":{"command":"true"},"tool_response":{"stdout":"","stderr":"","interrupted":false,"isImage":false}}`, session, path, s.project, tool))
}

// coldWork is a session whose task #1 (created, then named by id in
// TaskUpdate) and TodoWrite item "Document the API" (from one of two
// parallel lists) were completed early, task #3 was completed early too but
// is named again later, and task #2 stays open; then filler turns whose
// usage reports fill tokens.
func coldWork(x *tx, filler int, fill int64) {
	asst := func(id, content string) string {
		return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":%q,"role":"assistant","content":[%s]}}`, id, content)
	}
	use := func(id, name, input string) string {
		return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input)
	}
	res := func(id, text string) string {
		return fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}}`, id, text)
	}
	x.add(`{"type":"user","isSidechain":false,"message":{"role":"user","content":"build the parser"}}`,
		asst("m1", use("c1", "TaskCreate", `{"subject":"Write the parser"}`)+","+use("c2", "TaskCreate", `{"subject":"Update the docs"}`)+","+use("c3", "TaskCreate", `{"subject":"Fix the flaky test"}`)),
		res("c1", "Task #1 created successfully: Write the parser"), res("c2", "Task #2 created successfully: Update the docs"), res("c3", "Task #3 created successfully: Fix the flaky test"),
		asst("m2", use("u1", "TaskUpdate", `{"taskId":"1","status":"in_progress"}`)+","+
			use("t1", "TodoWrite", `{"todos":[{"content":"Document the API","status":"in_progress"}]}`)+","+
			use("t2", "TodoWrite", `{"todos":[{"content":"Tidy the imports","status":"pending"}]}`)),
		res("u1", "Updated task #1 status"), res("t1", "ok"), res("t2", "ok"),
		asst("m3", use("e1", "Edit", `{"file_path":"/src/parse.go","old_string":"a","new_string":"b"}`)),
		res("e1", "ok"),
		asst("m4", use("b1", "Bash", `{"command":"go test ./parse/"}`)),
		res("b1", "--- FAIL: TestLex\nExit code 1"),
		asst("m5", `{"type":"text","text":"Parser done: decided to use a table-driven lexer."}`),
		asst("m6", use("u2", "TaskUpdate", `{"taskId":"1","status":"completed"}`)+","+use("u3", "TaskUpdate", `{"taskId":"3","status":"completed"}`)+","+
			use("t3", "TodoWrite", `{"todos":[{"content":"Document the API","status":"completed"},{"content":"Tidy the imports","status":"pending"}]}`)),
		res("u2", "Updated task #1 status"), res("u3", "Updated task #3 status"), res("t3", "ok"))
	for i := range filler {
		text := "working"
		if i == filler-3 {
			text = "Re-checked: Fix the flaky test still holds."
		}
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":"f%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"usage":{"input_tokens":10,"cache_read_input_tokens":%d}}}`, i, text, fill-10))
	}
}

func readSummary(t *testing.T, dir, session, task string) (coldtask.Summary, bool) {
	t.Helper()
	data, err := os.ReadFile(coldtask.Path(dir, session, task))
	if os.IsNotExist(err) {
		return coldtask.Summary{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var s coldtask.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, data)
	}
	return s, true
}

// TestColdTasks: at 75 % the first check writes, in
// claude-agentic-framework's shape, a summary of task #1 (completed by a
// TaskUpdate naming its id) and of the TodoWrite item completed in a later
// list, and none of the open task nor of the task named in a recent turn; the
// preservation block carries them.
func TestColdTasks(t *testing.T) {
	s := newSandbox(t)
	x := newTx(t, s)
	coldWork(x, 25, 150_000)
	dir := coldtask.Dir(s.home())
	if out := s.postTool("s1", x.path, "Bash"); out != "" {
		t.Errorf("the check answered: %q", out)
	}
	sum, ok := readSummary(t, dir, "s1", "1")
	if !ok {
		t.Fatalf("no summary of task #1; log:\n%s", s.log())
	}
	if sum.Subject != "Write the parser" || sum.SessionID != "s1" || sum.StartTurn != 1 || sum.EndTurn != 6 ||
		strings.Join(sum.FilesModified, ",") != "/src/parse.go" || strings.Join(sum.CommandsRun, ",") != "go test ./parse/" ||
		!strings.Contains(strings.Join(sum.KeyOutcomes, "|"), "decided to use a table-driven lexer") ||
		!strings.Contains(strings.Join(sum.ErrorsResolved, "|"), "--- FAIL: TestLex") || sum.CompressedAt != "2026-08-01T12:00:00" {
		t.Errorf("summary of task #1: %+v", sum)
	}
	raw, _ := os.ReadFile(coldtask.Path(dir, "s1", "1"))
	for _, key := range []string{"session_id", "task_id", "subject", "start_turn", "end_turn", "compressed_at", "files_modified", "commands_run", "key_outcomes", "errors_resolved"} {
		if !strings.Contains(string(raw), `"`+key+`"`) {
			t.Errorf("summary lacks the framework's key %q", key)
		}
	}
	list, _, err := coldtask.List(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, x := range list {
		subjects = append(subjects, x.Subject)
	}
	if got := strings.Join(subjects, "|"); got != "Document the API|Write the parser" && got != "Write the parser|Document the API" {
		t.Errorf("summaries: %q (the open task, the pending todo and the recently named task must not be)", got)
	}
	block := contextOf(t, func() string {
		s.preCompact("s1", x.path, s.project, "")
		return s.sessionStart("s1", "compact")
	}())
	if !strings.Contains(block, "PRE-COMPUTED TASK SUMMARIES") || !strings.Contains(block, "▸ Task: Write the parser") {
		t.Errorf("the preservation block lacks the summaries:\n%s", block)
	}
}

// TestColdTasksOnceAndOnlyWhenDue: a summary is written once; the check
// runs again only CHECK_FREQUENCY turns later; nothing happens below
// CONTEXT_THRESHOLD or after tools that finish no work.
func TestColdTasksOnceAndOnlyWhenDue(t *testing.T) {
	s := newSandbox(t)
	low := newTx(t, s)
	low.path = filepath.Join(s.project, "low.jsonl")
	coldWork(low, 25, 100_000) // 50 %
	s.postTool("low", low.path, "Bash")
	if list, _, _ := coldtask.List(coldtask.Dir(s.home()), "low"); len(list) != 0 {
		t.Errorf("summaries below CONTEXT_THRESHOLD: %v", list)
	}

	x := newTx(t, s)
	coldWork(x, 25, 150_000)
	s.postTool("s1", x.path, "Read") // not a tool that finishes work
	if _, ok := readSummary(t, coldtask.Dir(s.home()), "s1", "1"); ok {
		t.Fatal("the check ran after Read")
	}
	s.postTool("s1", x.path, "Edit")
	p := coldtask.Path(coldtask.Dir(s.home()), "s1", "1")
	if err := os.WriteFile(p, []byte(`{"session_id":"s1","task_id":"1","subject":"kept"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":"g%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"more"}],"usage":{"input_tokens":10,"cache_read_input_tokens":150000}}}`, i))
		s.postTool("s1", x.path, "Bash")
	}
	if n := strings.Count(s.log(), "cold tasks: checked"); n != 2 {
		t.Errorf("%d checks over 12 turns after the first, want 2 (the first and one 10 turns later):\n%s", n, s.log())
	}
	if sum, _ := readSummary(t, coldtask.Dir(s.home()), "s1", "1"); sum.Subject != "kept" {
		t.Errorf("a summary was written twice: %+v", sum)
	}
	s.env["COLD_TASKS_ENABLED"] = "false"
	os.Remove(p)
	for i := range 11 {
		x.add(fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":"h%d","role":"assistant","content":[{"type":"text","text":"more"}],"usage":{"input_tokens":10,"cache_read_input_tokens":150000}}}`, i))
	}
	s.postTool("s1", x.path, "Bash")
	if _, ok := readSummary(t, coldtask.Dir(s.home()), "s1", "1"); ok {
		t.Error("COLD_TASKS_ENABLED=false still wrote")
	}
}
