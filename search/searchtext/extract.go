// Package searchtext reads the searchable text of Claude Code transcript
// records: user prompts, assistant text, tool inputs and outputs, and the
// stored content of [CCM_CACHED] stubs, as JSON string pieces that a word
// index can hash without decoding them, or as decoded text to check and
// show.
package searchtext

import (
	"bytes"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/internal/textindex"
	"ccm/transcript"
)

// Record is what the extractor learned of one transcript line.
type Record struct {
	Kind uint8     // textindex.Kind* bits of the text it held
	Tool string    // the tool of its first tool call or tool output
	Time time.Time // its timestamp
	Cwd  string    // its working directory
}

// Extractor reads the searchable text of transcript records: user
// prompts, assistant text, tool inputs (every string of the input object)
// and tool outputs, with the stored content of [CCM_CACHED] stubs. It
// skips thinking, images, metadata records and injected (meta) text. It
// keeps the names of the tool calls it saw, so that a tool output is
// known by its tool's name: use one extractor per file, in line order.
type Extractor struct {
	// Resolve returns the stored content of a stub's key; nil or an error
	// leaves only the stub's own text searchable.
	Resolve func(key string) ([]byte, error)
	tools   map[string]string // tool_use id -> name, until its result
	order   []string
}

// maxPendingTools bounds the tool calls remembered while their results are
// awaited.
const maxPendingTools = 256

// Emit receives one piece of text of a record: the inside of a JSON
// string as written when escaped, decoded text otherwise.
type Emit func(kind uint8, text []byte, escaped bool)

var (
	recordKeys = []string{"type", "message", "isMeta", "isCompactSummary", "timestamp", "cwd"}
	blockKeys  = []string{"type", "text", "name", "id", "input", "tool_use_id", "content"}
	innerKeys  = []string{"type", "text"}
)

// Line extracts the text of one record (a line body). ok is false for a
// line that holds no searchable text.
func (x *Extractor) Line(line []byte, emit Emit) (rec Record, ok bool) {
	var m [6]gjson.Result
	s := rawjson.String(line)
	transcript.Members(s, recordKeys, m[:])
	typ := RawStr(m[0])
	if typ != "user" && typ != "assistant" {
		return rec, false
	}
	if m[2].Type == gjson.True || m[3].Type == gjson.True {
		return rec, false
	}
	rec.Time, _ = time.Parse(time.RFC3339Nano, RawStr(m[4]))
	rec.Cwd = RawStr(m[5])
	content := transcript.Lookup(m[1].Raw, "content")
	if content.Raw == "" {
		return rec, false
	}
	if content.Raw[0] == '"' {
		if typ == "user" {
			x.str(&rec, textindex.KindPrompt, content.Raw, emit)
		} else {
			x.str(&rec, textindex.KindReply, content.Raw, emit)
		}
		return rec, rec.Kind != 0
	}
	if content.Raw[0] != '[' {
		return rec, false
	}
	var bm [7]gjson.Result
	gjson.Parse(content.Raw).ForEach(func(_, b gjson.Result) bool {
		transcript.Members(b.Raw, blockKeys, bm[:])
		switch bt := RawStr(bm[0]); {
		case bt == "text" && typ == "user":
			x.str(&rec, textindex.KindPrompt, bm[1].Raw, emit)
		case bt == "text":
			x.str(&rec, textindex.KindReply, bm[1].Raw, emit)
		case bt == "tool_use":
			name := RawStr(bm[2])
			x.remember(RawStr(bm[3]), name)
			if rec.Tool == "" {
				rec.Tool = strings.Clone(name)
			}
			x.strings(&rec, textindex.KindInput, bm[4], emit)
		case bt == "tool_result":
			id := RawStr(bm[5])
			if rec.Tool == "" {
				rec.Tool = x.tools[id]
			}
			x.forget(id)
			c := bm[6]
			if c.Type == gjson.String {
				x.str(&rec, textindex.KindOutput, c.Raw, emit)
			} else if c.IsArray() {
				var im [2]gjson.Result
				gjson.Parse(c.Raw).ForEach(func(_, inner gjson.Result) bool {
					transcript.Members(inner.Raw, innerKeys, im[:])
					if RawStr(im[0]) == "text" {
						x.str(&rec, textindex.KindOutput, im[1].Raw, emit)
					}
					return true
				})
			}
		}
		return true
	})
	return rec, rec.Kind != 0
}

// RawStr is the text of a string member found by transcript.Members,
// which gives the raw value only: decoded when it holds escapes. It may
// point into the line's bytes.
func RawStr(r gjson.Result) string {
	if len(r.Raw) < 2 || r.Raw[0] != '"' {
		return ""
	}
	if strings.IndexByte(r.Raw, '\\') < 0 {
		return r.Raw[1 : len(r.Raw)-1]
	}
	return gjson.Parse(r.Raw).Str
}

