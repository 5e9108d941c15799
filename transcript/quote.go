package transcript

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s to dst as a JSON string, the way Claude Code's
// JSON.stringify writes it: quotes, backslashes and control characters
// escaped, everything else (non-ASCII included) kept as raw UTF-8, so a
// record ccm writes looks like one Claude Code wrote. Invalid UTF-8 is
// replaced by U+FFFD, as JSON requires valid text.
func AppendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// CountEscapedNewlines counts the "\n" escapes in a raw JSON value, which
// is the number of line breaks in the text it encodes, without decoding it.
func CountEscapedNewlines(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			if raw[i+1] == 'n' {
				n++
			}
			i++
		}
	}
	return n
}
