package rawjson

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a raw JSON string (quotes included) into bytes. gjson
// decodes strings one character at a time and then the caller copies the
// result again; a captured output is up to 16 MB, so this copies the runs
// between escapes whole, into one buffer. ok is false for a malformed
// string.
func Unquote(raw string) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return AppendUnquoted(make([]byte, 0, len(raw)-2), raw[1:len(raw)-1])
}

// AppendUnquoted appends the decoded text of s, the inside of a JSON
// string (its quotes left out), to out; ok is false, and nil returned,
// for a malformed escape.
func AppendUnquoted(out []byte, s string) ([]byte, bool) {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			return append(out, s...), true
		}
		out = append(out, s[:i]...)
		if i+1 >= len(s) {
			return nil, false
		}
		c := s[i+1]
		s = s[i+2:]
		switch c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			r, n := hex4(s)
			if n == 0 {
				return nil, false
			}
			s = s[n:]
			if utf16.IsSurrogate(r) {
				r2, n2 := rune(-1), 0
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2, n2 = hex4(s[2:])
				}
				if d := utf16.DecodeRune(r, r2); n2 > 0 && d != utf8.RuneError {
					r, s = d, s[2+n2:]
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, false
		}
	}
}

func hex4(s string) (rune, int) {
	if len(s) < 4 {
		return 0, 0
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, 0
		}
		r = r<<4 | rune(c)
	}
	return r, 4
}