// str emits a JSON string given raw (quotes included), and the stored
// content of any stub it holds.
func (x *Extractor) str(rec *Record, kind uint8, raw string, emit Emit) {
	if len(raw) < 2 || raw[0] != '"' {
		return
	}
	inner := rawjson.Bytes(raw[1 : len(raw)-1])
	if len(inner) == 0 {
		return
	}
	rec.Kind |= kind
	emit(kind, inner, true)
	if x.Resolve != nil && bytes.Contains(inner, []byte(stub.Start)) {
		for _, m := range stub.Find(gjson.Parse(raw).Str) {
			content, err := x.Resolve(string(m.Stub.Key))
			if err == nil && content != nil {
				decodeStored(content, func(text []byte, escaped bool) { emit(kind, text, escaped) })
			}
		}
	}
}

// strings emits every string value inside a JSON value (a tool's input).
func (x *Extractor) strings(rec *Record, kind uint8, v gjson.Result, emit Emit) {
	raw := v.Raw
	if raw == "" {
		return
	}
	switch raw[0] {
	case '"':
		x.str(rec, kind, raw, emit)
	case '{', '[':
		walkStrings(raw, func(s string) { x.str(rec, kind, s, emit) })
	}
}

// walkStrings calls fn with every string value (quotes included) inside
// a JSON object or array, never decoding one: object keys are skipped.
func walkStrings(raw string, fn func(s string)) {
	var walk func(b []byte, i int)
	walk = func(b []byte, i int) {
		if i < 0 || i >= len(b) {
			return
		}
		each := func(it rawjson.Item) bool {
			walk(b, it.Value)
			return true
		}
		switch b[i] {
		case '"':
			if end := rawjson.StringEnd(b, i+1); end > 0 {
				fn(raw[i:end])
			}
		case '{':
			rawjson.Members(b, i, each)
		case '[':
			rawjson.Elements(b, i, each)
		}
	}
	walk(rawjson.Bytes(raw), 0)
}

// skipKeys are the members of stored JSON whose values are not text to
// search: block types, image data, signatures.
var skipKeys = map[string]bool{"type": true, "media_type": true, "data": true, "signature": true}

// decodeStored emits the text of stored content: a JSON string's text,
// the strings of a JSON array or object (a block list), or the bytes as
// they are. Block types, image data and signatures are left out.
func decodeStored(content []byte, emit func(text []byte, escaped bool)) {
	t := bytes.TrimLeft(content, " \t\r\n")
	if len(t) > 0 && (t[0] == '"' || t[0] == '[' || t[0] == '{') && gjson.ValidBytes(t) {
		var walk func(v gjson.Result)
		walk = func(v gjson.Result) {
			switch {
			case v.Type == gjson.String && len(v.Raw) >= 2:
				emit(rawjson.Bytes(v.Raw[1:len(v.Raw)-1]), true)
			case v.IsObject():
				v.ForEach(func(k, e gjson.Result) bool {
					if !skipKeys[k.Str] {
						walk(e)
					}
					return true
				})
			case v.IsArray():
				v.ForEach(func(_, e gjson.Result) bool { walk(e); return true })
			}
		}
		walk(gjson.ParseBytes(t))
		return
	}
	emit(content, false)
}

func (x *Extractor) remember(id, name string) {
	if id == "" || name == "" {
		return
	}
	if x.tools == nil {
		x.tools = map[string]string{}
	}
	if len(x.order) >= maxPendingTools {
		delete(x.tools, x.order[0])
		x.order = x.order[1:]
	}
	id = strings.Clone(id)
	x.tools[id] = strings.Clone(name)
	x.order = append(x.order, id)
}

func (x *Extractor) forget(id string) { delete(x.tools, id) }

// Pending lists the tool calls still awaiting their results, as
// id=name pairs, so that indexing a grown file later picks up where it
// stopped.
func (x *Extractor) Pending() []string {
	var out []string
	for _, id := range x.order {
		if n, ok := x.tools[id]; ok {
			out = append(out, id+"="+n)
		}
	}
	return out
}

// Restore brings back the pending tool calls Pending listed.
func (x *Extractor) Restore(pending []string) {
	for _, p := range pending {
		if id, name, ok := strings.Cut(p, "="); ok {
			x.remember(id, name)
		}
	}
}

// Text is the decoded text of a record, its pieces joined by newlines,
// with the kinds each piece had: what a query's check and snippets read.
func (x *Extractor) Text(line []byte) (text string, rec Record) {
	var b []byte
	rec, _ = x.Line(line, func(kind uint8, t []byte, escaped bool) {
		if len(b) > 0 {
			b = append(b, '\n')
		}
		if escaped {
			b = AppendUnescaped(b, t)
		} else {
			b = append(b, t...)
		}
	})
	return string(b), rec
}

// StoredText is the text of stored content as a reader wants it: a JSON
// string's text, the text of a JSON block list or object's strings one
// per line, or the bytes as they are.
func StoredText(content []byte) []byte {
	var out []byte
	n := 0
	decodeStored(content, func(text []byte, escaped bool) {
		if n > 0 {
			out = append(out, '\n')
		}
		n++
		if escaped {
			out = AppendUnescaped(out, text)
		} else {
			out = append(out, text...)
		}
	})
	return out
}

// AppendUnescaped appends the decoded text of the inside of a JSON
// string; a malformed escape (the scanner passed the line as valid, so
// none is expected) leaves its text out.
func AppendUnescaped(dst, raw []byte) []byte {
	if out, ok := rawjson.AppendUnquoted(dst, rawjson.String(raw)); ok {
		return out
	}
	return dst
}
