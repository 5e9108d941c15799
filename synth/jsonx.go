package synth

import "unicode/utf8"

// This file holds the small JSON string escaper the generator uses instead of
// encoding/json: records are built by appending bytes, and every piece of free
// text goes through appendString. The output matches what JavaScript's
// JSON.stringify (and so Claude Code) writes for valid UTF-8: '"' and '\\'
// escaped, control characters as \n, \t, \r, \b, \f or \u00XX, everything else
// (non-ASCII letters, emoji, U+2028) kept as raw UTF-8.

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

// appendString appends s to dst as a quoted JSON string.
func appendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped appends the JSON-escaped body of s (no surrounding quotes).
// Invalid UTF-8 is replaced by U+FFFD so that the output is always valid JSON,
// as JSON.stringify would never see such bytes.
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = reserve(dst, len(s)+len(s)/8+2)
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
		i += size
	}
	return append(dst, s[start:]...)
}

// cutUTF8 returns the largest n <= max such that s[:n] ends on a rune boundary.
func cutUTF8(s []byte, max int) int {
	if len(s) <= max {
		return len(s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// reserve returns b with room for at least n more bytes, doubling the
// capacity when it must grow. append alone grows large slices by about
// 1.25x, which copies multi-MB buffers many times while they reach the size
// of the largest record.
func reserve(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}
