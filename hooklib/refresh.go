package hooklib

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// forceTTL is how long a `ccm refresh` request waits for the session's
// next prompt before it expires.
const forceTTL = 24 * time.Hour

// due says what a prompt's refresh carries.
type due struct {
	turn        int
	rules, md   bool
	forced      bool
	rulesN, mdN int // intervals
}

func (d due) any() bool { return d.rules || d.md || d.forced }

// onUserPromptSubmit counts the session's prompts and re-injects rules
// every CONTEXT_REFRESH_INTERVAL prompts and CLAUDE.md every
// CONTEXT_REFRESH_CLAUDE_MD_INTERVAL prompts; when both fall due they go
// in one payload. An interval of 0 disables that part (agentihooks
// divided by it and crashed before saving its counter).
func onUserPromptSubmit(ctx context.Context, h *Hook) (Response, error) {
	sid := h.In.SessionID()
	if sid == "" {
		return Response{}, nil // nothing to count against
	}
	if !userPrompt(h.In) {
		return Response{}, nil
	}
	h.pinDirectives(ctx, sid)
	cfg := h.Config
	enabled := cfg.Bool("CONTEXT_REFRESH_ENABLED")
	d := due{rulesN: cfg.Int("CONTEXT_REFRESH_INTERVAL"), mdN: cfg.Int("CONTEXT_REFRESH_CLAUDE_MD_INTERVAL")}
	if !enabled {
		// Only a `ccm refresh` request can make a disabled refresh speak.
		if st, err := h.State.Load(sid); err != nil || st.ForceRefresh.IsZero() {
			return Response{}, nil
		}
	}
	_, err := h.State.Update(ctx, sid, h.Now, func(st *State) error {
		if enabled {
			// Due N prompts after the last refresh of that part: prompt N,
			// 2N, ... as before, and a `ccm refresh` restarts the count
			// instead of being followed by a periodic copy soon after.
			st.Prompts++
			d.rules = d.rulesN > 0 && st.Prompts-st.LastRules >= d.rulesN
			d.md = d.mdN > 0 && st.Prompts-st.LastClaudeMD >= d.mdN
		}
		if !st.ForceRefresh.IsZero() {
			d.forced = h.Now.Sub(st.ForceRefresh) < forceTTL
			st.ForceRefresh = time.Time{}
		}
		if d.rules || d.forced {
			st.LastRules = st.Prompts
		}
		if d.md || d.forced {
			st.LastClaudeMD = st.Prompts
		}
		d.turn = st.Prompts
		return nil
	})
	if err != nil {
		return Response{}, fmt.Errorf("session state: %w", err)
	}
	if !d.any() {
		return Response{}, nil
	}
	return Response{Context: buildRefresh(h, d)}, nil
}

// userPrompt reports whether a UserPromptSubmit carries a prompt the user
// typed. Claude Code 2.1.3xx also submits the completion notice of a
// background subagent as a prompt ("<task-notification>..."), and
// subagents have their own context; neither counts toward the cadence.
func userPrompt(in *Input) bool {
	if in.AgentID() != "" {
		return false
	}
	return !strings.HasPrefix(strings.TrimSpace(in.Prompt()), "<task-notification>")
}

// buildRefresh assembles the refresh payload: rules first, then CLAUDE.md
// with what is left. Each part gets at most CONTEXT_REFRESH_MAX_CHARS, and
// together they stay within what keeps the output under MaxPayload
// (agentihooks' 16000-character budget could not be delivered intact).
func buildRefresh(h *Hook, d due) string {
	maxChars := h.Config.Int("CONTEXT_REFRESH_MAX_CHARS")
	left := ContextBudget(UserPromptSubmit)
	var parts []string
	var notes []string
	if d.rules || d.forced {
		rules := h.rules()
		header := fmt.Sprintf("Re-injecting active rules (turn %d, every %d turns).", d.turn, d.rulesN)
		if d.forced {
			header = fmt.Sprintf("Re-injecting active rules (turn %d, requested with ccm refresh).", d.turn)
		}
		text, in, om := RenderRules(header, rules, min(maxChars, left))
		if text != "" {
			parts = append(parts, text)
			left -= Size(text) + Size("\n\n")
			notes = append(notes, fmt.Sprintf("%d rule(s), %d omitted", in, om))
		}
	}
	if d.md || d.forced {
		header := fmt.Sprintf("Re-injecting CLAUDE.md (turn %d, every %d turns).", d.turn, d.mdN)
		if d.forced {
			header = fmt.Sprintf("Re-injecting CLAUDE.md (turn %d, requested with ccm refresh).", d.turn)
		}
		files := MemoryFiles(h.Config.ClaudeDir, h.projectDir())
		if text := RenderMemory(header, files, min(maxChars, left), h.compress); text != "" {
			parts = append(parts, text)
			notes = append(notes, fmt.Sprintf("%d CLAUDE.md file(s)", len(files)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	text := strings.Join(parts, "\n\n")
	h.Log.Printf("refresh at turn %d: %s, %d characters", d.turn, strings.Join(notes, "; "), Size(text))
	return text
}

// rules loads, compresses, sorts and de-duplicates the global and project
// rules.
func (h *Hook) rules() []Rule {
	warn := func(s string) { h.Log.Printf("%s", s) }
	global := h.Config.Path("CONTEXT_REFRESH_RULES_DIR")
	rules := LoadRules(global, "", warn)
	if h.Config.Bool("CONTEXT_REFRESH_INCLUDE_PROJECT") {
		if p := h.projectDir(); p != "" {
			dir := filepath.Join(p, ".claude", "rules")
			if !samePath(dir, global) {
				rules = append(rules, LoadRules(dir, "project: ", warn)...)
			}
		}
	}
	SortRules(rules)
	rules = DedupeRules(rules)
	for i := range rules {
		rules[i].Body = h.compress(rules[i].Body)
	}
	return rules
}

// projectDir is the session's project root: $CLAUDE_PROJECT_DIR (stable
// inside worktrees and after cd), else the input's cwd.
func (h *Hook) projectDir() string {
	if p, ok := h.Lookup("CLAUDE_PROJECT_DIR"); ok && p != "" {
		return p
	}
	return h.In.Cwd()
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// MarkRefresh asks for a refresh on the next prompt of the given sessions,
// or of every live session when ids is empty. It returns the sessions
// marked. Sessions without state (ended, or never seen) are not marked.
func MarkRefresh(ctx context.Context, s *Store, ids []string, now time.Time) ([]string, error) {
	live, err := RefreshTargets(s, ids, now)
	if err != nil {
		return nil, err
	}
	for _, id := range live {
		if _, err := s.Update(ctx, id, now, func(st *State) error {
			st.ForceRefresh = now.UTC()
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// RefreshTargets are the sessions MarkRefresh would mark: the given ones
// that have state, or every live session when ids is empty.
func RefreshTargets(s *Store, ids []string, now time.Time) ([]string, error) {
	live, err := s.Sessions(IdleLimit, now)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		var keep []string
		for _, id := range live {
			if want[id] {
				keep = append(keep, id)
			}
		}
		live = keep
	}
	return live, nil
}
