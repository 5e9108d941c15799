package worklog

import (
	"fmt"
	"strings"
	"testing"
)

func user(text string) string {
	return fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":%q}}`, text)
}

func use(msg, id, name, input string) string {
	return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":%q,"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":%s}]}}`, msg, id, name, input)
}

func say(msg, text string) string {
	return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}]}}`, msg, text)
}

func result(id, text string, isErr bool, extra string) string {
	return fmt.Sprintf(`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q,"is_error":%v}]}%s}`, id, text, isErr, extra)
}

func gather(t *testing.T, lines ...string) *Facts {
	t.Helper()
	f, err := Gather(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTasksByID: TaskCreate's plain-text result gives the id TaskUpdate
// names (claude-agentic-framework keyed tasks by tool_use id and never matched);
// toolUseResult.task.id works as well; a completed task is not open.
func TestTasksByID(t *testing.T) {
	f := gather(t,
		user("build the parser and the docs"),
		use("m1", "tc1", "TaskCreate", `{"subject":"Write the parser","description":"x"}`),
		result("tc1", "Task #1 created successfully: Write the parser", false, ""),
		use("m2", "tc2", "TaskCreate", `{"subject":"Update the docs"}`),
		result("tc2", "created", false, `,"toolUseResult":{"task":{"id":"7","subject":"Update the docs"}}`),
		use("m3", "tu1", "TaskUpdate", `{"taskId":"1","status":"in_progress"}`),
		result("tu1", "Updated task #1 status", false, ""),
		use("m4", "e1", "Edit", `{"file_path":"/src/parse.go","old_string":"a","new_string":"b"}`),
		result("e1", "ok", false, ""),
		use("m5", "tu2", "TaskUpdate", `{"taskId":"1","status":"completed"}`),
		result("tu2", "Updated task #1 status", false, ""),
	)
	if len(f.TaskOrder) != 2 || f.Tasks["1"] == nil || f.Tasks["7"] == nil {
		t.Fatalf("tasks %v", f.TaskOrder)
	}
	if t1 := f.Tasks["1"]; t1.Status != "completed" || t1.Subject != "Write the parser" || t1.EndTurn != 5 || len(t1.Files) != 1 {
		t.Errorf("task 1: %+v", *t1)
	}
	open := strings.Join(f.OpenTasks(), "\n")
	if !strings.Contains(open, "task #7 [pending] Update the docs") || strings.Contains(open, "parser") {
		t.Errorf("open tasks:\n%s", open)
	}
}

// TestParallelTodoWrite: two TodoWrite calls of one message merge; the next
// message's list replaces them.
func TestParallelTodoWrite(t *testing.T) {
	f := gather(t,
		use("m1", "t1", "TodoWrite", `{"todos":[{"content":"A","status":"in_progress"},{"content":"B","status":"pending"}]}`),
		use("m1", "t2", "TodoWrite", `{"todos":[{"content":"C","status":"pending"},{"content":"B","status":"completed"}]}`),
	)
	got := strings.Join(f.OpenTasks(), "|")
	if got != "[in_progress] A|[pending] C" {
		t.Errorf("merged parallel lists: %q", got)
	}
	f = gather(t,
		use("m1", "t1", "TodoWrite", `{"todos":[{"content":"A","status":"pending"}]}`),
		use("m2", "t2", "TodoWrite", `{"todos":[{"content":"D","status":"pending"}]}`),
	)
	if got := strings.Join(f.OpenTasks(), "|"); got != "[pending] D" {
		t.Errorf("a later list did not replace: %q", got)
	}
}

// TestTestsErrorsDecisions: a test command keeps its last result; errors
// come from flagged results and failing Bash output; decisions from the
// assistant's statements; sidechains and markers are ignored.
func TestTestsErrorsDecisions(t *testing.T) {
	f := gather(t,
		user("<command-name>/compact</command-name>"),
		user("fix the tests"),
		use("m1", "b1", "Bash", `{"command":"go test ./..."}`),
		result("b1", "--- FAIL: TestX\nFAIL\tpkg 0.1s\nExit code 1", false, ""),
		say("m2", "The root cause is a nil map; I decided to initialise it in New."),
		say("m3", "Done.\n\n- Going with sync.Map instead of a mutex\n- unrelated line"),
		use("m4", "r1", "Read", `{"file_path":"/nope"}`),
		result("r1", "File does not exist.", true, ""),
		use("m5", "b2", "Bash", `{"command":"go test ./..."}`),
		result("b2", "ok  \tpkg\t0.2s", false, ""),
		`{"type":"assistant","isSidechain":true,"message":{"id":"s","content":[{"type":"tool_use","id":"x","name":"Write","input":{"file_path":"/side"}}]}}`,
	)
	if got := strings.Join(f.TestLines(), "|"); got != "go test ./... → passed" {
		t.Errorf("tests: %q", got)
	}
	errs := strings.Join(f.Errors.Items, "|")
	if !strings.Contains(errs, "`go test ./...` → --- FAIL: TestX") || !strings.Contains(errs, "Read: File does not exist.") {
		t.Errorf("errors: %q", errs)
	}
	dec := strings.Join(f.Decisions.Items, "|")
	if !strings.Contains(dec, "root cause is a nil map") || !strings.Contains(dec, "Going with sync.Map") || strings.Contains(dec, "unrelated") {
		t.Errorf("decisions: %q", dec)
	}
	if f.Prompts != 1 || len(f.Files) != 0 {
		t.Errorf("prompts %d, files %v", f.Prompts, f.Files)
	}
}
