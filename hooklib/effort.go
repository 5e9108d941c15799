package hooklib

import (
	"fmt"
	"strings"

	"ccm/internal/ui"
)

// agentihooks' thinking policy's texts (docs/earlier-tools.md), unchanged.
const (
	effortLow    = "Default effort: low. Use minimal reasoning for straightforward tasks. Only escalate to medium/high for complex architectural decisions."
	effortMedium = "Default effort: medium. Use standard reasoning depth. Reserve high/ultrathink for complex architectural decisions or debugging. Prefer Sonnet for implementation; reserve Opus for planning."
	effortHigh   = "Default effort: high. Full reasoning enabled."
)

// EffortText returns the SessionStart guidance for an effort profile and
// an advisory thinking budget (0 for none). Unknown profiles get the
// medium text; "high" without a budget says nothing at all.
func EffortText(effort string, budget int) string {
	var text string
	switch strings.ToLower(strings.TrimSpace(effort)) {
	case "low":
		text = effortLow
	case "high":
		if budget <= 0 {
			return ""
		}
		text = effortHigh
	default:
		text = effortMedium
	}
	if budget > 0 {
		text += fmt.Sprintf(" Advisory thinking budget: %s tokens per response.", ui.Count(budget))
	}
	return text
}

// OpusNote returns the note for a subagent about to start on opus under a
// low or medium profile, or "". agentihooks sent its warning on
// PostToolUse, after the subagent had run, as plain stdout that never
// reached the model; ccm sends it from PreToolUse as
// additionalContext.
func OpusNote(toolName, model, subagentType, effort string) string {
	if toolName != "Agent" && toolName != "Task" {
		return ""
	}
	if !strings.Contains(strings.ToLower(model), "opus") {
		return ""
	}
	switch effort = strings.ToLower(strings.TrimSpace(effort)); effort {
	case "low", "medium":
	case "high":
		return ""
	default:
		effort = "medium"
	}
	switch subagentType {
	case "", "Explore", "Plan", "general-purpose":
	default:
		return "" // a custom agent chose its model on purpose
	}
	if subagentType == "" {
		subagentType = "general-purpose"
	}
	return fmt.Sprintf("Subagent (%s) about to start with model=opus (profile default: %s). Consider using sonnet for this agent type to reduce token spend.", subagentType, effort)
}

// effortContext is the SessionStart part of the effort policy. It is
// skipped on resume and fork: the text of the session's start is replayed
// from the transcript there, and injecting it again would only add a copy.
func effortContext(h *Hook) string {
	if !h.Config.Bool("EFFORT_POLICY_ENABLED") {
		return ""
	}
	switch h.In.Source() {
	case "resume", "fork":
		return ""
	}
	return EffortText(h.Config.String("DEFAULT_EFFORT"), h.Config.Int("THINKING_BUDGET_TOKENS"))
}

func opusNote(h *Hook) string {
	if !h.Config.Bool("EFFORT_POLICY_ENABLED") {
		return ""
	}
	ti := h.In.ToolInput()
	return OpusNote(h.In.ToolName(), ti.Get("model").String(), ti.Get("subagent_type").String(), h.Config.String("DEFAULT_EFFORT"))
}
