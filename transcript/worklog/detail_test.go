package worklog

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"ccm/internal/testutil"
	"ccm/transcript"
)

// blockFacts are the facts the preservation block and the purge summary
// read.
func blockFacts(f *Facts) []any {
	return []any{f.OpenTasks(), f.FileList(), f.TestLines(), f.Errors.Items, f.Decisions.Items, f.Requests.Items,
		f.Commands.Items, f.Todos, f.Prompts, f.Turns, f.Records}
}

func bySubject(f *Facts, subject string) *Task {
	for _, t := range f.Tasks {
		if t.Subject == subject {
			return t
		}
	}
	return nil
}

func gatherBoth(t *testing.T, data string) (full, lean *Facts) {
	t.Helper()
	full = New()
	if err := full.AddAll(transcript.NewReaderBytes([]byte(data))); err != nil {
		t.Fatal(err)
	}
	lean = New()
	lean.NoTaskDetail = true
	if err := lean.AddAll(transcript.NewReaderBytes([]byte(data))); err != nil {
		t.Fatal(err)
	}
	return full, lean
}

// TestNoTaskDetailKeepsBlockFacts: skipping the task details changes none
// of the facts the block and the summary read, on a session with tasks,
// TodoWrite lists, errors, decisions and mentions of completed tasks, and
// on every corpus transcript; the skipped details are really skipped.
func TestNoTaskDetailKeepsBlockFacts(t *testing.T) {
	lines := []string{
		user("build the parser and the docs"),
		use("m1", "tc1", "TaskCreate", `{"subject":"Write the parser"}`),
		result("tc1", "Task #1 created successfully: Write the parser", false, ""),
		use("m2", "td1", "TodoWrite", `{"todos":[{"content":"Parse numbers","status":"in_progress"},{"content":"Docs","status":"pending"}]}`),
		result("td1", "ok", false, ""),
		use("m3", "e1", "Edit", `{"file_path":"/src/parse.go","old_string":"a","new_string":"b"}`),
		result("e1", "ok", false, ""),
		use("m4", "b1", "Bash", `{"command":"go test ./..."}`),
		result("b1", "--- FAIL: TestParse\nFAIL", true, ""),
		say("m5", "I decided to use a hand-written lexer instead of regexps."),
		use("m6", "tu1", "TaskUpdate", `{"taskId":"1","status":"completed"}`),
		result("tu1", "Updated task #1 status", false, ""),
		say("m7", "Write the parser is done; next the docs."),
	}
	full, lean := gatherBoth(t, strings.Join(lines, "\n")+"\n")
	if !reflect.DeepEqual(blockFacts(full), blockFacts(lean)) {
		t.Errorf("block facts differ:\n full %v\n lean %v", blockFacts(full), blockFacts(lean))
	}
	if td := bySubject(full, "Parse numbers"); td == nil || len(td.Files) == 0 || len(td.Errors) == 0 {
		t.Fatalf("the full pass lost the in-progress item's details: %+v", td)
	}
	if td := bySubject(lean, "Parse numbers"); td == nil || len(td.Files)+len(td.Commands)+len(td.Outcomes)+len(td.Errors) != 0 {
		t.Errorf("NoTaskDetail still noted details: %+v", td)
	}
	if full.Tasks["1"].LastMention != full.Turns || lean.Tasks["1"].LastMention == full.Turns {
		t.Errorf("mentions: full %d, lean %d, turn %d", full.Tasks["1"].LastMention, lean.Tasks["1"].LastMention, full.Turns)
	}

	shared, ok := testutil.LookupShared(t)
	if !ok {
		t.Logf("corpus part not run: no corpus at %s", shared)
		return
	}
	files, _ := filepath.Glob(filepath.Join(shared, "corpus", "claude-config", "projects", "*", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no corpus transcripts found")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		full, lean := gatherBoth(t, string(data))
		if !reflect.DeepEqual(blockFacts(full), blockFacts(lean)) {
			t.Errorf("%s: block facts differ", filepath.Base(p))
		}
	}
}
