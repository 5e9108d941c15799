package purge

import (
	"fmt"
	"io"
	"strings"

	"ccm/transcript/worklog"
)

// gatherSummary reads r (everything before the kept tail) for the summary,
// with the extractor the PreCompact hook uses too.
func gatherSummary(r io.Reader) (*worklog.Facts, error) {
	return worklog.Gather(r)
}

// summaryText renders the summary in the words Claude Code uses for its
// own, so the model reads it as it reads a real compaction summary.
func summaryText(s *worklog.Facts, keptTurns int) string {
	var b strings.Builder
	b.WriteString("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n")
	fmt.Fprintf(&b, "Summary (written by ccm purge --inject-compaction from the transcript itself, without a model; the full earlier history is still in the session file above this point, %d earlier user requests):\n", s.Prompts)
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	section("Open tasks", s.OpenTasks())
	section("Files modified", s.FileList())
	section("Tests run", s.TestLines())
	section("Key decisions", s.Decisions.Items)
	section("Recent commands", s.Commands.Items)
	section("Recent errors", s.Errors.Items)
	section("Most recent user requests (oldest first)", s.Requests.Items)
	fmt.Fprintf(&b, "\nThe last %d turns follow unchanged. Continue the conversation from where it left off.", keptTurns)
	return b.String()
}
