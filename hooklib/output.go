package hooklib

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"ccm/internal/rawjson"
)

// MaxPayload is Claude Code's cap on what one hook output may carry, in
// characters. Longer output is spilled to a file and the model gets a
// preview. ccm counts the whole rendered line, JSON framing and escapes
// included, in UTF-16 code units (JavaScript's string length), so it never
// crosses the cap however the client measures.
const MaxPayload = 10_000

// Event names ccm knows.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	Stop             = "Stop"
	SubagentStop     = "SubagentStop"
	SessionEnd       = "SessionEnd"
	PreCompact       = "PreCompact"
	PostCompact      = "PostCompact"
)

// knownEvents are the events Claude Code documents. An event outside this
// list is logged and ignored.
var knownEvents = map[string]bool{
	SessionStart: true, "Setup": true, UserPromptSubmit: true, "UserPromptExpansion": true,
	PreToolUse: true, "PermissionRequest": true, "PermissionDenied": true, PostToolUse: true,
	"PostToolUseFailure": true, "PostToolBatch": true, "Notification": true, "SubagentStart": true,
	SubagentStop: true, Stop: true, "StopFailure": true, PreCompact: true, PostCompact: true,
	SessionEnd: true, "TaskCreated": true, "TaskCompleted": true, "TeammateIdle": true,
	"InstructionsLoaded": true, "ConfigChange": true, "CwdChanged": true, "DirectoryAdded": true,
	"FileChanged": true, "WorktreeCreate": true, "WorktreeRemove": true, "Elicitation": true,
	"ElicitationResult": true, "MessageDisplay": true,
}

// contextEvents accept hookSpecificOutput.additionalContext, and it reaches
// the model (docs/hooks-protocol.md, "Output: what reaches the model").
// Plain stdout does not on the tool events, and a top-level
// additionalContext is ignored everywhere (agentihooks used both).
var contextEvents = map[string]bool{SessionStart: true, UserPromptSubmit: true, PreToolUse: true, PostToolUse: true}

// Response is what a feature wants to say.
type Response struct {
	// Context goes to the model as additionalContext.
	Context string
	// SystemMessage is shown to the user; it never reaches the model.
	SystemMessage string
	// ToolOutput, on PostToolUse only, is the raw JSON of
	// updatedToolOutput: the tool's output, in the tool's own shape, that
	// replaces what the model gets (docs/hooks-protocol.md, "Replacing a
	// tool's output").
	ToolOutput []byte
	// Continue must be set for Context on Stop or SubagentStop: there it
	// is fed back as a new turn and Claude keeps going (up to 8 times), so
	// only a feature that means that may send it.
	Continue bool
}

// Render returns the exact bytes to print for event, or nil when nothing
// may be printed. dropped is true when part of r had to be dropped
// because the event does not accept it (the caller logs that).
func Render(event string, r Response) (out []byte, dropped bool) {
	ctx, msg := r.Context, r.SystemMessage
	switch {
	case event == SessionEnd:
		// Output is discarded, and hookSpecificOutput fails validation.
		dropped = ctx != "" || msg != ""
		ctx, msg = "", ""
	case event == Stop || event == SubagentStop:
		if !r.Continue && ctx != "" {
			ctx, dropped = "", true
		}
	case !contextEvents[event]:
		// PreCompact, PostCompact and the rest reject hookSpecificOutput.
		if ctx != "" {
			ctx, dropped = "", true
		}
	}
	tool := r.ToolOutput
	if tool != nil && event != PostToolUse {
		tool, dropped = nil, true
	}
	if ctx == "" && msg == "" && tool == nil {
		return nil, dropped
	}
	if tool != nil {
		// The replacement is built within budget by the capture; it is
		// never cut (a cut would break its JSON).
		return renderTool(event, ctx, tool), dropped
	}
	out = render(event, ctx, msg)
	if n := Size16(string(out)); n > MaxPayload {
		// Features budget below the cap; this is the last line of defence.
		over := n - MaxPayload + len(cutMarker) + 8
		if len(ctx) > 0 {
			ctx = cutToFit(ctx, Size(ctx)-over) + cutMarker
		} else {
			msg = cutToFit(msg, Size(msg)-over) + cutMarker
		}
		out = render(event, ctx, msg)
	}
	return out, dropped
}

const cutMarker = "\n[... cut to fit the hook output limit]"

func render(event, ctx, msg string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	if ctx != "" {
		b.WriteString(`"hookSpecificOutput":{"hookEventName":`)
		writeJSONString(&b, event)
		b.WriteString(`,"additionalContext":`)
		writeJSONString(&b, ctx)
		b.WriteByte('}')
	}
	if msg != "" {
		if ctx != "" {
			b.WriteByte(',')
		}
		b.WriteString(`"systemMessage":`)
		writeJSONString(&b, msg)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// renderTool renders a PostToolUse answer that replaces the tool's output.
func renderTool(event, ctx string, tool []byte) []byte {
	var b strings.Builder
	b.WriteString(`{"hookSpecificOutput":{"hookEventName":`)
	writeJSONString(&b, event)
	if ctx != "" {
		b.WriteString(`,"additionalContext":`)
		writeJSONString(&b, ctx)
	}
	b.WriteString(`,"updatedToolOutput":`)
	b.Write(tool)
	b.WriteString("}}\n")
	return []byte(b.String())
}

// ContextBudget returns how many characters, measured by Size, the
// additionalContext of event may take so that the rendered output stays
// within MaxPayload.
func ContextBudget(event string) int {
	return MaxPayload - Size16(string(render(event, "x", ""))) + 1
}

// Size returns the length of s as it will be rendered inside a JSON string:
// escapes count, characters count in UTF-16 code units.
func Size(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
			n += 2
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			n += 6
		case r >= 0x10000:
			n += 2
		default:
			n++
		}
	}
	return n
}

// Size16 returns the length of s in UTF-16 code units.
func Size16(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutToFit returns the longest prefix of s whose Size is at most n, cut at
// a line break when there is one in the last quarter.
func cutToFit(s string, n int) string {
	if n <= 0 {
		return ""
	}
	size, end := 0, 0
	for i, r := range s {
		k := Size(string(r))
		if size+k > n {
			break
		}
		size += k
		end = i + utf8.RuneLen(r)
	}
	cut := s[:end]
	if nl := strings.LastIndexByte(cut, '\n'); nl > len(cut)*3/4 {
		cut = cut[:nl]
	}
	return cut
}

// writeJSONString writes s as a JSON string (rawjson.AppendLineSafe).
// Non-ASCII stays as UTF-8 (an escape would cost six characters of the
// cap); invalid UTF-8 becomes U+FFFD; U+2028 and U+2029 are escaped for
// JavaScript's sake.
func writeJSONString(b *strings.Builder, s string) {
	var buf [256]byte
	b.Write(rawjson.AppendLineSafe(buf[:0], s))
}
