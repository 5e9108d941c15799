package capture

import "strings"

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
			if b, ok := unquote(raw[i:end]); ok {
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
// starts at s[i].
func stringEnd(s string, i int) int {
	j := i + 1
	for {
		q := strings.IndexByte(s[j:], '"')
		if q < 0 {
			return len(s)
		}
		j += q
		bs := 0
		for k := j - 1; k > i && s[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the index after the value that starts at s[i].
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = stringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[j])) {
		j++
	}
	return j
}
