package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"ccm/transcript"
)

// selEnv is a config dir for the selector tests: session A in project
// folder -w-plain, session B in -w-linked, a symlink to a folder
// elsewhere, session C in the project folder of the working directory
// (the test changes into it), and two sessions whose ids share the prefix
// dddddddd. Every transcript resumes cleanly and was last written three
// days ago.
type selEnv struct {
	cfg, projects, outside string
	a, b, c                string // transcripts
}

const (
	selA = "aaaaaaaa-1111-4111-8111-111111111111"
	selB = "bbbbbbbb-2222-4222-8222-222222222222"
	selC = "cccccccc-3333-4333-8333-333333333333"
)

func newSelEnv(t *testing.T) selEnv {
	t.Helper()
	root := t.TempDir()
	e := selEnv{cfg: filepath.Join(root, "claude")}
	e.projects = filepath.Join(e.cfg, "projects")
	t.Setenv("CLAUDE_CONFIG_DIR", e.cfg)
	t.Setenv("CCM_HOME", filepath.Join(root, "home"))
	t.Setenv("CCM_CACHE_DIR", filepath.Join(root, "store"))
	work := filepath.Join(root, "work", "proj")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	cwd, _ := os.Getwd()
	elsewhere := filepath.Join(root, "elsewhere")
	e.outside = filepath.Join(root, "outside")
	e.a = filepath.Join(e.projects, "-w-plain", selA+".jsonl")
	e.b = filepath.Join(e.projects, "-w-linked", selB+".jsonl")
	e.c = filepath.Join(e.projects, transcript.ProjectDirName(cwd), selC+".jsonl")
	for path, id := range map[string]string{
		e.a: selA, filepath.Join(elsewhere, selB+".jsonl"): selB, e.c: selC,
		filepath.Join(e.projects, "-w-plain", "dddddddd-0000-4000-8000-000000000000.jsonl"): "dddddddd-0000-4000-8000-000000000000",
		filepath.Join(e.projects, "-w-plain", "dddddddd-1111-4111-8111-111111111111.jsonl"): "dddddddd-1111-4111-8111-111111111111",
		filepath.Join(e.outside, "loose.jsonl"):                                             "loose",
	} {
		writeSession(t, path, id)
	}
	if err := os.Symlink(elsewhere, filepath.Join(e.projects, "-w-linked")); err != nil {
		t.Fatal(err)
	}
	return e
}

