package hooklib

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"ccm/hooklib/monitor"
)

// monitorVars are the settings of the context monitor, the context audit,
// pre-compact preservation and cold-task summaries. Names and defaults
// are the earlier tools' (docs/earlier-tools.md).
var monitorVars = []Var{
	{"CONTEXT_MONITOR_ENABLED", "true", "bool", "warn at Stop when the context fill crosses a threshold"},
	{"CONTEXT_WARN_THRESHOLDS", "70,80,90", "list", "fill percentages that warn, once per crossing"},
	{"CONTEXT_MAX_TOKENS", "0", "int", "context window in tokens; 0: 200,000, or 1,000,000 for 1M models"},
	{"CONTEXT_AUDIT_ENABLED", "true", "bool", "name the top context consumers in the warning"},
	{"CONTEXT_AUDIT_THRESHOLD_PCT", "70", "int", "fill from which the warning carries the audit"},
	{"COMPACT_SUGGEST_ENABLED", "true", "bool", "suggest what /compact should drop and what ccm purge would save"},
	{"PRECOMPACT_PRESERVE_ENABLED", "true", "bool", "save the working state at PreCompact and re-inject it after compaction"},
	{"COLD_TASKS_ENABLED", "true", "bool", "summarise completed tasks that went cold"},
	{"CHECK_FREQUENCY", "10", "int", "cold-task check every N assistant turns"},
	{"CONTEXT_THRESHOLD", "70", "int", "fill percentage from which cold tasks are summarised"},
	{"TURNS_UNTIL_COLD", "20", "int", "turns without mention after which a completed task is cold"},
}

func init() {
	Vars = append(Vars, monitorVars...)
	also(Stop, monitorStop)
	also(UserPromptSubmit, monitorPrompt)
}

// thresholds returns CONTEXT_WARN_THRESHOLDS, or the default with a
// warning when it does not parse.
func thresholds(c *Config) []int {
	ts, ok := monitor.ParseThresholds(c.String("CONTEXT_WARN_THRESHOLDS"))
	if !ok || len(ts) == 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("CONTEXT_WARN_THRESHOLDS=%q is not a list of percentages; using 70,80,90", c.String("CONTEXT_WARN_THRESHOLDS")))
		ts, _ = monitor.ParseThresholds("70,80,90")
	}
	return ts
}

// readFill reads the session's fill from its transcript.
func readFill(h *Hook) (monitor.Fill, error) {
	path := h.In.TranscriptPath()
	if path == "" {
		return monitor.Fill{}, errors.New("no transcript_path")
	}
	return monitor.ReadFill(path, int64(h.Config.Int("CONTEXT_MAX_TOKENS")))
}

// monitorStop checks the fill after each response. At a threshold newly
// crossed it warns the user through systemMessage (additionalContext at
// Stop would make Claude continue) and queues the same facts for the
// model's next prompt.
func monitorStop(ctx context.Context, h *Hook, _ Response) (Response, error) {
	sid := h.In.SessionID()
	if sid == "" || !h.Config.Bool("CONTEXT_MONITOR_ENABLED") {
		return Response{}, nil
	}
	ts := thresholds(h.Config)
	path := h.In.TranscriptPath()
	if path == "" {
		return Response{}, errors.New("context monitor: no transcript_path")
	}
	fill, synced, err := monitor.ReadFillAfter(path, int64(h.Config.Int("CONTEXT_MAX_TOKENS")), h.In.Get("last_assistant_message").String())
	if err != nil {
		return Response{}, fmt.Errorf("context monitor: %w", err)
	}
	if !synced {
		h.Log.Printf("context monitor: the transcript does not hold the last response after %v; using the usage before it", monitor.Settle)
	}
	if !fill.Known && !fill.Compacted {
		h.Log.Printf("context monitor: no usage recorded yet in %s", h.In.TranscriptPath())
		return Response{}, nil
	}
	crossed := 0
	var rep auditText
	_, err = h.updateState(ctx, sid, func(st *State) error {
		h.updateAudit(&st.Context)
		crossed = monitor.Step(&st.Context, ts, fill)
		if crossed > 0 {
			rep = h.auditReport(st.Context.Audit, fill)
			st.Context.Pending = joinLines(monitor.ModelMessage(fill, crossed), rep.model)
		}
		return nil
	})
	if err != nil {
		return Response{}, fmt.Errorf("context monitor: session state: %w", err)
	}
	if crossed == 0 {
		return Response{}, nil
	}
	h.Log.Printf("context monitor: %.0f%% (%d tokens), threshold %d%% crossed", fill.Pct(), fill.Tokens, crossed)
	return Response{SystemMessage: joinLines(monitor.UserMessage(fill, crossed, ts), rep.user)}, nil
}

// monitorPrompt hands the model the warning queued at the last Stop.
func monitorPrompt(ctx context.Context, h *Hook, prev Response) (Response, error) {
	sid := h.In.SessionID()
	if sid == "" {
		return Response{}, nil
	}
	// A lock-free look first: almost every prompt has nothing queued.
	if st, err := h.State.Load(sid); err != nil || st.Context.Pending == "" {
		return Response{}, nil
	}
	var text string
	_, err := h.State.Update(ctx, sid, h.Now, func(st *State) error {
		text, st.Context.Pending = st.Context.Pending, ""
		return nil
	})
	if err != nil {
		return Response{}, fmt.Errorf("context monitor: session state: %w", err)
	}
	return Response{Context: fitText(text, room(UserPromptSubmit, prev))}, nil
}

func joinLines(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return strings.TrimRight(a, "\n") + "\n" + b
}
