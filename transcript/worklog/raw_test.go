package worklog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestRawBashFailed: telling a failed command from its raw JSON output
// agrees with bashFailed on the decoded text whenever it claims to be
// sure, on escapes that could fool a byte search (an escaped backslash
// before "nFAIL", \u escapes spelling the signal).
func TestRawBashFailed(t *testing.T) {
	texts := []string{
		"", "ok", "FAIL", "FAILED x", "ok\nFAIL\tpkg", "ok\\nFAIL not a newline", "a\\\\\nFAIL",
		"nFAIL", "x\r\nFAIL", "Exit code 1", "exit code 1", "Exit code", "\tExit code 2\n",
		"ok\n--- FAIL: TestX", "PASS\nok ccm 0.1s", "\x1b[31mFAIL\x1b[0m", "ANSI \x1b[1m ok",
		"quote \"FAIL\" here", "\\\\\\nFAIL", strings.Repeat("x", 300<<10) + "\nFAIL",
		"héllo\nFAIL ü", "FAI", "\nFAI\nL",
	}
	sure := 0
	for _, text := range texts {
		raw, err := json.Marshal(text)
		if err != nil {
			t.Fatal(err)
		}
		block := `{"type":"tool_result","content":` + string(raw) + `}`
		c := gjson.Get(block, "content")
		c.Str = "" // as Lookup gives it: raw only
		got, ok := rawBashFailed(c)
		want := bashFailed(text)
		if ok {
			sure++
			if got != want {
				t.Errorf("%.40q: raw says failed=%v, decoded %v", text, got, want)
			}
		}
	}
	// Plain outputs, the usual case, must be told without decoding.
	if sure < len(texts)-4 {
		t.Errorf("sure of %d of %d texts; want all but the \\u-escaped and the long one", sure, len(texts))
	}
	// A \u escape can spell the signal: the raw form must not claim to know.
	if _, ok := rawBashFailed(gjson.Get(`{"c":"\u0045xit code 1"}`, "c")); ok {
		t.Error(`"\u0045xit code 1": raw form claimed to be sure`)
	}
}

// TestHasRaw: the two-step search is bytes.Contains.
func TestHasRaw(t *testing.T) {
	for _, s := range []string{`{"interrupted":true}`, `{"interrupted": true}`, `"interrupted":tru`, `x:true "interrupted":false`, `:true"interrupted":true`} {
		if got, want := hasRaw([]byte(s), `"interrupted":true`, 13), strings.Contains(s, `"interrupted":true`); got != want {
			t.Errorf("%s: %v, want %v", s, got, want)
		}
	}
}
