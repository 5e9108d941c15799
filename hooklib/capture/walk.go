package capture

import (
	"strings"
	"unsafe"

	"ccm/internal/rawjson"
)

// Member returns the raw JSON value of key in the JSON object raw, and its
// offset in raw. raw must be valid JSON (hook input is validated when it is
// read). Unlike a gjson lookup it neither decodes nor walks the strings it
// passes byte by byte: it jumps from quote to quote, so finding a member
// after a 16 MB output costs a memchr, not a decode.
func Member(raw, key string) (val string, off int, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", 0, false
	}
	i++
	for {
		i = skipWS(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return "", 0, false // '}' or malformed
		}
		end := stringEnd(raw, i)
		k := raw[i+1 : end-1]
		if strings.IndexByte(k, '\\') >= 0 {
			if b, ok := rawjson.Unquote(raw[i:end]); ok {
				k = string(b)
			}
		}
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return "", 0, false
		}
		i = skipWS(raw, i+1)
		vend := valueEnd(raw, i)
		if k == key {
			return raw[i:vend], i, true
		}
		i = skipWS(raw, vend)
		if i >= len(raw) || raw[i] != ',' {
			return "", 0, false
		}
		i++
	}
}

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at s[i], or len(s) when it does not close.
func stringEnd(s string, i int) int { return orEnd(len(s), rawjson.StringEnd(bytesOf(s), i+1)) }

// valueEnd returns the index after the value that starts at s[i], or
// len(s) when it does not end.
func valueEnd(s string, i int) int { return orEnd(len(s), rawjson.ValueEnd(bytesOf(s), i)) }

// orEnd is end, or n when jsonscan found no end (-1).
func orEnd(n, end int) int {
	if end < 0 {
		return n
	}
	return end
}

// bytesOf views s as bytes without copying, for jsonscan, which only
// reads them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
