package hooklib

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The acceptance cases of the earlier context refresh suite
// (test_context_refresh.py at 7a85cc1, 21 cases), numbered as there.

func TestRefreshState(t *testing.T) {
	st := &Store{Dir: t.TempDir(), Wait: time.Second}
	ctx, now := context.Background(), time.Now()
	// 1. A fresh state is all zeros.
	if s, _ := st.Load("new"); s.Prompts != 0 || s.LastRules != 0 || s.LastClaudeMD != 0 {
		t.Errorf("1: %+v", s)
	}
	// 2. Turn 5 reads back.
	st.Update(ctx, "s", now, func(s *State) error { s.Prompts = 5; return nil })
	if s, _ := st.Load("s"); s.Prompts != 5 {
		t.Errorf("2: %+v", s)
	}
	// 3. Sessions are separate.
	st.Update(ctx, "x", now, func(s *State) error { s.Prompts = 10; return nil })
	st.Update(ctx, "y", now, func(s *State) error { s.Prompts = 3; return nil })
	if x, _ := st.Load("x"); x.Prompts != 10 {
		t.Error("3: x")
	}
	if y, _ := st.Load("y"); y.Prompts != 3 {
		t.Error("3: y")
	}
	// 19. Clearing resets to zeros; 20. clearing a nonexistent session and
	// 21. an empty id are safe.
	st.Remove(ctx, "s")
	if s, _ := st.Load("s"); s.Prompts != 0 {
		t.Error("19")
	}
	if st.Remove(ctx, "never-seen") != nil || st.Remove(ctx, "") != nil {
		t.Error("20/21")
	}
}

func TestLoadRulesCases(t *testing.T) {
	s := newSandbox(t)
	var warns []string
	warn := func(w string) { warns = append(warns, w) }
	dir := filepath.Join(s.claude, "rules")
	// 4. Two plain files.
	s.write("claude/rules/a.md", "rule A")
	s.write("claude/rules/b.md", "rule B\n")
	// 5. Frontmatter is stripped; 6. no frontmatter passes through.
	s.write("claude/rules/c.md", "---\ndescription: x\nalwaysApply: true\n---\nactual rule\n")
	// 8. Empty files and 9. README.md are skipped.
	s.write("claude/rules/empty.md", "")
	s.write("claude/rules/README.md", "read me")
	s.write("claude/rules/notes.txt", "not markdown")
	rules := LoadRules(dir, "", warn)
	var got []string
	for _, r := range rules {
		got = append(got, r.Name+"="+r.Body)
	}
	if strings.Join(got, ";") != "a.md=rule A;b.md=rule B;c.md=actual rule" {
		t.Errorf("4-9: %v", got)
	}
	// 7. A missing dir gives nothing, silently.
	if r := LoadRules(filepath.Join(s.claude, "nope"), "", warn); r != nil || len(warns) != 0 {
		t.Errorf("7: %v %v", r, warns)
	}
}

func TestProjectRulesIncluded(t *testing.T) {
	for _, include := range []string{"true", "false"} {
		s := newSandbox(t)
		s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
		s.env["CONTEXT_REFRESH_INCLUDE_PROJECT"] = include
		s.write("claude/rules/global.md", "global rule")
		s.write("project/.claude/rules/local.md", "project rule")
		ctx := s.prompt("s")
		// 10. Included when include_project is true; 11. not when false.
		if got := strings.Contains(ctx, "project rule"); got != (include == "true") {
			t.Errorf("include=%s: %q", include, ctx)
		}
	}
}

func TestBudgetOmits(t *testing.T) {
	// 12. 20 rules of 1000 characters with MAX_CHARS=3000.
	var rules []Rule
	for i := 0; i < 20; i++ {
		rules = append(rules, Rule{Name: fmt.Sprintf("r%02d.md", i), Label: fmt.Sprintf("r%02d.md", i), Body: strings.Repeat("x", 1000)})
	}
	text, in, om := RenderRules("header", rules, 3000)
	if !strings.Contains(text, "omitted") || len(text) >= 4000 || in+om != 20 || Size(text) > 3000 {
		t.Errorf("12: %d chars, %d in, %d omitted", len(text), in, om)
	}
}

