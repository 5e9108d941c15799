package hooklib

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression tests for agentihooks' defects (docs/earlier-tools.md) that
// concern the runtime, refresh and effort policy. The preprocessor's are
// in package compress.

func TestToolEventsUseHookSpecificOutput(t *testing.T) {
	s := newSandbox(t)
	out := s.run(PreToolUse, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Task","tool_input":{"model":"claude-opus-4-1"}}`)
	if !strings.HasPrefix(out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"Subagent`) {
		t.Errorf("PreToolUse output: %q", out)
	}
	checkAccepted(t, PreToolUse, out)
}

func TestNoBoxFraming(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	body := strings.Repeat("Keep the rule short. ", 17) // about 370 characters
	s.write("claude/rules/r.md", body)
	ctx := s.prompt("s")
	// Framing is one header line and one label: under 100 characters on a
	// 370-character rule (the earlier box made it 1,490).
	if over := len(ctx) - len(strings.TrimSpace(body)); over > 100 || strings.ContainsAny(ctx, "╔═╗║╠╣╚╝") {
		t.Errorf("framing adds %d characters: %q", over, ctx)
	}
}

func TestIntervalZero(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "0"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "0"
	s.write("claude/rules/r.md", "rule")
	for i := 0; i < 3; i++ {
		if ctx := s.prompt("s"); ctx != "" {
			t.Errorf("interval 0 injected %q", ctx)
		}
	}
	if st, _ := NewStore(s.home()).Load("s"); st.Prompts != 3 {
		t.Errorf("counter %d", st.Prompts)
	}
}

func TestCRLFAndBOMFrontmatter(t *testing.T) {
	for name, data := range map[string]string{
		"crlf":     "---\r\npriority: 1\r\ndescription: d\r\n---\r\nbody line\r\nsecond\r\n",
		"bom":      "\uFEFF---\npriority: 1\n---\nbody line\nsecond\n",
		"bom+crlf": "\uFEFF---\r\npriority: 1\r\n---\r\nbody line\r\nsecond\r\n",
	} {
		fm := ParseFrontmatter(data)
		if fm.Priority != 1 || strings.TrimSpace(fm.Body) != "body line\nsecond" || fm.Problem != "" {
			t.Errorf("%s: %+v", name, fm)
		}
	}
}

func TestNonIntegerPriorityReported(t *testing.T) {
	s := newSandbox(t)
	s.write("claude/rules/r.md", "---\npriority: high\n---\nbody\n")
	var warns []string
	rules := LoadRules(filepath.Join(s.claude, "rules"), "", func(w string) { warns = append(warns, w) })
	if len(rules) != 1 || rules[0].Priority != DefaultPriority || len(warns) != 1 || !strings.Contains(warns[0], `priority "high" is not an integer`) {
		t.Errorf("rules %+v warns %v", rules, warns)
	}
}

func TestOversizeRuleSkipped(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	s.write("claude/rules/a-big.md", "---\npriority: 1\n---\n"+strings.Repeat("big rule text. ", 640)) // ~9.6k
	s.write("claude/rules/b.md", "---\npriority: 2\n---\nsmall rule B")
	s.write("claude/rules/c.md", "---\npriority: 3\n---\nsmall rule C")
	s.write("claude/rules/d.md", "---\npriority: 4\n---\nsmall rule D")
	ctx := s.prompt("s")
	for _, want := range []string{"small rule B", "small rule C", "small rule D", "[1 rule(s) omitted — size limit reached]"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("missing %q in %q", want, ctx)
		}
	}
	if strings.Contains(ctx, "big rule text") {
		t.Error("the oversize rule went in")
	}
}

func TestSameContentOnce(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	s.write("claude/rules/shared.md", "Always run the tests.\n")
	s.write("project/.claude/rules/shared.md", "Always run the tests.  \n\n\n")
	s.write("project/.claude/rules/other.md", "Project only.\n")
	ctx := s.prompt("s")
	if strings.Count(ctx, "Always run the tests.") != 1 || !strings.Contains(ctx, "Project only.") {
		t.Errorf("%q", ctx)
	}
}

func TestScopedRulesLeftToClaudeCode(t *testing.T) {
	fm := ParseFrontmatter("---\npaths:\n  - \"src/**/*.go\"\npriority: 2\n---\nGo rule\n")
	if !fm.Scoped || fm.Priority != 2 {
		t.Errorf("%+v", fm)
	}
	if ParseFrontmatter("---\npaths: src/**\n---\nx").Scoped != true {
		t.Error("inline paths not scoped")
	}
	s := newSandbox(t)
	s.write("claude/rules/go.md", "---\npaths: \"**/*.go\"\n---\nGo rule\n")
	if r := LoadRules(filepath.Join(s.claude, "rules"), "", func(string) {}); len(r) != 0 {
		t.Errorf("scoped rule loaded: %+v", r)
	}
}

