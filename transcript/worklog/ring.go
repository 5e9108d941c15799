package worklog

import "strings"

// Ring keeps the last N strings added, without a repeat of any it holds
// (a repeated one moves to the end).
type Ring struct {
	N     int
	Items []string
}

// Add appends s (trimmed; empty strings are ignored).
func (r *Ring) Add(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	for i, it := range r.Items {
		if it == s {
			r.Items = append(r.Items[:i], r.Items[i+1:]...)
			break
		}
	}
	r.Items = append(r.Items, s)
	if len(r.Items) > r.N {
		r.Items = r.Items[len(r.Items)-r.N:]
	}
}

// Cut folds white space and shortens s to about n bytes, on a rune
// boundary. The result is always a copy, never a view into s. Only the
// fields that reach the first n+1 bytes of the folded text are folded: a
// long prompt or output cut to 300 bytes was split whole.
func Cut(s string, n int) string {
	b := make([]byte, 0, min(len(s), n+1))
	for f := range strings.FieldsSeq(s) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, f...)
		if len(b) > n {
			break
		}
	}
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && b[n]&0xC0 == 0x80 {
		n--
	}
	return string(b[:n]) + "..."
}

// FirstLine is s's first non-blank line.
func FirstLine(s string) string {
	for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
