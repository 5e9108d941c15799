package rewrite

import "testing"

// TestIsTempName: only the exact names fsutil.CreateTemp gives count as
// stale temps.
func TestIsTempName(t *testing.T) {
	const prefix = ".s.jsonl.ccm-tmp-"
	for name, want := range map[string]bool{
		".s.jsonl.ccm-tmp-1":          true,
		".s.jsonl.ccm-tmp-4294967295": true,
		".s.jsonl.ccm-tmp-":           false,
		".s.jsonl.ccm-tmp--1":         false,
		".s.jsonl.ccm-tmp-1 ":         false,
		".s.jsonl.ccm-tmp-١":          false, // a non-ASCII digit
		".s.jsonl.ccm-tmp":            false,
		"x.s.jsonl.ccm-tmp-1":         false,
	} {
		if got := isTempName(name, prefix); got != want {
			t.Errorf("isTempName(%q) = %v, want %v", name, got, want)
		}
	}
}