// TestPayloadWithinCap fills both parts far past the cap: the whole
// output stays within 10,000 characters, CLAUDE.md is cut at a section
// boundary, and the marker says where the full text is.
func TestPayloadWithinCap(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_MAX_CHARS"] = "16000" // the later upstream default
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	for _, n := range []string{"a", "b", "c"} {
		s.write("claude/rules/"+n+".md", strings.Repeat("rule "+n+" text\n", 150))
	}
	var md strings.Builder
	for _, sec := range []string{"Response Style", "Delegation", "CI", "Testing", "Release"} {
		md.WriteString("## " + sec + "\n\n" + strings.Repeat(sec+" guidance line.\n", 60) + "\n")
	}
	path := s.write("claude/CLAUDE.md", md.String())
	out := s.run(UserPromptSubmit, `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"x","cwd":"`+s.project+`"}`)
	if n := Size16(out); n > MaxPayload {
		t.Fatalf("output is %d characters", n)
	}
	checkAccepted(t, UserPromptSubmit, out)
	ctx := contextOf(t, out)
	if !strings.Contains(ctx, CutMarker([]string{path})) {
		t.Fatalf("no cut marker naming %s", path)
	}
	// The cut is at a section boundary: the text before the marker ends a
	// section's last line, and no section is half there.
	before := ctx[:strings.Index(ctx, "[... cut")]
	for _, sec := range []string{"Response Style", "Delegation", "CI", "Testing", "Release"} {
		if n := strings.Count(before, sec+" guidance line."); n != 0 && n != 60 {
			t.Errorf("section %s cut in the middle (%d of 60 lines)", sec, n)
		}
	}
}

func TestFirstSectionTooBigIsCutAtParagraph(t *testing.T) {
	files := []MemoryFile{{Path: "/x/CLAUDE.md", Text: "# One\n\n" + strings.Repeat("para para para.\n\n", 200)}}
	text := RenderMemory("H", files, 500, func(s string) string { return s })
	if Size(text) > 500 || !strings.HasSuffix(text, CutMarker([]string{"/x/CLAUDE.md"})) || !strings.Contains(text, "para para para.\n\n"+CutMarker(nil)[:8]) {
		t.Errorf("%q", text)
	}
}

func TestMemoryFilesOrderAndDedupe(t *testing.T) {
	s := newSandbox(t)
	s.write("claude/CLAUDE.md", "global")
	s.write("project/CLAUDE.md", "project root")
	s.write("project/.claude/CLAUDE.md", "global") // same content as the global one
	s.write("project/CLAUDE.local.md", "local")
	var got []string
	for _, f := range MemoryFiles(s.claude, s.project) {
		got = append(got, f.Text)
	}
	if strings.Join(got, ",") != "global,project root,local" {
		t.Errorf("%v", got)
	}
	// A project dir that is the home dir holds the global file again.
	if n := len(MemoryFiles(s.claude, filepath.Dir(s.claude))); n != 1 {
		t.Errorf("duplicate path: %d files", n)
	}
}

