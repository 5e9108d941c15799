package synth

import (
	"unicode/utf8"

	"ccm/internal/rawjson"
)

const hexDigits = "0123456789abcdef"

// The generator builds records by appending bytes; every piece of free
// text goes through appendString, which is rawjson's escaper (the one ccm
// itself writes records with).

// appendString appends s to dst as a quoted JSON string.
func appendString[S ~string | ~[]byte](dst []byte, s S) []byte { return rawjson.Append(dst, s) }

// appendEscaped appends the JSON-escaped body of s (no surrounding quotes).
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte { return rawjson.AppendEscaped(dst, s) }

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
