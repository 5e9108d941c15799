package synth

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

// generate runs Generate into memory and checks the manifest's size fields.
func generate(t testing.TB, o Options) ([]byte, Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := Generate(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	checkSize(t, buf.Bytes(), m)
	return buf.Bytes(), m
}

func checkSize(t testing.TB, data []byte, m Manifest) {
	t.Helper()
	if int64(len(data)) != m.Bytes {
		t.Errorf("manifest bytes %d, wrote %d", m.Bytes, len(data))
	}
	if n := len(splitLines(data)); n != m.Lines {
		t.Errorf("manifest lines %d, wrote %d", m.Lines, n)
	}
}

// splitLines splits data into lines without their newline; a final line
// without newline (a torn tail) is kept.
func splitLines(data []byte) [][]byte {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// badLines returns the set of 1-based line numbers the manifest says are
// not JSON objects.
func badLines(m Manifest) map[int]bool {
	bad := map[int]bool{}
	for _, d := range m.Defects {
		switch d.Kind {
		case BlankLine, InvalidLine, ArrayLine, NULPadding, TornLastLine:
			bad[d.Line] = true
		}
	}
	return bad
}

// isObject reports whether line is one valid JSON object.
func isObject(line []byte) bool {
	return json.Valid(line) && gjson.ParseBytes(line).IsObject()
}

// isPrompt reports whether rec is a human prompt (not a tool result, not a
// compaction summary).
func isPrompt(rec gjson.Result) bool {
	if rec.Get("type").Str != "user" || rec.Get("isCompactSummary").Bool() {
		return false
	}
	c := rec.Get("message.content")
	return c.Type == gjson.String || c.Get("0.type").Str != "tool_result"
}

// walk follows parentUuid from the last main-chain record with a uuid (the
// last record at all in a subagent file), the
// way Claude Code rebuilds a conversation, and returns the leaf uuid, the
// number of human prompts met and the number of records walked.
func walk(lines [][]byte) (leaf string, prompts, steps int) {
	byUUID := map[string]int{}
	last, lastAny := -1, -1
	for i, l := range lines {
		if !isObject(l) {
			continue
		}
		u := gjson.GetBytes(l, "uuid").Str
		if u == "" {
			continue
		}
		if _, ok := byUUID[u]; !ok {
			byUUID[u] = i
		}
		lastAny = i
		if !gjson.GetBytes(l, "isSidechain").Bool() {
			last = i
		}
	}
	if last < 0 { // a subagent file: every record is a sidechain record
		last = lastAny
	}
	if last < 0 {
		return "", 0, 0
	}
	leaf = gjson.GetBytes(lines[last], "uuid").Str
	for i := last; ; {
		rec := gjson.ParseBytes(lines[i])
		steps++
		if isPrompt(rec) {
			prompts++
		}
		p := rec.Get("parentUuid")
		j, ok := byUUID[p.Str]
		if p.Type != gjson.String || !ok || steps > len(lines) {
			return leaf, prompts, steps
		}
		i = j
	}
}

// pairViolation is one breach of the API rule that every tool_use is
// answered in the next user message and every result answers the previous
// assistant message.
type pairViolation struct {
	line int
	what string
	id   string
}

// checkPairs merges split assistant lines by message.id (per side: main
// chain and sidechains separately, in file order) and checks tool pairs.
// Progress, system, attachment and metadata records are ignored, as the
// loader drops them.
func checkPairs(lines [][]byte) []pairViolation {
	var out []pairViolation
	for _, side := range []bool{false, true} {
		pending := map[string]int{}
		cur := ""
		flush := func(ln int, why string) {
			for id := range pending {
				out = append(out, pairViolation{ln, why, id})
			}
			clear(pending)
		}
		for i, l := range lines {
			if !isObject(l) {
				continue
			}
			rec := gjson.ParseBytes(l)
			if rec.Get("isSidechain").Bool() != side {
				continue
			}
			switch rec.Get("type").Str {
			case "assistant":
				if id := rec.Get("message.id").Str; id != cur {
					flush(i+1, "tool_use unanswered before next assistant message")
					cur = id
				}
				rec.Get("message.content").ForEach(func(_, b gjson.Result) bool {
					if b.Get("type").Str == "tool_use" {
						pending[b.Get("id").Str] = i + 1
					}
					return true
				})
			case "user":
				if isPrompt(rec) || rec.Get("isCompactSummary").Bool() {
					flush(i+1, "tool_use unanswered before prompt")
					cur = ""
					continue
				}
				rec.Get("message.content").ForEach(func(_, b gjson.Result) bool {
					if b.Get("type").Str != "tool_result" {
						return true
					}
					id := b.Get("tool_use_id").Str
					if _, ok := pending[id]; !ok {
						out = append(out, pairViolation{i + 1, "tool_result without tool_use in previous message", id})
					}
					delete(pending, id)
					return true
				})
			}
		}
		flush(len(lines), "tool_use unanswered at end of file")
	}
	return out
}