// writeSession writes a two-record transcript that resumes cleanly, last
// written three days ago.
func writeSession(t *testing.T, path, id string) {
	t.Helper()
	data := `{"parentUuid":null,"isSidechain":false,"type":"user","cwd":"/w/p","sessionId":"` + id + `","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2025-01-01T00:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"type":"assistant","cwd":"/w/p","sessionId":"` + id + `","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":2}},"uuid":"a1","timestamp":"2025-01-01T00:00:01.000Z"}
`
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// sessionCommands are the commands that take sessions, with the flags
// that keep a run from changing anything.
var sessionCommands = []struct {
	name string
	args []string
}{
	{"purge", []string{"--dry-run", "--no-tokens"}},
	{"restore", []string{"--dry-run"}},
	{"check", nil},
	{"analyze", []string{"--no-tokens"}},
	{"audit", nil},
	{"report", []string{"-o", "-", "--no-purge"}},
	{"sessions", nil},
	{"archive", []string{"--dry-run"}},
	{"export", []string{"--dry-run", "-o", filepath.Join(os.TempDir(), "ccm-test-export-dry-run")}},
}

// otherCommands take no sessions: every selector is refused, in the same
// words.
var otherCommands = []struct {
	name string
	args []string
}{
	{"du", nil},
	{"clean", []string{"--dry-run"}},
	{"maintain", []string{"--dry-run"}},
	{"prune", []string{"--dry-run", "--max-size-mb", "1000"}},
}

// selectors are the ways of selecting sessions, as a command line gives
// them.
func (e selEnv) selectors() []struct {
	name string
	args []string
} {
	return []struct {
		name string
		args []string
	}{
		{"FILE", []string{e.a}},
		{"DIR", []string{filepath.Join(e.projects, "-w-linked")}},
		{"--current", []string{"--current"}},
		{"--session", []string{"--session", selB[:8]}},
		{"--project", []string{"--project", "-w-linked"}},
		{"--all", []string{"--all"}},
		{"--older-than", []string{"--older-than", "1d"}},
		{"--min-size", []string{"--min-size", "100B"}},
		{"--recursive", []string{"--recursive", e.outside}},
	}
}

// refusal is the one line a refused selector gets, with the command's
// name made neutral, so that the refusals of different commands compare.
func refusal(cmd, stderr string) string {
	s := strings.ReplaceAll(strings.TrimSpace(stderr), "ccm "+cmd+" --help", "ccm CMD --help")
	return strings.Replace(s, "ccm: "+cmd+" takes", "ccm: CMD takes", 1)
}

// Every command that takes sessions accepts every selector, and every
// other command refuses each in the same words (exit 2); unarchive takes
// the selectors of archived sessions and refuses the rest the same way.
func TestSelectorMatrix(t *testing.T) {
	e := newSelEnv(t)
	for _, c := range sessionCommands {
		for _, s := range e.selectors() {
			args := append(append([]string{c.name}, c.args...), s.args...)
			code, _, errs := runCCM("", args...)
			if code != 0 && code != exitFindings || strings.Contains(errs, "ccm: ") {
				t.Errorf("%s %s: exit %d, %q; want it accepted", c.name, s.name, code, errs)
			}
		}
	}
	refused := map[string]string{} // selector: the refusal of the first command
	for _, c := range otherCommands {
		for _, s := range e.selectors() {
			args := append(append([]string{c.name}, c.args...), s.args...)
			code, _, errs := runCCM("", args...)
			got := refusal(c.name, errs)
			if code != exitError || strings.Count(got, "\n") > 0 {
				t.Errorf("%s %s: exit %d, %q; want one line, exit 2", c.name, s.name, code, errs)
			}
			if want, ok := refused[s.name]; !ok {
				refused[s.name] = got
			} else if got != want {
				t.Errorf("%s refuses %s as %q, %s as %q", c.name, s.name, got, otherCommands[0].name, want)
			}
		}
	}
	if !strings.Contains(refused["--session"], "flag provided but not defined: -session") || !strings.Contains(refused["FILE"], "takes no arguments") {
		t.Errorf("refusals: %v", refused)
	}
}

// unarchive takes archived sessions by id (whole or by prefix),
// --session, --project, --all, --older-than and --min-size; it refuses
// a path (no id) and --current and --recursive (sessions in place) as
// the other commands refuse what they do not take.
func TestUnarchiveSelectors(t *testing.T) {
	// A session named gets its line; a selector chose a batch, whose
	// summary counts what it chose.
	named := `^restored ` + selB + ` \(1 files\) to /w/p\n`
	batch := func(n int) string {
		return fmt.Sprintf(`^unarchive: restored %d of %d sessions \(%d files, 0 stored contents\) from .*; 0 failed\n`, n, n, n)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{selB[:8]}, named}, {[]string{"--session", selB[:8]}, named},
		{[]string{"--project", "-w-linked"}, batch(1)}, {[]string{"--all"}, batch(5)},
		{[]string{"--older-than", "1d"}, batch(5)}, {[]string{"--min-size", "100B"}, batch(5)},
	} {
		newSelEnv(t)
		if code, out, errs := runCCM("", "archive", "--all", "--older-than", "1d"); code != 0 || !strings.Contains(out, "archived 5 of 5 sessions") {
			t.Fatalf("archive --all --older-than 1d: exit %d: %s %s", code, out, errs)
		}
		code, out, errs := runCCM("", append([]string{"unarchive"}, c.args...)...)
		if code != 0 || !regexp.MustCompile(c.want).MatchString(out) {
			t.Errorf("unarchive %v: exit %d: %s %s; want %s", c.args, code, out, errs, c.want)
		}
	}
	e := newSelEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{e.a}, `^ccm: invalid session id ".*"$`},
		{[]string{"--current"}, `^ccm: flag provided but not defined: -current \(see ccm unarchive --help\)$`},
		{[]string{"--recursive"}, `^ccm: flag provided but not defined: -recursive \(see ccm unarchive --help\)$`},
		{nil, `^ccm: give session ids, --session ID, --project P or --all \(see ccm unarchive --help\)$`},
	} {
		code, _, errs := runCCM("", append([]string{"unarchive"}, c.args...)...)
		if code != exitError || !regexp.MustCompile(c.want).MatchString(strings.TrimSpace(errs)) {
			t.Errorf("unarchive %v: exit %d, %q; want %s", c.args, code, errs, c.want)
		}
	}
}

