package purge

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"ccm/transcript"
)

// ring keeps the last n strings added, without duplicates next to each other.
type ring struct {
	n     int
	items []string
}

func (r *ring) add(s string) {
	s = strings.TrimSpace(s)
	if s == "" || len(r.items) > 0 && r.items[len(r.items)-1] == s {
		return
	}
	r.items = append(r.items, s)
	if len(r.items) > r.n {
		r.items = r.items[len(r.items)-r.n:]
	}
}

// summaryFacts is what a compaction summary is built from, gathered in one
// streaming pass with bounded memory.
type summaryFacts struct {
	requests, commands, tests, errors ring
	files                             map[string]int // path → last record index that modified it
	todos                             string         // raw todos of the last TodoWrite
	tasks                             map[string]string
	taskOrder                         []string
	turns                             int
}

// testCmd and taskIDRe are compiled on first use, not in every process
// that links purge (every `ccm hook`).
var testCmd = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s;&|(])(go test|pytest|npm (run )?test|yarn test|pnpm test|cargo test|make (test|check)|mvn test|gradle test|jest|vitest|rspec|tox|ctest|phpunit|mix test|dotnet test)\b`)
})

var taskIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`#(\d+)`) })

// gatherSummary reads the first limit bytes of r (everything before the
// kept tail) for the summary.
func gatherSummary(r io.Reader) (*summaryFacts, error) {
	s := &summaryFacts{requests: ring{n: 6}, commands: ring{n: 15}, tests: ring{n: 8}, errors: ring{n: 6},
		files: map[string]int{}, tasks: map[string]string{}}
	rd := transcript.NewReader(r)
	tools := map[string]string{} // tool_use id → name, for errors and task ids
	n := 0
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		if l.Kind != transcript.Object {
			continue
		}
		n++
		rec := transcript.NewRecord(l.Body())
		if rec.IsSidechain() {
			continue
		}
		switch rec.Type() {
		case "user":
			text, onlyResults := userText(rec)
			if !onlyResults && !rec.IsMeta() && !rec.IsCompactSummary() && isPromptText(text) {
				s.requests.add(cut(text, 300))
				s.turns++
			}
			rec.Content().ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").Str != "tool_result" {
					return true
				}
				name := tools[b.Get("tool_use_id").Str]
				if b.Get("is_error").Bool() {
					s.errors.add(name + ": " + cut(firstLine(resultText(b)), 200))
				}
				if name == "TaskCreate" {
					if m := taskIDRe().FindStringSubmatch(resultText(b)); m != nil {
						s.noteTask(strings.Clone(m[1]), cut(afterColon(resultText(b)), 200))
					}
				}
				return true
			})
		case "assistant":
			rec.Content().ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").Str != "tool_use" {
					return true
				}
				name, in := b.Get("name").Str, b.Get("input")
				tools[strings.Clone(b.Get("id").Str)] = strings.Clone(name)
				switch name {
				case "Write", "Edit", "MultiEdit", "NotebookEdit":
					p := in.Get("file_path").Str
					if p == "" {
						p = in.Get("notebook_path").Str
					}
					if p != "" {
						s.files[strings.Clone(p)] = n
					}
				case "Bash":
					c := in.Get("command").Str
					s.commands.add(cut(c, 160))
					if testCmd().MatchString(c) {
						s.tests.add(cut(c, 160))
					}
				case "TodoWrite":
					s.todos = strings.Clone(in.Get("todos").Raw)
				case "TaskUpdate":
					if id := in.Get("taskId").String(); id != "" {
						if st := in.Get("status").Str; st != "" {
							s.noteTaskStatus(strings.Clone(id), strings.Clone(st))
						}
					}
				}
				return true
			})
		}
	}
}

func (s *summaryFacts) noteTask(id, subject string) {
	if _, ok := s.tasks[id]; !ok {
		s.taskOrder = append(s.taskOrder, id)
	}
	s.tasks[id] = "pending|" + subject
}

func (s *summaryFacts) noteTaskStatus(id, status string) {
	cur, ok := s.tasks[id]
	if !ok {
		s.taskOrder = append(s.taskOrder, id)
	}
	_, subject, _ := strings.Cut(cur, "|")
	s.tasks[id] = status + "|" + subject
}

func afterColon(s string) string {
	if _, after, ok := strings.Cut(s, ":"); ok {
		return after
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// resultText is a tool_result's text: its string content or text blocks.
func resultText(b gjson.Result) string {
	c := b.Get("content")
	if c.Type == gjson.String {
		return c.Str
	}
	var parts []string
	c.ForEach(func(_, ib gjson.Result) bool {
		if ib.Get("type").Str == "text" {
			parts = append(parts, ib.Get("text").Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// text renders the summary in the words Claude Code uses for its own, so
// the model reads it as it reads a real compaction summary.
func (s *summaryFacts) text(keptTurns int) string {
	var b strings.Builder
	b.WriteString("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n")
	fmt.Fprintf(&b, "Summary (written by ccm purge --inject-compaction from the transcript itself, without a model; the full earlier history is still in the session file above this point, %d earlier user requests):\n", s.turns)
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	section("Open tasks", s.openTasks())
	section("Files modified", s.fileList())
	section("Tests run", s.tests.items)
	section("Recent commands", s.commands.items)
	section("Recent errors", s.errors.items)
	section("Most recent user requests (oldest first)", s.requests.items)
	fmt.Fprintf(&b, "\nThe last %d turns follow unchanged. Continue the conversation from where it left off.", keptTurns)
	return b.String()
}

func (s *summaryFacts) openTasks() []string {
	var out []string
	gjson.Parse(s.todos).ForEach(func(_, t gjson.Result) bool {
		if st := t.Get("status").Str; st != "completed" {
			out = append(out, fmt.Sprintf("[%s] %s", st, cut(t.Get("content").Str, 200)))
		}
		return true
	})
	for _, id := range s.taskOrder {
		st, subject, _ := strings.Cut(s.tasks[id], "|")
		if st != "completed" && st != "deleted" {
			out = append(out, fmt.Sprintf("task #%s [%s] %s", id, st, cut(subject, 200)))
		}
	}
	return out
}

func (s *summaryFacts) fileList() []string {
	type fileAt struct {
		path string
		at   int
	}
	var fs []fileAt
	for p, at := range s.files {
		fs = append(fs, fileAt{p, at})
	}
	// Most recently modified last, at most 30.
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].at != fs[j].at {
			return fs[i].at < fs[j].at
		}
		return fs[i].path < fs[j].path
	})
	if len(fs) > 30 {
		fs = fs[len(fs)-30:]
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}
