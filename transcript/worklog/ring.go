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
// boundary. The result is always a copy, never a view into s.
func Cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return strings.Clone(s)
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.Clone(s[:n]) + "..."
}

// FirstLine is s's first non-blank line.
func FirstLine(s string) string {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
