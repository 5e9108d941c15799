package worklog

import (
	"strings"

	"github.com/tidwall/gjson"

	"ccm/transcript"
)

// UserText returns the text of a user record (string content, or its text
// blocks joined) and whether its content is only tool results.
func UserText(rec transcript.Record) (string, bool) {
	return ContentText(rec.Lookup("message.content"))
}

// ContentText is UserText of a user record's message.content c (from
// Lookup, or LookupOpen: only its blocks are read).
func ContentText(c gjson.Result) (string, bool) {
	if c.Type == gjson.String {
		return gjson.Parse(c.Raw).Str, false
	}
	var parts []string
	results, others := 0, 0
	Blocks(c, func(b gjson.Result) bool {
		switch transcript.Field(b.Raw, "type").Str {
		case "tool_result":
			results++
		case "text":
			others++
			parts = append(parts, transcript.Field(b.Raw, "text").Str)
		default:
			others++
		}
		return true
	})
	return strings.Join(parts, "\n"), results > 0 && others == 0
}

// Blocks calls fn with each value of c (from Record.Lookup): an array's
// elements, an object's member values, or c itself for anything else, as
// gjson's ForEach does, but without decoding them (each has Raw and Type,
// an empty Str), so a block is crossed without unescaping its tool output.
func Blocks(c gjson.Result, fn func(b gjson.Result) bool) {
	switch {
	case !c.Exists():
	case c.Raw[0] == '[':
		transcript.ForEachElement(c, fn)
	case c.Raw[0] == '{':
		transcript.ForEachMember(c, func(_ string, m gjson.Result) bool { return fn(m) })
	default:
		fn(c)
	}
}

// IsPromptText tells a typed prompt from the markers Claude Code writes as
// user text.
func IsPromptText(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && !strings.HasPrefix(t, "[Request interrupted by user")
}

// isMarker reports the texts the client writes in a user turn that the
// user did not type as a request: slash-command echoes and their output,
// background task notices.
func isMarker(s string) bool {
	t := strings.TrimSpace(s)
	for _, p := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-caveat>", "<task-notification>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// ResultText is a tool_result's text: its string content or text blocks.
func ResultText(b gjson.Result) string {
	c := transcript.Lookup(b.Raw, "content")
	if c.Type == gjson.String {
		return gjson.Parse(c.Raw).Str
	}
	var parts []string
	Blocks(c, func(ib gjson.Result) bool {
		if transcript.Field(ib.Raw, "type").Str == "text" {
			parts = append(parts, transcript.Field(ib.Raw, "text").Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// errorSignals mark a line of command output as an error
// (claude-agentic-framework's, docs/earlier-tools.md).
var errorSignals = []string{"error:", "traceback", "exception:", "failed:", "failure:", "fatal:", "critical:",
	"cannot ", "no such file", "permission denied", "syntaxerror", "nameerror", "typeerror", "valueerror",
	"importerror", "modulenotfounderror", "attributeerror", "exit code", "returned non-zero",
	"command not found", "segmentation fault", "panic:", "--- fail", "\nfail\t"}

// errorLine returns the first line of text that carries an error signal.
func errorLine(text string) string {
	if len(text) > 256<<10 {
		text = text[len(text)-256<<10:]
	}
	for l := range strings.SplitSeq(text, "\n") {
		low := strings.ToLower(l)
		for _, s := range errorSignals {
			if strings.Contains(low, strings.TrimPrefix(s, "\n")) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

// bashFailed reports a Bash result the client did not flag as an error
// but that says the command failed: a non-zero exit or a test FAIL line.
func bashFailed(text string) bool {
	if len(text) > 256<<10 {
		text = text[len(text)-256<<10:]
	}
	return strings.Contains(text, "Exit code ") || strings.Contains(text, "\nFAIL") || strings.HasPrefix(text, "FAIL")
}

// rawBashFailed is bashFailed of the text of c, a tool_result's content
// from transcript.Lookup, read from its raw JSON string without decoding
// it. sure is false when the raw form cannot tell (not a plain string,
// longer than bashFailed's window, or with \u escapes, which could spell
// the signals' letters): the caller decodes then. Without \u escapes the
// signals' letters stand for themselves, and a newline is the escape \n
// (a backslash after an even run of backslashes).
func rawBashFailed(c gjson.Result) (failed, sure bool) {
	if c.Type != gjson.String || len(c.Raw)-2 > 256<<10 {
		return false, false
	}
	raw := c.Raw[1 : len(c.Raw)-1]
	if strings.Contains(raw, `\u`) {
		return false, false
	}
	if strings.Contains(raw, "Exit code ") || strings.HasPrefix(raw, "FAIL") {
		return true, true
	}
	// Search "FAIL" (an uppercase F is rarer than an n), then look for the
	// escape \n before it.
	for i := 0; ; {
		j := strings.Index(raw[i:], "FAIL")
		if j < 0 {
			return false, true
		}
		i += j
		if i == 0 || raw[i-1] != 'n' {
			i++
			continue
		}
		i--        // at the n
		k := i - 1 // the backslashes before the n
		for k >= 0 && raw[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 1 {
			return true, true
		}
		i += 2
	}
}

// decisionSignals mark the assistant's own statements of a decision
// (claude-agentic-framework's, docs/earlier-tools.md).
var decisionSignals = []string{"decided", "chose", "choice:", "approach:", "strategy:", "going with", "will use",
	"instead of", "key insight", "important:", "root cause", "fix is", "the issue is", "because", "tradeoff",
	"trade-off", "recommendation", "prefer"}

func hasDecision(s string) bool {
	low := strings.ToLower(s)
	for _, sig := range decisionSignals {
		if strings.Contains(low, sig) {
			return true
		}
	}
	return false
}

// decisions returns the statements of text that record a decision: bullet
// lines with a signal, or the whole text when it is short and one
// paragraph.
func decisions(text string) []string {
	if len(text) > 64<<10 {
		return nil
	}
	t := strings.TrimSpace(text)
	if len(t) < 400 && !strings.Contains(t, "\n\n") {
		if hasDecision(t) {
			return []string{Cut(t, 300)}
		}
		return nil
	}
	var out []string
	for l := range strings.SplitSeq(t, "\n") {
		l = strings.TrimSpace(l)
		for _, b := range []string{"- ", "• ", "* ", "→ "} {
			if strings.HasPrefix(l, b) {
				l = strings.TrimSpace(l[len(b):])
				if len(l) <= 300 && hasDecision(l) {
					out = append(out, Cut(l, 300))
				}
				break
			}
		}
	}
	return out
}
