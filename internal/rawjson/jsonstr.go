// Writing strings: this file writes JSON strings the way JavaScript's JSON.stringify,
// and so Claude Code, writes them: '"' and '\\' escaped, control
// characters as \n, \t, \r, \b, \f or \u00XX, everything else (non-ASCII
// letters, emoji, U+2028) kept as raw UTF-8. Records ccm writes (stubs,
// repaired records, generated transcripts) then look like the ones Claude
// Code wrote, and bytes are never re-escaped. Invalid UTF-8 becomes U+FFFD,
// so the output is always valid JSON.

package rawjson

import (
	"slices"
	"unicode/utf8"
)

// needsEscape marks the bytes that cannot appear raw inside a JSON string.
var needsEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

const hexDigits = "0123456789abcdef"

// Append appends s to dst as a quoted JSON string.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends the JSON-escaped body of s (no surrounding quotes).
// Invalid UTF-8 is replaced by U+FFFD so that the output is always valid JSON,
// as JSON.stringify would never see such bytes.
func AppendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	return appendEscaped(dst, s, false)
}

// AppendLineSafe is Append that also escapes U+2028 and U+2029, the two
// characters that end a line in JavaScript source though not in JSON: for
// text a reader may splice into a script or count by lines (what hooks
// print to Claude Code).
func AppendLineSafe[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, true)
	return append(dst, '"')
}

func appendEscaped[S ~string | ~[]byte](dst []byte, s S, lineSafe bool) []byte {
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !needsEscape[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune([]byte(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		if lineSafe && (r == 0x2028 || r == 0x2029) {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
