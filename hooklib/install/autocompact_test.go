package install

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestContextFeatures: the context features add Stop, PreCompact and the
// tools that finish work to PostToolUse, each with one ccm handler per
// event, and --no-NAME leaves exactly that out.
func TestContextFeatures(t *testing.T) {
	count := func(regs []Registration) map[string]string {
		m := map[string]string{}
		for _, r := range regs {
			if _, dup := m[r.Event]; dup {
				t.Errorf("%s registered twice", r.Event)
			}
			m[r.Event] = r.Matcher
		}
		return m
	}
	all := count(RegistrationsFor(Features{}))
	if m, ok := all["PostToolUse"]; !ok || m != "^(Bash|Glob|Grep|Read|WebFetch|Edit|Write|MultiEdit|NotebookEdit|TaskUpdate|TodoWrite|mcp__.*)$" {
		t.Errorf("PostToolUse matcher %q", m)
	}
	for _, e := range []string{"Stop", "PreCompact", "SessionStart", "UserPromptSubmit"} {
		if _, ok := all[e]; !ok {
			t.Errorf("%s not registered", e)
		}
	}
	// Stop stays while the tool memory needs it; PreCompact goes with
	// --no-preserve.
	some := count(RegistrationsFor(Features{NoMonitor: true, NoPreserve: true}))
	if _, ok := some["Stop"]; !ok {
		t.Error("Stop left out while the tool memory needs it")
	}
	if _, ok := some["PreCompact"]; ok {
		t.Error("PreCompact with --no-preserve")
	}
	none := count(RegistrationsFor(Features{NoMonitor: true, NoMemory: true, NoCapture: true}))
	if _, ok := none["Stop"]; ok {
		t.Error("Stop without the monitor or the memory")
	}
	if m := none["PostToolUse"]; m != "^(Bash|Edit|Write|MultiEdit|NotebookEdit|TaskUpdate|TodoWrite)$" {
		t.Errorf("cold tasks alone: PostToolUse matcher %q", m)
	}
	if m := count(RegistrationsFor(Features{NoCapture: true, NoColdTasks: true}))["PostToolUse"]; m != MemoryPostMatcher {
		t.Errorf("memory alone: PostToolUse matcher %q", m)
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
