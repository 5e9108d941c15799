package transcript

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"

	"ccm/internal/rawjson"
)

// The index walks records as raw spans instead of decoding them, and
// validates them in the same pass: each value is skipped by the validator
// (eight bytes at a time inside strings), and only the short fields the
// index keeps are decoded. gjson's ForEach unescapes every string it
// passes, so walking a record with it decoded every tool output in full:
// ccm check ran at about 200 MB/s on the 200 MB benchmark file, against
// about 570 MB/s of CPU now (a separate validation pass cost 40 % more).
//
// This is the validator's walk, for lines not yet known to be JSON: it
// checks every byte it crosses and lets the caller walk into a value
// instead of crossing it. Everything that reads a line the index has
// validated walks with rawjson's walker (Members, Elements), which trusts
// its input and only jumps from quote to quote.

// walker walks one line and validates it on the way: every value it
// skips goes through the validator, and object and array check the
// structure around the members. After the walk, bad tells whether the
// line was valid JSON, so the index reads each byte once.
type walker struct {
	b   []byte
	bad bool
}

// value validates and skips the value at i, returning its end.
func (w *walker) value(i int) int {
	end, ok := validValue(w.b, i, 0, true)
	if !ok {
		w.bad = true
		return len(w.b)
	}
	return end
}

// object walks the object that starts at i. For each member it calls fn
// with the raw key (without quotes) and the index where the value starts;
// fn returns the index just past the value, by skipping it (w.value) or by
// walking into it. object returns the index just past the closing brace.
func (w *walker) object(i int, fn func(key []byte, vs int) int) int {
	b := w.b
	if i >= len(b) || b[i] != '{' {
		return w.value(i)
	}
	i = rawjson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for !w.bad {
		if i >= len(b) || b[i] != '"' {
			break
		}
		ke, ok := validString(b, i+1)
		if !ok {
			break
		}
		key := b[i+1 : ke-1]
		i = rawjson.SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			break
		}
		i = fn(key, rawjson.SkipSpace(b, i+1))
		i = rawjson.SkipSpace(b, i)
		if i >= len(b) {
			break
		}
		switch b[i] {
		case ',':
			i = rawjson.SkipSpace(b, i+1)
			continue
		case '}':
			return i + 1
		}
		break
	}
	w.bad = true
	return len(b)
}

// array walks the array that starts at i, calling fn with the start of
// each element; fn returns the index just past it.
func (w *walker) array(i int, fn func(vs int) int) int {
	b := w.b
	if i >= len(b) || b[i] != '[' {
		return w.value(i)
	}
	i = rawjson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for !w.bad {
		i = rawjson.SkipSpace(b, fn(i))
		if i >= len(b) {
			break
		}
		switch b[i] {
		case ',':
			i = rawjson.SkipSpace(b, i+1)
			continue
		case ']':
			return i + 1
		}
		break
	}
	w.bad = true
	return len(b)
}

// str decodes a raw JSON string value to a new string ("" for anything
// else). Strings without escapes, the usual case for ids, are copied as is.
func str(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	return clone(gjson.ParseBytes(raw).Str)
}

// strView is str without the copy: a view into raw when the string has no
// escape, valid only as long as raw's buffer is.
func strView(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return rawjson.String(inner)
	}
	return clone(gjson.ParseBytes(raw).Str)
}

// isTrue reports a raw true.
func isTrue(raw []byte) bool { return string(raw) == "true" }

// rawInt reads a raw JSON integer (0 for anything else).
func rawInt(raw []byte) int64 {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return int64(gjson.ParseBytes(raw).Int())
	}
	return n
}

// rawEmptyString reports the raw string "".
func rawEmptyString(raw []byte) bool { return string(raw) == `""` }

// rawBlankString reports a raw string of white space only: spaces and the
// escapes \n, \r, \t (and their \u forms), as Claude Code writes them.
func rawBlankString(raw []byte) bool {
	if len(raw) < 3 || raw[0] != '"' {
		return false
	}
	in := raw[1 : len(raw)-1]
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case ' ', '\t':
		case '\\':
			if i+1 >= len(in) {
				return false
			}
			switch in[i+1] {
			case 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(in) {
					return false
				}
				switch string(in[i+2 : i+6]) {
				case "0020", "000a", "000A", "000d", "000D", "0009":
					i += 5
				default:
					return false
				}
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}
