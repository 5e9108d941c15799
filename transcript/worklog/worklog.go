package worklog

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"ccm/transcript"
)

// Caps of the lists kept (the preservation block's, claude-agentic-framework's:
// docs/earlier-tools.md).
const (
	MaxRequests  = 6
	MaxCommands  = 15
	MaxTests     = 8
	MaxErrors    = 8
	MaxDecisions = 15
	MaxFiles     = 30
)

// Test is a test command and its last result.
type Test struct {
	Command string
	// Result is "passed", "failed: <first line>", or "" while unknown.
	Result string
}

// Todo is one TodoWrite item.
type Todo struct {
	Content, Status string
}

// Task is one TaskCreate task with what happened while it was open.
type Task struct {
	ID, Subject, Status string
	// Todo marks an item of a TodoWrite list (its ID is "todo-" and a hash
	// of its text: TodoWrite items have no id of their own).
	Todo bool
	// StartTurn and EndTurn are the assistant turns of its creation and
	// completion (0 while open); LastMention the last turn that named it
	// since it was completed (or its status last changed): the mentions of
	// an open task are not followed, as nothing reads them.
	StartTurn, EndTurn, LastMention   int
	Files, Commands, Outcomes, Errors []string
}

// Facts is what a pass over a transcript found.
type Facts struct {
	Requests, Commands, Errors, Decisions Ring
	Tests                                 []Test
	// Files maps a modified path to the record number of its last change.
	Files map[string]int
	// Todos is the current TodoWrite list: the last assistant message's
	// calls, merged when it made several in parallel.
	Todos []Todo
	Tasks map[string]*Task
	// TaskOrder lists task ids in creation order; TodoOrder the TodoWrite
	// items' ids in order of first appearance.
	TaskOrder, TodoOrder []string
	// Prompts counts the user's requests; Turns the assistant's messages.
	Prompts, Turns int
	// Records counts the records read.
	Records int
	// NoTaskDetail skips what only cold-task summaries read (ColdTasks,
	// coldtask.FromTask): the mentions of completed tasks and the files,
	// commands, outcomes and errors of each open task. The preservation
	// block and the purge summary read none of it; the mentions alone
	// (a lowered copy of every text searched for every subject) were a
	// tenth of the PreCompact hook's extraction.
	NoTaskDetail bool

	todoMsg    string
	tools      map[string]pendingTool // tool_use id → what its result completes
	lastMsg    string
	lowSubject map[string]string
}

type pendingTool struct {
	name, command string
	test          int // index in Tests, -1 for none
	subject       string
}

// taskIDRe is compiled on first use, not in every process that links
// this package (every `ccm hook`).
var taskIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`#(\d+)`) })

// New returns empty Facts to Add records to.
func New() *Facts {
	return &Facts{Requests: Ring{N: MaxRequests}, Commands: Ring{N: MaxCommands}, Errors: Ring{N: MaxErrors},
		Decisions: Ring{N: MaxDecisions}, Files: map[string]int{}, Tasks: map[string]*Task{},
		tools: map[string]pendingTool{}, lowSubject: map[string]string{}}
}

// Gather reads every line of r into new Facts. Torn and invalid lines,
// sidechain records and API error records are skipped.
func Gather(r io.Reader) (*Facts, error) {
	f := New()
	return f, f.AddAll(transcript.NewReader(r))
}

// AddAll adds every record of rd (transcript.NewReaderBytes for a region
// held in memory), skipping what Gather skips.
func (f *Facts) AddAll(rd *transcript.Reader) error {
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Kind == transcript.Object {
			f.Add(transcript.NewRecord(l.Body()))
		}
	}
}

// Add takes one record.
func (f *Facts) Add(rec transcript.Record) {
	f.Records++
	// One walk: an assistant record keeps "type" after "message", and
	// finding each on its own crossed the message twice. A user record
	// keeps "message" last: left open, it is crossed once, by Blocks.
	var top [3]gjson.Result
	rec.MembersOpen(TopKeys, top[:])
	if gjson.Parse(top[0].Raw).Bool() {
		return
	}
	switch gjson.Parse(top[1].Raw).Str {
	case "user":
		f.addUser(rec, Content(top[2]))
	case "assistant":
		// A key looked up that the record lacks costs a scan of the whole
		// line in gjson; a byte search first is several times cheaper.
		if hasRaw(rec.Raw(), `"isApiErrorMessage"`, 3) && rec.Get("isApiErrorMessage").Bool() {
			return
		}
		f.addAssistant(msg(top[2]), Content(top[2]))
	}
}

