package transcript

import (
	"encoding/binary"
	"math/bits"

	"ccm/internal/rawjson"
)

// ValidJSON reports whether b is exactly one valid JSON value (RFC 8259),
// surrounded by optional whitespace. It agrees with encoding/json.Valid
// (the fuzz test holds it to that) but skips the inside of strings eight
// bytes at a time, because transcript lines are mostly long strings:
// tool outputs and file contents.
func ValidJSON(b []byte) bool { return validWhole(b, true) }

// validWhole reports whether b is one JSON value with optional whitespace
// around it; strict also checks the inside of every string (ValidJSON),
// else only that it is closed (ValidStructure).
func validWhole(b []byte, strict bool) bool {
	i := rawjson.SkipSpace(b, 0)
	i, ok := validValue(b, i, 0, strict)
	if !ok {
		return false
	}
	return rawjson.SkipSpace(b, i) == len(b)
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 10000

// validValue checks the value at b[i] and returns the index after it.
// strict checks the inside of its strings; otherwise a string is crossed
// quote to quote (rawjson.StringEnd) and only its end is required.
func validValue(b []byte, i, depth int, strict bool) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return checkString(b, i+1, strict)
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		return validObject(b, i+1, depth+1, strict)
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		return validArray(b, i+1, depth+1, strict)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(b, i)
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// checkString is validString when strict, else only the string's end.
func checkString(b []byte, i int, strict bool) (int, bool) {
	if strict {
		return validString(b, i)
	}
	e := rawjson.StringEnd(b, i)
	return e, e >= 0
}

func validObject(b []byte, i, depth int, strict bool) (int, bool) {
	i = rawjson.SkipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = checkString(b, i+1, strict); !ok {
			return i, false
		}
		i = rawjson.SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = rawjson.SkipSpace(b, i+1)
		if i, ok = validValue(b, i, depth, strict); !ok {
			return i, false
		}
		i = rawjson.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = rawjson.SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func validArray(b []byte, i, depth int, strict bool) (int, bool) {
	i = rawjson.SkipSpace(b, i)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = validValue(b, i, depth, strict); !ok {
			return i, false
		}
		i = rawjson.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = rawjson.SkipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

const (
	lsb    = 0x0101010101010101
	msb    = 0x8080808080808080
	quotes = '"' * lsb
	bslash = '\\' * lsb
	ctl    = 0x20 * lsb
)

// specialMask has the high bit set in every byte of w that is a quote, a
// backslash or a control character (< 0x20), and may have false positives
// only above a true special byte, which the byte loop then sorts out.
func specialMask(w uint64) uint64 {
	q := w ^ quotes
	s := w ^ bslash
	return ((q-lsb)&^q | (s-lsb)&^s | (w-ctl)&^w) & msb
}

// validString validates a string whose opening quote precedes i and
// returns the index after its closing quote.
func validString(b []byte, i int) (int, bool) {
	for {
		for len(b)-i >= 8 {
			m := specialMask(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			return i, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 5
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}
