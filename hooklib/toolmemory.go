package hooklib

import (
	"context"
	"strings"

	"ccm/hooklib/memory"
)

// toolMemory returns the configured lesson store, or nil when the tool
// memory is off.
func (h *Hook) toolMemory() *memory.Store {
	if !h.Config.Bool("CCM_TOOL_MEMORY_ENABLED") {
		return nil
	}
	return &memory.Store{Path: h.Config.Path("AGENTICORE_TOOL_MEMORY_PATH"), Max: h.Config.Int("AGENTICORE_TOOL_MEMORY_MAX")}
}

// record stores one lesson; failures are logged only.
func (h *Hook) record(ctx context.Context, tool, input, errText string) {
	m := h.toolMemory()
	if m == nil || tool == "" || strings.TrimSpace(errText) == "" {
		return
	}
	e := memory.Entry{TS: h.Now.UTC().Format("2006-01-02T15:04:05Z"), Tool: tool, Input: input,
		Error: memory.ErrorText(errText), Session: h.In.SessionID(), Project: h.project()}
	if _, err := m.Record(ctx, e); err != nil {
		h.Log.Printf("tool memory: %v", err)
	}
}

// recordFailure records a PostToolUse of an MCP tool whose result says it
// failed (is_error, a non-zero exit code). Claude Code's own tools report
// failures through PostToolUseFailure, so their (possibly large) results
// are not searched for flags.
func (h *Hook) recordFailure(ctx context.Context) {
	if !strings.HasPrefix(h.In.ToolName(), "mcp__") {
		return
	}
	if text, ok := memory.ResultError(h.In.ToolResponse()); ok {
		h.record(ctx, h.In.ToolName(), memory.InputSummary(h.In.ToolInput()), text)
	}
}

// onPostToolUseFailure records the lesson of a failed call. Claude Code
// 2.1.330 fires this event, not PostToolUse, when a tool fails (a Bash
// command's non-zero exit included), with the error text in "error". A
// call the user interrupted teaches nothing.
func onPostToolUseFailure(ctx context.Context, h *Hook) (Response, error) {
	if h.In.Get("is_interrupt").Bool() {
		return Response{}, nil
	}
	h.record(ctx, h.In.ToolName(), memory.InputSummary(h.In.ToolInput()), h.In.Get("error").String())
	return Response{}, nil
}

// onStop scans the transcript written since the last scan for failed MCP
// calls and records them. It never answers: context on Stop would make
// Claude continue.
func onStop(ctx context.Context, h *Hook) (Response, error) {
	m := h.toolMemory()
	sid, path := h.In.SessionID(), h.In.TranscriptPath()
	if m == nil || sid == "" || path == "" || h.In.StopHookActive() {
		return Response{}, nil
	}
	st, err := h.State.Load(sid)
	if err != nil {
		return Response{}, err
	}
	found, next, err := memory.ScanTranscript(path, st.ScanOffset)
	if err != nil {
		return Response{}, err
	}
	for _, e := range found {
		if e.Project == "" {
			e.Project = h.project()
		}
		if _, err := m.Record(ctx, e); err != nil {
			h.Log.Printf("tool memory: %v", err)
		}
	}
	if next != st.ScanOffset {
		// Saved with the context monitor's update, or at the hook's end.
		h.deferState(func(s *State) { s.ScanOffset = next })
	}
	return Response{}, nil
}

// lessons returns the lessons to show before a call of the hook's tool:
// those of this tool in this project not yet shown in the session, newest
// AGENTICORE_TOOL_MEMORY_SHOW, within budget characters. They are marked
// shown in the session's state, so each is shown once.
func (h *Hook) lessons(ctx context.Context, budget int) string {
	m := h.toolMemory()
	sid, tool := h.In.SessionID(), h.In.ToolName()
	if m == nil || sid == "" || tool == "" || h.In.AgentID() != "" {
		return ""
	}
	st, err := h.State.Load(sid)
	if err != nil {
		h.Log.Printf("tool memory: %v", err)
		return ""
	}
	seen := make(map[string]bool, len(st.Lessons))
	for _, k := range st.Lessons {
		seen[k] = true
	}
	found, err := m.Lessons(tool, h.project(), h.Config.Int("AGENTICORE_TOOL_MEMORY_SHOW"), seen)
	if err != nil || len(found) == 0 {
		if err != nil {
			h.Log.Printf("tool memory: %v", err)
		}
		return ""
	}
	var shown []string
	var b strings.Builder
	b.WriteString("Tool memory: earlier calls of " + tool + " in this project failed like this (lessons from past sessions, each shown once):")
	for _, e := range found {
		line := "\n- " + e.Line()
		if Size(b.String()+line) > budget {
			continue
		}
		b.WriteString(line)
		shown = append(shown, e.Key())
	}
	if len(shown) == 0 {
		return ""
	}
	fresh := shown[:0:0]
	if _, err := h.State.Update(ctx, sid, h.Now, func(s *State) error {
		have := make(map[string]bool, len(s.Lessons))
		for _, k := range s.Lessons {
			have[k] = true
		}
		for _, k := range shown {
			if !have[k] {
				s.Lessons = append(s.Lessons, k)
				fresh = append(fresh, k)
			}
		}
		return nil
	}); err != nil {
		h.Log.Printf("tool memory: state: %v", err)
		return ""
	}
	if len(fresh) == 0 {
		return "" // a parallel call of the same tool showed them
	}
	return b.String()
}