// TopKeys are the top-level members a pass over records reads first:
// with Record.Members they are found in one walk.
var TopKeys = []string{"isSidechain", "type", "message"}

// Content is the content of message (a record's "message") for Blocks or
// ContentText, without crossing the blocks to find their end: Blocks
// crosses them.
func Content(message gjson.Result) gjson.Result {
	if message.Type != gjson.JSON {
		return gjson.Result{}
	}
	return transcript.LookupOpen(message.Raw, "content")
}

// msg is the message's id.
func msg(message gjson.Result) string {
	if message.Type != gjson.JSON {
		return ""
	}
	return strings.Clone(transcript.Field(message.Raw, "id").Str)
}

func (f *Facts) addUser(rec transcript.Record, c gjson.Result) {
	text, onlyResults := ContentText(c)
	if !onlyResults && !rec.Field("isMeta").Bool() && !rec.IsCompactSummary() && IsPromptText(text) && !isMarker(text) {
		f.Requests.Add(Cut(text, 300))
		f.Prompts++
		f.mention(text)
	}
	Blocks(c, func(b gjson.Result) bool {
		if transcript.Field(b.Raw, "type").Str != "tool_result" {
			return true
		}
		id := transcript.Field(b.Raw, "tool_use_id").Str
		p, ok := f.tools[id]
		if !ok {
			return true
		}
		delete(f.tools, id)
		failed := hasRawString(b.Raw, `"is_error"`, 3) && transcript.Field(b.Raw, "is_error").Bool()
		// Decoding a result's text is most of the pass's cost: only the
		// results read below need it (a Read's or a Grep's is not).
		var text string
		if failed || p.name == "TaskCreate" {
			text = ResultText(b)
		}
		if !failed && p.name == "Bash" {
			failed = hasRaw(rec.Raw(), `"interrupted":true`, 13) && rec.Field("toolUseResult.interrupted").Bool()
			if !failed {
				// A command that succeeded needs no text: most are told
				// from the raw output without decoding it.
				c := transcript.Lookup(b.Raw, "content")
				if ok, sure := rawBashFailed(c); sure {
					failed = ok
				} else {
					failed = bashFailed(ResultText(b))
				}
			}
			if failed {
				text = ResultText(b)
			}
		}
		if failed {
			line := FirstLine(text)
			if p.name == "Bash" {
				if el := errorLine(text); el != "" {
					line = el
				}
				f.Errors.Add("`" + Cut(p.command, 80) + "` → " + Cut(line, 150))
			} else {
				f.Errors.Add(p.name + ": " + Cut(line, 150))
			}
			f.taskNote(func(t *Task) { t.Errors = addCapped(t.Errors, Cut(p.name+": "+line, 200), 4) })
		}
		if p.test >= 0 && p.test < len(f.Tests) {
			if failed {
				f.Tests[p.test].Result = "failed: " + Cut(FirstLine(text), 120)
			} else {
				f.Tests[p.test].Result = "passed"
			}
		}
		if p.name == "TaskCreate" {
			tid := rec.Field("toolUseResult.task.id").String()
			if tid == "" {
				if m := taskIDRe().FindStringSubmatch(text); m != nil {
					tid = m[1]
				}
			}
			if tid != "" && !failed {
				subject := p.subject
				if subject == "" {
					_, after, _ := strings.Cut(text, ":")
					subject = Cut(after, 200)
				}
				f.createTask(strings.Clone(tid), subject)
			}
		}
		return true
	})
}

func (f *Facts) addAssistant(msg string, c gjson.Result) {
	if msg == "" || msg != f.lastMsg {
		f.Turns++
		f.lastMsg = msg
	}
	Blocks(c, func(b gjson.Result) bool {
		switch transcript.Field(b.Raw, "type").Str {
		case "text":
			text := transcript.Field(b.Raw, "text").Str
			f.mention(text)
			for _, d := range decisions(text) {
				f.Decisions.Add(d)
			}
			if !f.NoTaskDetail && len(text) < 300 && !strings.Contains(text, "\n\n") && strings.TrimSpace(text) != "" {
				out := Cut(text, 250)
				f.taskNote(func(t *Task) { t.Outcomes = addCapped(t.Outcomes, out, 6) })
			}
		case "tool_use":
			f.addToolUse(b, msg)
		}
		return true
	})
}

