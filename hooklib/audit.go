package hooklib

import (
	"ccm/hooklib/monitor"
	"ccm/internal/fsutil"
	"ccm/transcript/audit"
)

// auditText is the context audit's part of a warning.
type auditText struct{ user, model string }

// updateAudit brings the session's audit up to date with what was
// appended to the transcript since the last Stop. It runs under the state
// lock (the read is bounded by audit.TailLimit). Failures are logged: the
// monitor still warns without an audit.
func (h *Hook) updateAudit(st *monitor.State) {
	if !h.Config.Bool("CONTEXT_AUDIT_ENABLED") {
		st.Audit = nil
		return
	}
	f, err := fsutil.OpenRegular(h.In.TranscriptPath())
	if err != nil {
		h.Log.Printf("context audit: %v", err)
		return
	}
	defer f.Close()
	if st.Audit == nil || st.Audit.Path != f.Name() {
		// New, or its offset is into another file (a fork, a copy).
		st.Audit = audit.New()
		st.Audit.Path = f.Name()
	}
	if err := st.Audit.Update(f, false); err != nil {
		h.Log.Printf("context audit: %v", err)
	}
}

// auditReport names the top consumers, and with COMPACT_SUGGEST_ENABLED a
// targeted suggestion, once the fill is past CONTEXT_AUDIT_THRESHOLD_PCT.
func (h *Hook) auditReport(a *audit.Audit, fill monitor.Fill) auditText {
	if a == nil || !h.Config.Bool("CONTEXT_AUDIT_ENABLED") || fill.Pct() < float64(h.Config.Int("CONTEXT_AUDIT_THRESHOLD_PCT")) {
		return auditText{}
	}
	rep := a.Report(5)
	if rep == "" {
		return auditText{}
	}
	var sug string
	if h.Config.Bool("COMPACT_SUGGEST_ENABLED") {
		sug = a.Suggestion(3)
	}
	return auditText{user: joinLines(rep, sug), model: joinLines(a.Report(3), sug)}
}