func TestCadence(t *testing.T) {
	cases := []struct {
		interval, prompts int
		want              []int // turns with an injection
	}{
		{20, 19, nil},         // 13
		{5, 5, []int{5}},      // 14
		{5, 10, []int{5, 10}}, // 15
		{0, 10, nil},          // interval 0 disables (agentihooks divided by it)
		{3, 7, []int{3, 6}},
	}
	for _, c := range cases {
		s := newSandbox(t)
		s.env["CONTEXT_REFRESH_INTERVAL"] = fmt.Sprint(c.interval)
		s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "0"
		s.write("claude/rules/r.md", "a rule")
		var got []int
		for i := 1; i <= c.prompts; i++ {
			if ctx := s.prompt("s"); ctx != "" {
				got = append(got, i)
				if !strings.Contains(ctx, fmt.Sprintf("turn %d,", i)) {
					t.Errorf("injection at %d titled %q", i, ctx[:40])
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("interval %d, %d prompts: injections at %v, want %v", c.interval, c.prompts, got, c.want)
		}
		// The counter advances even when nothing is due (agentihooks
		// crashed before saving it).
		if st, _ := NewStore(s.home()).Load("s"); st.Prompts != c.prompts {
			t.Errorf("interval %d: counter %d", c.interval, st.Prompts)
		}
	}
}

func TestRefreshNoops(t *testing.T) {
	// 16. Disabled: no injection.
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_ENABLED"] = "false"
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.write("claude/rules/r.md", "a rule")
	if ctx := s.prompt("s"); ctx != "" {
		t.Errorf("16: %q", ctx)
	}
	// 17. An empty session id is a no-op.
	s = newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.write("claude/rules/r.md", "a rule")
	if out := s.run(UserPromptSubmit, `{"session_id":"","hook_event_name":"UserPromptSubmit","prompt":"x"}`); out != "" {
		t.Errorf("17: %q", out)
	}
	// 18. An empty rules dir never injects.
	s = newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "0"
	os.MkdirAll(filepath.Join(s.claude, "rules"), 0o700)
	for i := 0; i < 3; i++ {
		if ctx := s.prompt("s"); ctx != "" {
			t.Errorf("18: %q", ctx)
		}
	}
}

func TestBothDueOnePayload(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "2"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "4"
	s.write("claude/rules/r.md", "RULE-TEXT")
	s.write("claude/CLAUDE.md", "MEMORY-TEXT")
	var outs []string
	for i := 0; i < 4; i++ {
		outs = append(outs, s.prompt("s"))
	}
	if outs[0] != "" || outs[2] != "" || !strings.Contains(outs[1], "RULE-TEXT") || strings.Contains(outs[1], "MEMORY-TEXT") {
		t.Errorf("turns 1-3: %q", outs[:3])
	}
	if !strings.Contains(outs[3], "RULE-TEXT") || !strings.Contains(outs[3], "MEMORY-TEXT") {
		t.Errorf("turn 4 lacks a part: %q", outs[3])
	}
}

// Claude Code submits a background subagent's completion notice as a
// prompt (seen with the real 2.1.330 client); it is not the user's and does
// not advance the counter, nor do prompts inside subagents.
func TestNotificationsAreNotPrompts(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.write("claude/rules/r.md", "a rule")
	for _, in := range []string{
		`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"<task-notification>\n<task-id>a1</task-id>"}`,
		`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"Say hi.","agent_id":"a1","agent_type":"Explore"}`,
	} {
		if out := s.run(UserPromptSubmit, in); out != "" {
			t.Errorf("%s: %q", in, out)
		}
	}
	if st, _ := NewStore(s.home()).Load("s"); st.Prompts != 0 {
		t.Errorf("counter %d", st.Prompts)
	}
}

// TestForcedRefreshRestartsCadence: the last-refresh turns the state
// records are what the cadence counts from (agentihooks wrote a
// last_rules_turn nothing read), so a forced refresh is not followed by a
// periodic copy a few prompts later.
func TestForcedRefreshRestartsCadence(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "5"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "0"
	s.write("claude/rules/r.md", "a rule")
	var got []int
	for i := 1; i <= 12; i++ {
		if i == 3 {
			MarkRefresh(context.Background(), NewStore(s.home()), []string{"s"}, s.now)
		}
		if s.prompt("s") != "" {
			got = append(got, i)
		}
	}
	if fmt.Sprint(got) != "[3 8]" {
		t.Errorf("refreshes at %v, want [3 8]", got)
	}
}

// TestMarksAndPromptsRace: marks and prompts from many writers at once
// go through the same lock, so neither a mark nor a prompt is lost.
func TestMarksAndPromptsRace(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	now := time.Now()
	NewStore(dir).Update(ctx, "s", now, func(*State) error { return nil })
	done := make(chan bool)
	for w := 0; w < 8; w++ {
		go func(w int) {
			st := NewStore(dir) // its own descriptors, as separate processes have
			for i := 0; i < 20; i++ {
				if w == 0 {
					MarkRefresh(ctx, st, nil, now)
				} else {
					st.Update(ctx, "s", now, func(s *State) error { s.Prompts++; return nil })
				}
			}
			done <- true
		}(w)
	}
	for w := 0; w < 8; w++ {
		<-done
	}
	st, _ := NewStore(dir).Load("s")
	if st.Prompts != 7*20 || st.ForceRefresh.IsZero() {
		t.Errorf("prompts %d, mark %v", st.Prompts, st.ForceRefresh)
	}
}
