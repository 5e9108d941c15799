package memory

import (
	"strings"

	"github.com/tidwall/gjson"
)

// inputKeys are the tool_input members that say what a call did, in the
// order agentihooks looked for them, then ccm's additions.
var inputKeys = []string{"command", "jql", "query", "pattern", "sql", "issue_key", "file_path", "url", "path", "notebook_path"}

// InputSummary is a short description of a tool call's input: the first
// of command, jql, query, pattern, sql, issue_key, file_path, url, path
// (at most 150 characters), else the first key=value whose value is at most
// 120 characters.
func InputSummary(input gjson.Result) string {
	for _, k := range inputKeys {
		if v := input.Get(gjson.Escape(k)); v.Exists() && v.String() != "" {
			return clip(oneLine(v.String()), 150)
		}
	}
	out := ""
	input.ForEach(func(k, v gjson.Result) bool {
		s := oneLine(v.String())
		if len(s) <= 120 {
			out = k.String() + "=" + s
			return false
		}
		return true
	})
	return clip(out, 150)
}

// ErrorText is the start of an error: its first three non-empty lines, at
// most 300 characters in all.
func ErrorText(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
			if len(lines) == 3 {
				break
			}
		}
	}
	return clip(strings.Join(lines, "\n"), 300)
}

// ResultError returns the error text of a tool result that says it failed
// explicitly: an object with is_error (text from content, error, or its
// content blocks' text) or a non-zero exitCode / exit_code (text from
// stderr, else stdout). Results without such a flag are not errors:
// agentihooks' substring scan ("error", "not found", ...) flagged normal
// output.
func ResultError(r gjson.Result) (string, bool) {
	if !r.IsObject() {
		return "", false
	}
	if ie := r.Get("is_error"); ie.Exists() && ie.Bool() || r.Get("isError").Bool() {
		for _, k := range []string{"content", "error"} {
			if v := r.Get(k); v.Type == gjson.String && v.Str != "" {
				return ErrorText(v.Str), true
			}
		}
		var b strings.Builder
		r.Get("content").ForEach(func(_, blk gjson.Result) bool {
			if t := blk.Get("text"); t.Type == gjson.String {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(t.Str)
			}
			return b.Len() < 4096
		})
		if b.Len() == 0 {
			return "error (no text)", true
		}
		return ErrorText(b.String()), true
	}
	for _, k := range []string{"exitCode", "exit_code"} {
		if v := r.Get(k); v.Type == gjson.Number && v.Int() != 0 {
			text := r.Get("stderr").String()
			if strings.TrimSpace(text) == "" {
				text = r.Get("stdout").String()
			}
			if strings.TrimSpace(text) == "" {
				text = "exit code " + v.Raw
			}
			return ErrorText(text), true
		}
	}
	return "", false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}
