package preserve

import (
	"fmt"
	"strings"

	"ccm/transcript/worklog"
)

// Header opens every block; tests and the real-client script look for it.
const Header = "═══ WORKING STATE PRESERVED ACROSS COMPACTION (ccm) ═══"

// section is one part of the block: a title and its items, newest last.
type section struct {
	title string
	items []string
	cap   int // items kept, the newest
	plain bool
}

func last(items []string, n int) []string {
	if len(items) > n {
		return items[len(items)-n:]
	}
	return items
}

// Render renders the block within o.Budget. Sections come in priority
// order; each keeps its newest items, and a section that does not fit
// whole keeps as many of them as fit. Caps per section are
// claude-agentic-framework's (docs/earlier-tools.md).
func Render(f *worklog.Facts, o Options, diff string, st *Stats) string {
	size := o.Size
	if size == nil {
		size = func(s string) int { return len(s) }
	}
	open := f.OpenTasks()
	files := f.FileList()
	tests := f.TestLines()
	st.OpenTasks, st.Files, st.Tests = len(last(open, 10)), len(last(files, 20)), len(last(tests, 5))
	st.Decisions, st.Errors, st.Cold, st.Git = len(last(f.Decisions.Items, 15)), len(last(f.Errors.Items, 8)), len(o.Cold), diff != ""
	instr := readInstructions(o.InstructionFiles)
	if len(open)+len(files)+len(tests)+len(f.Decisions.Items)+len(f.Errors.Items)+len(o.Cold)+len(instr) == 0 &&
		diff == "" && strings.TrimSpace(o.Focus) == "" {
		return ""
	}
	var secs []section
	if strings.TrimSpace(o.Focus) != "" {
		secs = append(secs, section{title: "FOCUS REQUESTED WITH /compact", items: []string{worklog.Cut(o.Focus, 1000)}, cap: 1, plain: true})
	}
	secs = append(secs,
		section{title: "ACTIVE / IN-PROGRESS TASKS", items: open, cap: 10},
		section{title: "FILES MODIFIED SINCE THE LAST COMPACTION", items: files, cap: 20},
		section{title: "TEST COMMANDS RUN (last result)", items: tests, cap: 5},
		section{title: "RECENT ERRORS", items: f.Errors.Items, cap: 8},
		section{title: "KEY DECISIONS MADE", items: f.Decisions.Items, cap: 15},
	)
	if diff != "" {
		secs = append(secs, section{title: "GIT DIFF STAT", items: []string{diff}, cap: 1, plain: true})
	}
	secs = append(secs, section{title: "PRE-COMPUTED TASK SUMMARIES (use verbatim)", items: o.Cold, cap: 20, plain: true})
	if len(instr) > 0 {
		secs = append(secs, section{title: "THE USER'S COMPACT INSTRUCTIONS", items: instr, cap: 2, plain: true})
	}
	if len(f.Requests.Items) > 0 {
		secs = append(secs, section{title: "MOST RECENT USER REQUESTS (oldest first)", items: f.Requests.Items, cap: 3})
	}

	var b strings.Builder
	trigger := o.Trigger
	if trigger == "" {
		trigger = "auto"
	}
	fmt.Fprintf(&b, "%s\nCompaction: %s. ccm saved this from the transcript just before the conversation was summarised. "+
		"Treat it as the state of the work at that point: continue in-progress tasks, keep the decisions, and resolve the errors listed.\n", Header, trigger)
	const tail = "\n═══ END OF PRESERVED STATE ═══"
	budget := o.Budget - size(tail)
	if budget <= 0 {
		budget = 1 << 30
	}
	for _, s := range secs {
		items := last(s.items, s.cap)
		if len(items) == 0 {
			continue
		}
		head := "\n" + s.title + ":\n"
		used := size(b.String())
		if used+size(head)+40 > budget {
			break
		}
		var part strings.Builder
		part.WriteString(head)
		// Newest items matter most: if not all fit, drop from the oldest.
		lines := make([]string, len(items))
		for i, it := range items {
			if s.plain {
				lines[i] = indent(it) + "\n"
			} else {
				lines[i] = "  • " + it + "\n"
			}
		}
		k := 0
		for k < len(lines) && used+size(head)+size(strings.Join(lines[k:], "")) > budget {
			k++
		}
		if k == len(lines) {
			// Not even the newest fits whole: cut it.
			room := budget - used - size(head) - 20
			if room < 40 {
				break
			}
			lines = []string{cutTo(lines[len(lines)-1], room, size) + "\n"}
			k = 0
		}
		part.WriteString(strings.Join(lines[k:], ""))
		b.WriteString(part.String())
	}
	b.WriteString(tail)
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// cutTo shortens s until size(s) <= n, adding "...".
func cutTo(s string, n int, size func(string) int) string {
	s = strings.TrimRight(s, "\n")
	r := []rune(s)
	lo, hi := 0, len(r)
	for lo < hi { // the longest prefix that fits
		mid := (lo + hi + 1) / 2
		if size(string(r[:mid])+"...") <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(r[:lo]) + "..."
}