func (f *Facts) addToolUse(b gjson.Result, msg string) {
	name, in := transcript.Field(b.Raw, "name").Str, transcript.Lookup(b.Raw, "input")
	p := pendingTool{name: strings.Clone(name), test: -1}
	// A TodoWrite list names every item, finished or not, each time it is
	// written: that is no mention of the work. TaskUpdate names its task by
	// id, which counts below.
	if len(in.Raw) < 64<<10 && name != "TodoWrite" && name != "TaskUpdate" {
		f.mention(in.Raw)
	}
	switch name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		path := transcript.Field(in.Raw, "file_path").Str
		if path == "" {
			path = transcript.Field(in.Raw, "notebook_path").Str
		}
		if path != "" {
			path = strings.Clone(path)
			f.Files[path] = f.Records
			f.taskNote(func(t *Task) { t.Files = addCapped(t.Files, path, 15) })
		}
	case "Bash":
		c := transcript.Field(in.Raw, "command").Str
		p.command = Cut(c, 160)
		f.Commands.Add(p.command)
		f.taskNote(func(t *Task) { t.Commands = addCapped(t.Commands, Cut(c, 100), 8) })
		if isTestCommand(c) {
			p.test = f.addTest(p.command)
		}
	case "TodoWrite":
		var list []Todo
		in.Get("todos").ForEach(func(_, t gjson.Result) bool {
			list = append(list, Todo{Content: Cut(t.Get("content").Str, 200), Status: strings.Clone(t.Get("status").Str)})
			return true
		})
		if msg != "" && msg == f.todoMsg {
			f.Todos = mergeTodos(f.Todos, list) // parallel calls of one message
		} else {
			f.Todos = list
		}
		f.todoMsg = msg
		for _, t := range list {
			f.trackTodo(t)
		}
	case "TaskCreate":
		p.subject = Cut(in.Get("subject").Str, 200)
	case "TaskUpdate":
		id := in.Get("taskId").String()
		if t := f.Tasks[id]; t != nil {
			t.LastMention = f.Turns
			if st := in.Get("status").Str; st != "" {
				t.Status = strings.Clone(st)
				if st == "completed" {
					t.EndTurn = f.Turns
				}
			}
			if s := in.Get("subject").Str; s != "" {
				t.Subject = Cut(s, 200)
				f.lowSubject[t.ID] = strings.ToLower(t.Subject)
			}
		}
	}
	if len(f.tools) > 4096 {
		clear(f.tools) // results that never came; a bound, not a loss that matters
	}
	f.tools[strings.Clone(transcript.Field(b.Raw, "id").Str)] = p
}

// mention records that text names tasks by their subject.
func (f *Facts) mention(text string) {
	if f.NoTaskDetail || len(f.lowSubject) == 0 || text == "" {
		return
	}
	// Subjects are short and named near the start of what mentions them;
	// lowering all of a large tool input for each text was most of the
	// pass's time.
	if len(text) > 8<<10 {
		text = text[:8<<10]
	}
	// Only a completed task's mentions count (ColdTasks): completing a
	// task sets LastMention, so what named it before is overwritten
	// anyway. One already named in this turn needs no search either, and
	// the text is lowered only when some subject is searched.
	var low string
	lowered := false
	for id, s := range f.lowSubject {
		t := f.Tasks[id]
		if s == "" || t.Status != "completed" || t.LastMention == f.Turns {
			continue
		}
		if !lowered {
			low, lowered = strings.ToLower(text), true
		}
		if strings.Contains(low, s) {
			t.LastMention = f.Turns
		}
	}
}

// hasRaw is bytes.Contains(raw, pat), searching first for pat[from:],
// which starts with a byte rarer than the quote pat starts with: a search
// for a pattern that starts with a quote stops at every key and string of
// a line.
func hasRaw(raw []byte, pat string, from int) bool {
	return bytes.Contains(raw, []byte(pat[from:])) && bytes.Contains(raw, []byte(pat))
}

// hasRawString is hasRaw on a string.
func hasRawString(raw, pat string, from int) bool {
	return strings.Contains(raw, pat[from:]) && strings.Contains(raw, pat)
}