func TestBadRuleInputs(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.write("claude/rules/bin.md", "abc\x00\x01def")
	s.write("claude/rules/broken.md", "---\npriority: 1\nno closing line\nbody\n")
	s.write("claude/rules/ok.md", "fine rule")
	// A rules "dir" that is a file cannot be read: logged, not fatal.
	s.write("project/.claude/rules", "not a dir")
	s.env["CONTEXT_REFRESH_ABBREV_FILE"] = s.write("abbr.json", "{not json")
	ctx := s.prompt("s")
	if !strings.Contains(ctx, "fine rule") || strings.Contains(ctx, "def") {
		t.Errorf("%q", ctx)
	}
	if !strings.Contains(ctx, "no closing line") {
		t.Error("a rule with unclosed frontmatter was dropped instead of injected as text")
	}
	log := s.log()
	for _, want := range []string{"bin.md: binary content", "broken.md: frontmatter never closes", "rules dir:", "abbr.json: not valid JSON"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestCompressionCacheKeepsTokenizerOff(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.write("claude/rules/r.md", "The configuration of the production database is important.")
	first := s.prompt("s")
	ents, _ := os.ReadDir(compressCacheDir(s.home()))
	if len(ents) != 1 || !strings.Contains(first, "prod db") {
		t.Fatalf("cache entries %d, context %q", len(ents), first)
	}
	// A cached text is used as it is: prove it by planting a marker.
	os.WriteFile(filepath.Join(compressCacheDir(s.home()), ents[0].Name()), []byte("FROM-CACHE"), 0o600)
	if ctx := s.prompt("s"); !strings.Contains(ctx, "FROM-CACHE") {
		t.Errorf("cache not used: %q", ctx)
	}
}

func TestScopeAll(t *testing.T) {
	s := newSandbox(t)
	s.env["DEFAULT_EFFORT"] = "low"
	start := `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`
	plain := contextOf(t, s.run(SessionStart, start))
	s.env["CONTEXT_COMPRESSION_SCOPE"] = "all"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "standard"
	compressed := contextOf(t, s.run(SessionStart, start))
	if plain != effortLow || compressed == plain || len(compressed) >= len(plain) {
		t.Errorf("refresh scope %q, all scope %q", plain, compressed)
	}
}

// The "rules_refresh" acceptance cases, for `ccm refresh`: a one-shot
// refresh on the next prompt of live sessions.
func TestForcedRefresh(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "100"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "100"
	s.write("claude/rules/r.md", "RULE")
	s.write("claude/CLAUDE.md", "GLOBAL-MD")
	s.write("project/CLAUDE.local.md", "LOCAL-MD")
	ctx := context.Background()
	st := NewStore(s.home())
	s.prompt("alive")
	s.prompt("other")
	s.prompt("ended")
	s.run(SessionEnd, `{"session_id":"ended","hook_event_name":"SessionEnd"}`)
	// Only live sessions are marked; an empty list means all of them.
	marked, err := MarkRefresh(ctx, st, nil, s.now)
	if err != nil || strings.Join(marked, ",") != "alive,other" && strings.Join(marked, ",") != "other,alive" {
		t.Fatalf("marked %v %v", marked, err)
	}
	// A pending session gets the payload once, rules and CLAUDE.md with
	// CLAUDE.local.md after it.
	got := s.prompt("alive")
	for _, want := range []string{"requested with ccm refresh", "RULE", "GLOBAL-MD", "LOCAL-MD"} {
		if !strings.Contains(got, want) {
			t.Errorf("forced refresh lacks %q: %q", want, got)
		}
	}
	if strings.Index(got, "LOCAL-MD") < strings.Index(got, "GLOBAL-MD") {
		t.Error("CLAUDE.local.md before CLAUDE.md")
	}
	if again := s.prompt("alive"); again != "" {
		t.Errorf("delivered twice: %q", again)
	}
	// A session that was not marked is skipped.
	if m, _ := MarkRefresh(ctx, st, []string{"unknown"}, s.now); len(m) != 0 {
		t.Errorf("unknown session marked: %v", m)
	}
	// A mark older than a day has expired.
	s.now = s.now.Add(25 * time.Hour)
	if got := s.prompt("other"); got != "" {
		t.Errorf("expired mark delivered: %q", got)
	}
	// Missing CLAUDE.md and rules dir are tolerated.
	s2 := newSandbox(t)
	s2.prompt("x")
	MarkRefresh(ctx, NewStore(s2.home()), nil, s2.now)
	if got := s2.prompt("x"); got != "" {
		t.Errorf("nothing to inject, got %q", got)
	}
	// A refresh switched off still honours an explicit request.
	s.env["CONTEXT_REFRESH_ENABLED"] = "false"
	MarkRefresh(ctx, st, []string{"alive"}, s.now)
	if got := s.prompt("alive"); !strings.Contains(got, "RULE") {
		t.Errorf("disabled refresh ignored ccm refresh: %q", got)
	}
}

// TestNoDuplicateInjection: what is already in the payload, or already
// in the replayed transcript, is not injected again: a rule whose content
// equals CLAUDE.md goes in once per payload, and SessionStart on resume adds
// no second copy of the effort text.
func TestNoDuplicateInjection(t *testing.T) {
	s := newSandbox(t)
	s.env["CONTEXT_REFRESH_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_CLAUDE_MD_INTERVAL"] = "1"
	s.env["CONTEXT_REFRESH_COMPRESSION"] = "off"
	s.write("claude/rules/copy.md", "Answer in English.\n")
	s.write("project/.claude/rules/copy.md", "Answer in English.\n")
	s.write("claude/CLAUDE.md", "Keep answers short.\n")
	s.write("project/.claude/CLAUDE.md", "Keep answers short.\n")
	ctx := s.prompt("s")
	if strings.Count(ctx, "Answer in English.") != 1 || strings.Count(ctx, "Keep answers short.") != 1 {
		t.Errorf("%q", ctx)
	}
	if out := s.run(SessionStart, `{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`); out != "" {
		t.Errorf("resume re-injected %q", out)
	}
}
