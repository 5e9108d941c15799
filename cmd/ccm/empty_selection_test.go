package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// emptyWant is what each command that takes sessions says when its
// selectors chose none: its own summary with nothing in it, or "no
// sessions match" where it has no summary. sessions in a pipe prints its
// rows only, and none.
var emptyWant = map[string]string{
	"purge":    `^would purge 0 of \d+ files \(0 unchanged, \d+ skipped, 0 failed\)`,
	"restore":  `^would restore 0 of \d+ files \(0 unchanged, \d+ skipped, 0 failed\)`,
	"check":    `^0 sessions: 0 errors, 0 warnings$`,
	"analyze":  `^no sessions match`,
	"audit":    `^no sessions match`,
	"report":   `(?s)^no sessions match|<html`,
	"sessions": `^$`,
	"archive":  `^archive: would archive 0 sessions, 0 B`,
	"export":   `^export: would export 0 sessions, 0 B`,
}

// TestEmptySelection holds one rule for every command that takes
// sessions (docs/cli.md): selectors that chose no session (--all where
// there is none, --project, --older-than or --min-size leaving out every
// one, a session named and narrowed out) are not an error. The command
// says so on stdout, --json gives its usual document with nothing in it,
// nothing goes to stderr, and the exit status is 0. A session id or a
// project that names nothing stays an error (TestSelectorRefusals).
func TestEmptySelection(t *testing.T) {
	for _, c := range sessionCommands {
		if _, ok := emptyWant[c.name]; !ok {
			t.Errorf("ccm %s takes sessions and is not held to the rule here", c.name)
		}
	}
	run := func(t *testing.T, wantOut string, args []string) {
		t.Helper()
		code, out, errs := runCCM("", args...)
		want := regexp.MustCompile(wantOut)
		if code != 0 || errs != "" || !want.MatchString(strings.TrimSpace(out)) {
			t.Errorf("%v: exit %d, stderr %q, stdout %.200q; want exit 0 and %s", args, code, errs, out, want)
		}
		code, out, errs = runCCM("", append([]string{"--json"}, args...)...)
		var v any
		if code != 0 || errs != "" || json.Unmarshal([]byte(out), &v) != nil || strings.Contains(out, "null") {
			t.Errorf("--json %v: exit %d, stderr %q, stdout %.200q; want exit 0 and one document", args, code, errs, out)
		}
	}
	t.Run("narrowed", func(t *testing.T) {
		newSelEnv(t) // every session written three days ago
		for _, sel := range [][]string{
			{"--older-than", "20d"},
			{"--all", "--min-size", "1GB"},
			{"--project", "-w-plain", "--older-than", "20d"},
			{"--session", selA[:8], "--older-than", "20d"},
		} {
			for _, c := range sessionCommands {
				if c.name == "report" && sel[0] != "--session" {
					continue // report --all has a page of its own
				}
				run(t, emptyWant[c.name], append(append([]string{c.name}, c.args...), sel...))
			}
		}
	})
	t.Run("no session", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "claude")
		if err := os.Mkdir(cfg, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CLAUDE_CONFIG_DIR", cfg)
		t.Setenv("CCM_HOME", filepath.Join(cfg, "ccm"))
		t.Setenv("CCM_CACHE_DIR", "")
		for _, c := range sessionCommands {
			if c.name == "report" {
				continue
			}
			run(t, emptyWant[c.name], append(append([]string{c.name}, c.args...), "--all"))
		}
		// For real too: nothing to do writes nothing (no store, no lock).
		for _, args := range [][]string{{"purge", "--all"}, {"restore", "--all"}, {"restore", "--backup", "--all"}} {
			if code, out, errs := runCCM("", args...); code != 0 || errs != "" || !strings.Contains(out, " 0 of 0 files ") {
				t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
			}
		}
		out := filepath.Join(t.TempDir(), "bundles")
		if code, stdout, errs := runCCM("", "export", "--all", "-o", out); code != 0 || errs != "" || !strings.HasPrefix(stdout, "export: exported 0 of 0 sessions") {
			t.Errorf("export --all: exit %d, %q %q", code, stdout, errs)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("an export of nothing made its destination: %v", err)
		}
		if entries, _ := os.ReadDir(cfg); len(entries) != 0 {
			t.Errorf("a run with nothing to do wrote %s", entries[0].Name())
		}
	})
	t.Run("unarchive", func(t *testing.T) {
		newSelEnv(t)
		if code, out, errs := runCCM("", "archive", "--all", "--older-than", "1d"); code != 0 || !strings.Contains(out, "archived 5 of 5 sessions") {
			t.Fatalf("archive: exit %d: %s %s", code, out, errs)
		}
		want := `^unarchive: restored 0 of 0 sessions \(0 files, 0 stored contents\) from .*/archive; 0 failed$`
		run(t, want, []string{"unarchive", "--min-size", "1GB"})
		run(t, want, []string{"unarchive", "--project", "-w-plain", "--min-size", "1GB"})
		run(t, want, []string{"unarchive", "--session", selB[:8], "--older-than", "20d"})
		run(t, `^unarchive: would restore 0 of 0 sessions \(0 files, every archive verified\) from .*/archive; 0 failed$`, []string{"unarchive", "-n", "--min-size", "1GB"})
		// A name that names nothing stays an error.
		for _, c := range []struct{ args, want string }{
			{"--session eeeeeeee", "ccm: no archive of session eeeeeeee under "},
			{"--project -nowhere", "ccm: no project matches -nowhere under "},
		} {
			code, _, errs := runCCM("", append([]string{"unarchive"}, strings.Fields(c.args)...)...)
			if code != exitError || !strings.HasPrefix(errs, c.want) {
				t.Errorf("unarchive %s: exit %d, %q; want %q..., exit 2", c.args, code, errs, c.want)
			}
		}
	})
}
