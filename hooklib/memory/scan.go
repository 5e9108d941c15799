package memory

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
)

// FirstScan bounds the first scan of a session's transcript: only its last
// FirstScan bytes are read (a resumed session may be hundreds of MB).
const FirstScan = 1 << 20

// maxScanLine bounds the lines the scan looks at; longer lines (large tool
// outputs, images) are skipped.
const maxScanLine = 8 << 20

// ScanTranscript finds the failed MCP tool calls in the part of a
// transcript written since offset from: tool_result blocks with is_error
// true whose tool_use names an mcp__ tool. Claude Code did not always fire
// a hook for them (agentihooks' reason for its Stop scan). It reads
// only complete lines and returns the offset after the last one, where the
// next scan starts. A from of 0, or past the end (the file was replaced),
// starts FirstScan bytes before the end.
//
// The part to scan is mapped into memory (filemap) and its lines are
// looked at where they lie: copying each long line out of a 64 KB buffer
// was most of the scan's time on a first Stop.
func ScanTranscript(path string, from int64) (found []Entry, next int64, err error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, from, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, from, err
	}
	size := fi.Size()
	skipFirst := false
	if from <= 0 || from > size {
		from, skipFirst = max(0, size-FirstScan), size > FirstScan
	}
	rg, err := fsutil.MapRegion(f, from, size-from)
	if err != nil {
		return nil, from, err
	}
	defer rg.Close()
	next = from
	err = fsutil.GuardMapped(func() error {
		data := rg.Data
		if skipFirst { // start at a line boundary
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				next += int64(len(data))
				return nil
			}
			data = data[j+1:]
			next += int64(j + 1)
		}
		calls := map[string][2]string{} // tool_use id -> name, input summary
		for {
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				return nil // what is left is still being written
			}
			line := data[:j]
			data = data[j+1:]
			next += int64(j + 1)
			if len(line) <= maxScanLine && worthScanning(line) {
				found = append(found, scanRecord(line, calls)...)
			}
		}
	})
	return found, next, err
}

// worthScanning reports a line that names an MCP tool or an error result.
// Each pattern is searched from its underscore first: a search for one
// that starts with a quote stops at every key and string of the line.
func worthScanning(line []byte) bool {
	return bytes.Contains(line, []byte(`__`)) && bytes.Contains(line, []byte(`"mcp__`)) ||
		bytes.Contains(line, []byte(`_error":true`)) && bytes.Contains(line, []byte(`"is_error":true`))
}

// scanRecord notes the MCP tool calls of an assistant record and returns
// the lessons of a user record's failed results.
func scanRecord(line []byte, calls map[string][2]string) []Entry {
	if !gjson.ValidBytes(line) {
		return nil
	}
	rec := gjson.ParseBytes(line)
	var out []Entry
	rec.Get("message.content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "tool_use":
			if name := b.Get("name").String(); strings.HasPrefix(name, "mcp__") {
				calls[b.Get("id").String()] = [2]string{name, InputSummary(b.Get("input"))}
			}
		case "tool_result":
			call, ok := calls[b.Get("tool_use_id").String()]
			if !ok || !b.Get("is_error").Bool() {
				return true
			}
			text := resultText(b.Get("content"))
			ts := rec.Get("timestamp").String()
			if len(ts) > 19 {
				ts = ts[:19]
			}
			if ts != "" {
				ts += "Z"
			}
			out = append(out, Entry{TS: ts, Tool: call[0], Input: call[1], Error: ErrorText(text),
				Session: rec.Get("sessionId").String(), Project: rec.Get("cwd").String()})
		}
		return true
	})
	return out
}

// resultText is a tool_result's content as text: a string, or its text
// blocks joined.
func resultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var parts []string
	c.ForEach(func(_, b gjson.Result) bool {
		if t := b.Get("text"); t.Type == gjson.String {
			parts = append(parts, t.Str)
		}
		return true
	})
	if len(parts) == 0 {
		return "error (no text)"
	}
	return strings.Join(parts, "\n")
}
