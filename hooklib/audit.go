package hooklib

import (
	"context"

	"ccm/hooklib/monitor"
)

// auditText is the context audit's part of a warning.
type auditText struct{ user, model string }

// auditReport names the top context consumers when the fill is past
// CONTEXT_AUDIT_THRESHOLD_PCT.
func (h *Hook) auditReport(ctx context.Context, fill monitor.Fill) auditText {
	return auditText{}
}

// coldSummaries returns the session's cold-task summaries, rendered for
// the preservation block.
func (h *Hook) coldSummaries(session string) []string { return nil }
