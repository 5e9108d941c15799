package search

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// redactKey names a set of redaction patterns, so that an index built
// under other patterns is rebuilt.
func redactKey(res []*regexp.Regexp) string {
	if len(res) == 0 {
		return ""
	}
	h := sha256.New()
	for _, re := range res {
		h.Write([]byte(re.String()))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// redactBytes blanks what the patterns match (with spaces, so that the
// words around stay apart). It writes into text.
func redactBytes(text []byte, res []*regexp.Regexp) []byte {
	for _, re := range res {
		for _, m := range re.FindAllIndex(text, -1) {
			for i := m[0]; i < m[1]; i++ {
				text[i] = ' '
			}
		}
	}
	return text
}

// RedactString is redactBytes for text that is shown (snippets, pages).
func RedactString(text string, res []*regexp.Regexp) string {
	for _, re := range res {
		text = re.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat("▒", min(len([]rune(m)), 12)) })
	}
	return text
}

// ParseRedact compiles redaction patterns, one per line (blank lines
// skipped).
func ParseRedact(spec string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, line := range strings.Split(spec, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}