// A wrong selection is refused in the same words by every command that
// takes sessions, exit 2: two selectors that say what to work on, a
// duration without a unit, a prefix that starts several ids (listed) or
// none, a project that matches no folder, a folder outside projects/
// without --recursive, and nothing at all where a command needs a
// selection.
func TestSelectorRefusals(t *testing.T) {
	e := newSelEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--all", e.a}, `^ccm: give FILE\|DIR\.\.\., --current, --session or --all, not several of them$`},
		{[]string{"--current", "--session", selA}, `^ccm: give FILE\|DIR\.\.\., --current, --session or --all, not several of them$`},
		{[]string{"--older-than", "7"}, `^ccm: --older-than: "7" has no unit \(say 90m, 36h or 7d: ms, s, m, h, d or w\)$`},
		{[]string{"--older-than", "7x"}, `^ccm: --older-than: "7x": unknown unit "x" \(say 90m, 36h or 7d: ms, s, m, h, d or w\)$`},
		{[]string{"--min-size", "lots"}, `^ccm: --min-size: "lots" is not a size \(try 10MB\)$`},
		{[]string{"--session", "dddddddd"}, `^ccm: session id dddddddd is ambiguous: it starts 2 sessions' ids \(give more of it\)\n  dddddddd-0000-4000-8000-000000000000  -w-plain\n  dddddddd-1111-4111-8111-111111111111  -w-plain$`},
		{[]string{"--session", "eeeeeeee"}, `^ccm: no session found with id eeeeeeee under .*/projects$`},
		{[]string{"--session", "../x"}, `^ccm: invalid session id "../x"$`},
		{[]string{"--project", "-nowhere"}, `^ccm: no project matches -nowhere under .*/projects \(ccm sessions lists the projects\)$`},
		{[]string{e.outside}, `^ccm: .*/outside: not inside .*/projects; ccm walks only the config dir's transcripts \(--recursive walks this folder too\)$`},
	} {
		for _, cmd := range sessionCommands {
			code, out, errs := runCCM("", append(append([]string{cmd.name}, cmd.args...), c.args...)...)
			if code != exitError || !regexp.MustCompile(c.want).MatchString(strings.TrimSpace(errs)) || out != "" {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want %s", cmd.name, c.args, code, out, errs, c.want)
			}
		}
	}
	for _, cmd := range sessionCommands {
		code, _, errs := runCCM("", append([]string{cmd.name}, cmd.args...)...)
		switch cmd.name {
		case "check", "sessions", "archive":
			if code != 0 {
				t.Errorf("%s without a selector: exit %d, %s; want every session", cmd.name, code, errs)
			}
		default:
			want := "ccm: no sessions given (pass FILE|DIR..., --current, --session ID, --project P or --all)\n"
			if code != exitError || errs != want {
				t.Errorf("%s without a selector: exit %d, %q; want %q", cmd.name, code, errs, want)
			}
		}
	}
}

// A symlinked project folder is seen by every command: its session is
// listed, counted, checked, analyzed, audited, purged, restored, archived
// and reported like the others, and --project and --session find it.
func TestSymlinkedProjectSeenByEveryCommand(t *testing.T) {
	newSelEnv(t)
	for _, sel := range [][]string{{"--all"}, {"--project", "-w-linked"}, {"--session", selB[:8]}} {
		for _, c := range [][]string{
			{"--json", "purge", "--dry-run", "--no-tokens"},
			{"--json", "restore", "--dry-run"},
			{"--json", "check"},
			{"--json", "analyze", "--no-tokens"},
			{"--json", "audit"},
			{"--json", "sessions"},
			{"--json", "archive", "--dry-run", "--older-than", "1d"},
			{"report", "-o", "-", "--no-purge"},
		} {
			args := append(append([]string{}, c...), sel...)
			code, out, errs := runCCM("", args...)
			if code != 0 || !strings.Contains(out, selB) {
				t.Errorf("%v: exit %d, %s; its output does not name the linked session %s\n%.300s", args, code, errs, selB, out)
			}
			if strings.HasPrefix(out, "{") || strings.HasPrefix(out, "[") {
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("%v: not JSON: %v", args, err)
				}
			}
			if sel[0] != "--all" && strings.Contains(out, selA) {
				t.Errorf("%v: names session %s of another project", args, selA)
			}
		}
	}
	code, out, errs := runCCM("", "--json", "du")
	if code != 0 || !strings.Contains(out, `"folder": "-w-linked"`) {
		t.Errorf("du: exit %d, %s: the linked folder is not counted\n%s", code, errs, out)
	}
	// A walk of projects/ goes through the link as --all does.
	code, out, errs = runCCM("", "check", filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "projects"))
	if code != 0 || !strings.Contains(out, "5 transcripts: 0 errors, 0 warnings") {
		t.Errorf("check projects/: exit %d, %s %s", code, out, errs)
	}
}

// The selectors are described once: every command that takes sessions
// ends its help with selectorHelp and declares the same flags, and
// docs/sessions.md holds the same text and names every flag.
func TestSelectorHelpInDocs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "sessions.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```\n"+selectorHelp+"\n```") {
		t.Error("docs/sessions.md does not hold selectorHelp as --help prints it")
	}
	app := newApp(nil, nil, nil)
	for _, c := range sessionCommands {
		cmd := app.Command(c.name)
		if !strings.Contains(cmd.Description, selectorHelp) {
			t.Errorf("ccm %s --help does not end with the selectors' help", c.name)
		}
		for _, f := range selectorFlags() {
			name := f.Names()[0]
			if !cmd.HasName(c.name) || !hasFlag(cmd, name) {
				t.Errorf("ccm %s has no --%s", c.name, name)
			}
			if !strings.Contains(string(page), "`--"+name) {
				t.Errorf("docs/sessions.md does not name --%s", name)
			}
		}
	}
}

func hasFlag(cmd interface{ VisibleFlags() []cli.Flag }, name string) bool {
	for _, f := range cmd.VisibleFlags() {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
