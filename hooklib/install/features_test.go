package install

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestSelectedLeavesFeaturesOut: --no-NAME drops exactly that feature's
// registrations, and one event never gets two ccm handlers.
func TestSelectedLeavesFeaturesOut(t *testing.T) {
	all, _ := Selected(nil)
	events := map[string]int{}
	for _, r := range all {
		events[r.Event]++
	}
	for _, e := range []string{"Stop", "PreCompact", "PostToolUse", "SessionStart"} {
		if events[e] != 1 {
			t.Errorf("%s registered %d times", e, events[e])
		}
	}
	some, _ := Selected([]string{"monitor", "cold-tasks"})
	for _, r := range some {
		if r.Event == "Stop" || r.Event == "PostToolUse" {
			t.Errorf("%s registered with the feature left out", r.Event)
		}
	}
	if len(some) != len(all)-2 {
		t.Errorf("%d registrations, want %d", len(some), len(all)-2)
	}
	if _, err := Selected([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "monitor, preserve, cold-tasks") {
		t.Errorf("unknown feature: %v", err)
	}
	if m := joinMatchers("Bash|Edit", "Edit|Read"); m != "Bash|Edit|Read" {
		t.Errorf("joined %q", m)
	}
	if m := joinMatchers("Bash", ""); m != "" {
		t.Errorf("joined with all: %q", m)
	}
}

// TestAutocompactEnvRoundTrip: setting the variable and removing it gives
// back the same bytes, whether env existed, held other keys, or held the
// variable already (its old value comes back).
func TestAutocompactEnvRoundTrip(t *testing.T) {
	for name, in := range map[string]string{
		"no-env":    "{\n  \"model\": \"opus\"\n}\n",
		"env-other": "{\"env\": {\"A\": \"1\"}, \"x\": 2}",
		"env-set":   "{\n\t\"env\": {\n\t\t\"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE\": \"95\"\n\t}\n}",
		"empty":     "{}",
	} {
		out, created, prev, err := SetEnv([]byte(in), AutocompactVar, "70")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v := gjson.GetBytes(out, "env."+AutocompactVar).String(); v != "70" || !gjson.ValidBytes(out) {
			t.Fatalf("%s: not set:\n%s", name, out)
		}
		again, c2, p2, _ := SetEnv(out, AutocompactVar, "70")
		if string(again) != string(out) || c2 != nil || p2 != "" {
			t.Errorf("%s: setting twice changed the file", name)
		}
		back, ok := UnsetEnv(out, AutocompactVar, created, prev)
		if !ok || string(back) != in {
			t.Errorf("%s: round trip gave\n%q\nwant\n%q", name, back, in)
		}
	}
}
