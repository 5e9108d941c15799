package transcript

import "ccm/internal/jsonscan"

// ValidStructure reports whether b is one JSON value whose structure is
// valid: objects, arrays, keys, colons, commas, literals and numbers as
// ValidJSON checks them, and every string closed; but the inside of a
// string is not checked (its escapes, its control characters). So it
// refuses what a cut-off write leaves (a torn line) and any broken
// structure, and accepts a string that JSON forbids only for what it
// holds, which no client writes. It is about four times as fast as
// ValidJSON on transcript lines, which are mostly long strings: it jumps
// from quote to quote (jsonscan.StringEnd) instead of checking each byte.
//
// The hooks' passes over the end of a transcript (Reader.Structural) use
// it: what they take from a record is found by walking its structure.
func ValidStructure(b []byte) bool {
	i := skipWS(b, 0)
	i, ok := structValue(b, i, 0)
	if !ok {
		return false
	}
	return skipWS(b, i) == len(b)
}

func structString(b []byte, i int) (int, bool) {
	e := jsonscan.StringEnd(b, i)
	return e, e >= 0
}

func structValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return structString(b, i+1)
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		return structObject(b, i+1, depth+1)
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		return structArray(b, i+1, depth+1)
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

func structObject(b []byte, i, depth int) (int, bool) {
	i = skipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = structString(b, i+1); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = skipWS(b, i+1)
		if i, ok = structValue(b, i, depth); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func structArray(b []byte, i, depth int) (int, bool) {
	i = skipWS(b, i)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = structValue(b, i, depth); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}
