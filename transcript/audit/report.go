package audit

import (
	"fmt"
	"strings"

	"ccm/internal/ui"
)

// Report renders the top consumers for the user: one line each with bytes,
// estimated tokens and share of all tool output.
func (a *Audit) Report(n int) string {
	top := a.Top(n)
	if len(top) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context audit (tool output since the last compaction: %s, ~%s tokens):", ui.Bytes(a.Total), ui.Count(a.Total/BytesPerToken))
	for _, c := range top {
		pct := 0.0
		if a.Total > 0 {
			pct = float64(c.Bytes) * 100 / float64(a.Total)
		}
		fmt.Fprintf(&b, "\n  %s: %s, ~%s tokens (%.0f%%, %d call%s)", c.Key, ui.Bytes(c.Bytes), ui.Count(c.Tokens()), pct, c.Count, plural(c.Count))
	}
	return b.String()
}

// Suggestion is the targeted advice: what /compact should drop (the top
// consumers' raw outputs) and what ccm purge --current would save.
func (a *Audit) Suggestion(n int) string {
	top := a.Top(n)
	var drop []string
	for _, c := range top {
		if a.Total > 0 && c.Bytes*10 >= a.Total { // at least a tenth of the output
			drop = append(drop, c.Key)
		}
	}
	var parts []string
	if len(drop) > 0 {
		parts = append(parts, fmt.Sprintf("/compact drop the raw outputs of %s; keep the open tasks, decisions and files modified", strings.Join(drop, ", ")))
	}
	if a.PurgeableCount > 0 {
		parts = append(parts, fmt.Sprintf("ccm purge --current (or /purge) would save at least %s (~%s tokens) by moving %d tool output%s over %s from before the last %d prompts to the store",
			ui.Bytes(a.Purgeable), ui.Count(a.Purgeable/BytesPerToken), a.PurgeableCount, plural(a.PurgeableCount), ui.Bytes(PurgeThreshold), RecentPrompts))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Suggestion: " + strings.Join(parts, ". Or: ") + "."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
