package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/sjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
)

// Preview sizes. The whole replacement stays under 2 KB: when the original
// output was large, Claude Code 2.1.330 wraps even the replacement in its own
// <persisted-output> block and shows the model only its first 2 KB
// (docs/hooks-protocol.md, "Replacing a tool's output"), so the stub comes
// first and everything fits in that window.
const (
	headBytes = 700
	tailBytes = 500
	headLines = 12
	tailLines = 8
	lineBytes = 160 // longer preview lines are cut
)

// Stored is what the store said about a captured output.
type Stored struct {
	Key   ccm.Key
	Pin   ccm.PinLevel
	Lines int // lines as a reader counts them (see Lines)
}

// Lines counts lines as a reader does (and as `ccm cache get --lines`
// numbers them): a last line without a newline counts.
func Lines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// Replace returns the tool_response with the captured field replaced by
// the preview and stub, in the tool's own shape: every other member keeps
// its bytes.
func (cp *Capture) Replace(st Stored) ([]byte, error) {
	raw := []byte(cp.resp.Raw)
	if cp.field.blocks {
		out := append([]byte(`[{"type":"text","text":`), rawjson.Append(nil, cp.textPreview(st))...)
		return append(out, "}]"...), nil
	}
	if cp.field.array {
		arr, err := json.Marshal(cp.arrayPreview(st))
		if err != nil {
			return nil, err
		}
		return sjson.SetRawBytes(raw, cp.field.path, arr)
	}
	f := cp.field
	if f.end > f.start && f.end <= len(raw) {
		// Splice the new string where the old one was: every other byte
		// of the response stays as it was, and nothing is decoded again.
		out := make([]byte, 0, len(raw)-(f.end-f.start)+4096)
		out = append(out, raw[:f.start]...)
		out = rawjson.Append(out, cp.textPreview(st))
		return append(out, raw[f.end:]...), nil
	}
	return sjson.SetBytes(raw, f.path, cp.textPreview(st))
}

// Stub is the [CCM_CACHED] block of a capture.
func (cp *Capture) Stub(st Stored) stub.Stub {
	return stub.Stub{Key: st.Key, Source: cp.Source, Bytes: int64(len(cp.Content)), Lines: st.Lines, Pinned: st.Pin}
}

// header says, before anything else, that this is a capture and not an
// error, and how to get the rest.
func (cp *Capture) header(st Stored) string {
	what := "output"
	switch cp.Tool {
	case "Read":
		what = "file content"
	case "Glob", "Grep":
		what = "result"
	default:
		if strings.HasPrefix(cp.Tool, "mcp__") {
			what = "result"
		}
	}
	h := fmt.Sprintf("[ccm captured this %s %s: %d bytes, %d lines", cp.Tool, what, len(cp.Content), st.Lines)
	if cp.Tool == "Bash" {
		h += ", exit 0"
	}
	h += ". Not an error: the tool ran once and succeeded; the full " + what + " is in the CCM store.]\n"
	return h + cp.Stub(st).String() + "\n" + more(st.Key, cp.Tool) + "\n"
}

func more(k ccm.Key, tool string) string {
	s := "More: ccm cache get " + string(k) + " --lines A:B | --grep REGEX | --head N | --tail N"
	if tool == "Read" {
		s += " (or Read with offset/limit)"
	}
	return s
}

// textPreview is the replacement of a string field: header and stub, the
// first lines, the last lines. For Read the head comes first instead:
// Claude Code numbers the lines of Read's content, so the head keeps its
// true line numbers, and no tail is shown (its numbers would be wrong).
func (cp *Capture) textPreview(st Stored) string {
	head, tail := cp.headTail()
	var b strings.Builder
	if cp.Tool == "Read" {
		b.WriteString(head)
		if !strings.HasSuffix(head, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(cp.header(st))
		return b.String()
	}
	b.WriteString(cp.header(st))
	b.WriteString("--- first lines ---\n")
	b.WriteString(strings.TrimSuffix(head, "\n"))
	if tail != "" {
		b.WriteString("\n--- last lines ---\n")
		b.WriteString(tail)
	}
	b.WriteString("\n--- end of preview ---")
	return b.String()
}

// arrayPreview is the replacement of a list of names: the header and stub
// as the first entry, then the first and last names.
func (cp *Capture) arrayPreview(st Stored) []string {
	head, tail := cp.headTail()
	out := []string{strings.TrimRight(cp.header(st), "\n") + "\n--- first and last entries follow ---"}
	out = append(out, splitLines(head)...)
	if tail != "" {
		out = append(out, "[...]")
		out = append(out, splitLines(tail)...)
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// headTail returns the first and last lines of the content within the
// preview budgets, each line cut to lineBytes. tail is empty when the head
// already reaches the end.
func (cp *Capture) headTail() (head, tail string) {
	c := cp.Content
	var hb strings.Builder
	pos, n := 0, 0
	for pos < len(c) && n < headLines && hb.Len() < headBytes {
		end := bytes.IndexByte(c[pos:], '\n')
		line := c[pos:]
		if end >= 0 {
			line = c[pos : pos+end]
		}
		hb.WriteString(cutLine(line))
		hb.WriteByte('\n')
		n++
		if end < 0 {
			pos = len(c)
		} else {
			pos += end + 1
		}
	}
	if pos >= len(c) {
		return hb.String(), ""
	}
	// Walk back from the end for the tail, never before pos.
	var lines []string
	size := 0
	end := len(c)
	if c[end-1] == '\n' {
		end--
	}
	for end > pos && len(lines) < tailLines && size < tailBytes {
		start := bytes.LastIndexByte(c[pos:end], '\n')
		if start < 0 {
			start = pos
		} else {
			start += pos + 1
		}
		l := cutLine(c[start:end])
		lines = append(lines, l)
		size += len(l) + 1
		end = start - 1
	}
	var tb strings.Builder
	if end > pos {
		fmt.Fprintf(&tb, "[... %d bytes not shown ...]\n", end-pos)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		tb.WriteString(lines[i])
		if i > 0 {
			tb.WriteByte('\n')
		}
	}
	return hb.String(), tb.String()
}

// cutLine returns a line for the preview: at most lineBytes, cut on a
// rune, invalid UTF-8 replaced (the preview is JSON text).
func cutLine(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= lineBytes {
		return s
	}
	n := lineBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("[... +%d bytes]", len(s)-n)
}
