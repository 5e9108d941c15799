// Crossing values: this file crosses JSON values in raw bytes without decoding or
// validating them: it finds where a value or a string ends, jumping from
// quote to quote with bytes.IndexByte, so crossing a 16 MB tool output
// costs a memchr, not a decode. The member walker (walk.go) crosses
// values with it. Input is trusted to be JSON (validated elsewhere); on input that
// is not, the results are only bounded, never a panic.

package rawjson

import "bytes"

// ValueEnd returns the end of the value that starts at b[i], or -1 when
// it does not end (or i is past b, or no value starts there). Strings are
// crossed by StringEnd; only the bytes between them are looked at one by
// one.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i+1)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = StringEnd(b, i+1); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i // a number or a literal
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !IsSpace(b[i]) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// StringEnd returns the index after the closing quote of the string whose
// opening quote is at b[i-1] (i is the first byte inside it), or -1 when
// it does not close. A quote preceded by an odd number of backslashes is
// escaped.
func StringEnd(b []byte, i int) int {
	open := i - 1
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i - 1
		for k > open && b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
