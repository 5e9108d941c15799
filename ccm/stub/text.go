package stub

import (
	"bytes"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
	"ccm/transcript"
)

// A purge stores the raw JSON value it cuts out of a line (RawValueType).
// Read as text, that value is what `ccm cache get` writes and what a
// stub's "lines:" counts: a JSON string is the text it encodes, and an
// array of text blocks (a tool result's content, a Task's answer) is the
// texts of its blocks, one after the other, a newline between two. Any
// other value reads as its JSON.

// TextBlocks returns the text members of raw when raw is a JSON array
// whose elements are all text blocks ({"type":"text","text":"..."}), and
// ok false for anything else.
func TextBlocks(raw []byte) (texts []gjson.Result, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	ok = true
	gjson.ParseBytes(raw).ForEach(func(_, el gjson.Result) bool {
		t := el.Get("text")
		if el.Get("type").Str != "text" || t.Type != gjson.String {
			ok = false
			return false
		}
		texts = append(texts, t)
		return true
	})
	return texts, ok && len(texts) > 0
}

// ValueLines is the number of lines in the text of a stored JSON value,
// as `ccm cache get` pages it (a last line without its newline counts),
// counted on the escapes without decoding the value.
func ValueLines(raw []byte) int {
	raw = bytes.TrimSpace(raw)
	texts, ok := TextBlocks(raw)
	if !ok {
		return stringLines(raw)
	}
	n := 0
	for i, t := range texts {
		n += transcript.CountEscapedNewlines(rawjson.Bytes(t.Raw))
		if i == len(texts)-1 && len(t.Raw) > 2 && !endsWithNewline(rawjson.Bytes(t.Raw)) {
			n++
		}
	}
	return n + len(texts) - 1
}

// stringLines counts the lines of a raw JSON string's text; for any other
// value, the newline escapes in it.
func stringLines(raw []byte) int {
	n := transcript.CountEscapedNewlines(raw)
	if len(raw) > 2 && raw[0] == '"' && !endsWithNewline(raw) {
		n++
	}
	return n
}

// endsWithNewline reports whether a raw JSON string's text ends with a
// newline: its last escape before the closing quote is \n, after an even
// run of backslashes.
func endsWithNewline(raw []byte) bool {
	body, ok := bytes.CutSuffix(raw, []byte(`\n"`))
	if !ok {
		return false
	}
	k := 0
	for k < len(body) && body[len(body)-1-k] == '\\' {
		k++
	}
	return k%2 == 0
}

// ValueText is the text of a stored JSON value (see above), ok false when
// the value is neither a string nor an array of text blocks, or a string
// that does not decode.
func ValueText(raw []byte) (text []byte, ok bool) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '"' {
		return rawjson.Unquote(rawjson.String(trimmed))
	}
	texts, ok := TextBlocks(trimmed)
	if !ok {
		return nil, false
	}
	for i, t := range texts {
		if i > 0 {
			text = append(text, '\n')
		}
		text = append(text, t.Str...)
	}
	return text, true
}
