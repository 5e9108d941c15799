package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// migrateFixture copies testdata/migrate/<tool> (a home folder laid out as
// the tool installs itself) into a temp dir and returns the options that
// point ccm at it.
func migrateFixture(t *testing.T, tool string) (migrateOptions, string, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "migrate", tool))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "proj"), 0o700)
	home := filepath.Join(root, "home")
	t.Setenv("CCM_HOME", "")
	env := map[string]string{"HOME": home}
	var out bytes.Buffer
	o := migrateOptions{
		globalOptions: globalOptions{ClaudeDir: filepath.Join(home, ".claude"), Stdout: &out, Stderr: &out},
		ProjectDir:    filepath.Join(root, "proj"),
		Lookup:        func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Exe:           "/usr/local/bin/ccm",
		Now:           time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
	}
	return o, root, &out
}

// snapshot maps every file under root (but ccm's backups and lock files)
// to its mode and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "/ccm/backups/") || strings.HasSuffix(p, ".lock") {
			return err
		}
		fi, _ := d.Info()
		b, _ := os.ReadFile(p)
		m[strings.TrimPrefix(p, root)] = fi.Mode().String() + "\n" + string(b)
		return nil
	})
	return m
}

func diffSnapshots(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "gone: "+k)
		} else if v != w {
			d = append(d, "changed: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	return d
}

// runMigrateCycle: a dry run changes nothing; --yes migrates; a second
// --yes changes nothing; --undo gives every file back byte for byte (and
// mode for mode). check looks at the migrated state.
func runMigrateCycle(t *testing.T, tool string, check func(root string, out string)) {
	o, root, out := migrateFixture(t, tool)
	ctx := context.Background()
	orig := snapshot(t, root)
	o.DryRun = true
	if err := runMigrate(ctx, o); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(orig, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("dry run changed %v", d)
	}
	if !strings.Contains(out.String(), "dry run: nothing was changed") {
		t.Errorf("dry run output:\n%s", out)
	}
	// -v adds, after the findings, each thing the plan would write.
	out.Reset()
	o.Verbose = true
	if err := runMigrate(ctx, o); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  (replace|config\.env|import|copy) +\S`).MatchString(out.String()) {
		t.Errorf("dry run -v output has no line of the plan:\n%s", out)
	}
	if d := diffSnapshots(orig, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("dry run -v changed %v", d)
	}
	o.Verbose = false
	o.DryRun = false
	if err := runMigrate(ctx, o); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(orig, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("without --yes (and no terminal) it changed %v", d)
	}
	out.Reset()
	o.Yes = true
	if err := runMigrate(ctx, o); err != nil {
		t.Fatalf("migrate --yes: %v\n%s", err, out)
	}
	check(root, out.String())
	migrated := snapshot(t, root)
	out.Reset()
	o.Now = o.Now.Add(time.Minute)
	if err := runMigrate(ctx, o); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(migrated, snapshot(t, root)); len(d) > 0 || !strings.Contains(out.String(), "migrate: nothing to change") {
		t.Errorf("second migrate changed %v:\n%s", d, out)
	}
	out.Reset()
	o.Yes, o.Undo = false, true
	if err := runMigrate(ctx, o); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	if d := diffSnapshots(orig, snapshot(t, root)); len(d) > 0 {
		t.Errorf("after --undo: %v\n%s", d, out)
	}
	if err := runMigrate(ctx, o); err == nil || !strings.Contains(err.Error(), "no migration to undo") {
		t.Errorf("a second undo: %v", err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMigrateClaudeContextManager(t *testing.T) {
	runMigrateCycle(t, "claude-context-manager", func(root, out string) {
		claude := filepath.Join(root, "home", ".claude")
		s := mustRead(t, filepath.Join(claude, "settings.json"))
		for _, gone := range []string{"context-monitor.py", "intercept-", "learn-large-commands.py", "pre-compact.py"} {
			if strings.Contains(s, gone) {
				t.Errorf("settings still run %s:\n%s", gone, s)
			}
		}
		for _, kept := range []string{`"command": "~/bin/my-own-guard.sh"`, `"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "80"`, `"permissions": {"allow": ["Bash(git status)"]}`,
			`"command": "/usr/local/bin/ccm hook PreToolUse"`, `"command": "/usr/local/bin/ccm hook Stop"`} {
			if !strings.Contains(s, kept) {
				t.Errorf("settings lack %s:\n%s", kept, s)
			}
		}
		if !gjson.Valid(s) {
			t.Errorf("invalid settings:\n%s", s)
		}
		if p := mustRead(t, filepath.Join(claude, "commands", "purge.md")); strings.Contains(p, "claude-session-purge.py") || !strings.Contains(p, "purge --current") {
			t.Errorf("/purge is not ccm's:\n%s", p)
		}
		cfg := mustRead(t, filepath.Join(claude, "ccm", "config.env"))
		for _, l := range []string{"CCM_DEFAULT_PIN_LEVEL=soft\n", "BASH_THRESHOLD=8000\n", "CCM_PRUNE_MAX_SIZE_MB=500\n"} {
			if !strings.Contains(cfg, l) {
				t.Errorf("config.env lacks %q:\n%s", l, cfg)
			}
		}
		for _, l := range []string{"its script ~/.claude/hooks/learn-large-commands.py no longer exists",
			"config.py line 4: CACHE_DIR = Path.home() / '.claude' / 'cache': not a simple assignment, not imported",
			"AUTOCOMPACT_THRESHOLD (~/.claude/hooks/config.py): ccm has no such setting", "use in place"} {
			if !strings.Contains(out, l) {
				t.Errorf("plan lacks %q:\n%s", l, out)
			}
		}
	})
}

func TestMigrateAgentihooks(t *testing.T) {
	runMigrateCycle(t, "agentihooks", func(root, out string) {
		claude := filepath.Join(root, "home", ".claude")
		s := mustRead(t, filepath.Join(claude, "settings.json"))
		if strings.Contains(s, `"cd /app && python -m hooks"`) || !strings.Contains(s, `"command": "/usr/local/bin/ccm hook UserPromptSubmit"`) {
			t.Errorf("hooks not taken over:\n%s", s)
		}
		if !strings.Contains(s, `"statusLine": {"type": "command", "command": "python -m hooks.statusline"}`) {
			t.Errorf("the status line changed:\n%s", s)
		}
		// One refresh only: no PreCompact or other event still runs agentihooks.
		if n := strings.Count(s, "python -m hooks\""); n != 0 {
			t.Errorf("%d agentihooks handlers left", n)
		}
		if !strings.Contains(out, `status line "python -m hooks.statusline"`) {
			t.Errorf("the status line is not named:\n%s", out)
		}
		mem := mustRead(t, filepath.Join(claude, "ccm", "tool-memory.ndjson"))
		if !strings.Contains(mem, "go: command not found") || !strings.Contains(mem, "File not found") || strings.Count(mem, "\n") != 2 {
			t.Errorf("tool memory not imported:\n%s", mem)
		}
		cfg := mustRead(t, filepath.Join(claude, "ccm", "config.env"))
		if !strings.Contains(cfg, "CONTEXT_REFRESH_INTERVAL=10\n") || !strings.Contains(cfg, "DEFAULT_EFFORT=low\n") || strings.Contains(cfg, "REDIS_URL") {
			t.Errorf("config.env:\n%s", cfg)
		}
	})
}

func TestMigrateAgenticFramework(t *testing.T) {
	var proj string
	runMigrateCycle(t, "claude-agentic-framework", func(root, out string) {
		claude := filepath.Join(root, "home", ".claude")
		s := mustRead(t, filepath.Join(claude, "settings.json"))
		if strings.Contains(s, "auto_context_manager") || strings.Contains(s, "pre_compact_preserve") || strings.Contains(s, "PostCompact") {
			t.Errorf("hooks not taken over:\n%s", s)
		}
		sum := filepath.Join(claude, "ccm", "compressed_context", "3f2a9c1d0b7e.json") // coldtask.Dir: ccm tasks reads it
		if mustRead(t, sum) != mustRead(t, filepath.Join(claude, "data", "compressed_context", "3f2a9c1d0b7e.json")) {
			t.Error("summary not imported byte for byte")
		}
		// The project's settings have comments and trailing commas: named,
		// left as they are.
		proj = mustRead(t, filepath.Join(root, "proj", ".claude", "settings.json"))
		if !strings.Contains(out, "has comments and trailing commas: ccm edits none of it; remove by hand the hooks that run pre_compact_preserve.py") {
			t.Errorf("plan:\n%s", out)
		}
	})
	if !strings.Contains(proj, "// the team's hooks") {
		t.Errorf("the project's settings were changed:\n%s", proj)
	}
}

// A BOM in the user's settings: named in the plan, the file left alone,
// the rest (config, data) still migrated.
func TestMigrateBOM(t *testing.T) {
	o, root, out := migrateFixture(t, "agentihooks")
	p := filepath.Join(root, "home", ".claude", "settings.json")
	orig := append([]byte("\xef\xbb\xbf"), []byte(mustRead(t, p))...)
	os.WriteFile(p, orig, 0o600)
	o.Yes = true
	if err := runMigrate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "starts with a byte order mark: ccm edits none of it") {
		t.Errorf("plan:\n%s", out)
	}
	if mustRead(t, p) != string(orig) {
		t.Error("the settings file with a BOM was changed")
	}
	if !strings.Contains(mustRead(t, filepath.Join(root, "home", ".claude", "ccm", "config.env")), "CONTEXT_REFRESH_INTERVAL=10") {
		t.Error("the settings were not imported")
	}
}

// Registrations in the project's shared settings are replaced by ccm's
// for that scope, which call ccm from PATH, never this machine's path.
func TestMigrateProjectScope(t *testing.T) {
	o, root, out := migrateFixture(t, "agentihooks")
	o.Exe = "" // as from the binary: --scope project then writes "ccm"
	// Only the project registered the earlier tool.
	os.Remove(filepath.Join(root, "home", ".claude", "settings.json"))
	p := filepath.Join(root, "proj", ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o700)
	orig := "{\"hooks\": {\"UserPromptSubmit\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"python -m hooks\"}]}]}}\n"
	os.WriteFile(p, []byte(orig), 0o644)
	o.Yes = true
	if err := runMigrate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	s := mustRead(t, p)
	if strings.Contains(s, "python -m hooks") || !strings.Contains(s, `"command":"ccm hook UserPromptSubmit"`) {
		t.Errorf("project settings:\n%s\n%s", s, out)
	}
	o.Yes, o.Undo = false, true
	if err := runMigrate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, p) != orig {
		t.Errorf("undo: %s", mustRead(t, p))
	}
}

// The old store as a symlink is read through it; a dangling one is named.
// A file changed again after the migration is left by --undo, and named.
func TestMigrateBadInput(t *testing.T) {
	o, root, out := migrateFixture(t, "claude-context-manager")
	store := filepath.Join(root, "home", ".claude", "cache", "ccm")
	elsewhere := filepath.Join(root, "elsewhere")
	os.Rename(store, elsewhere)
	os.Symlink(elsewhere, store)
	o.DryRun = true
	runMigrate(context.Background(), o)
	if !strings.Contains(out.String(), "(a symlink to "+elsewhere+"): ccm reads its blobs") {
		t.Errorf("symlinked store:\n%s", out)
	}
	os.Remove(store)
	os.Symlink(filepath.Join(root, "gone"), store)
	out.Reset()
	runMigrate(context.Background(), o)
	if !strings.Contains(out.String(), "which cannot be read") {
		t.Errorf("dangling store:\n%s", out)
	}
	o.DryRun, o.Yes = false, true
	if err := runMigrate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(root, "home", ".claude", "settings.json")
	os.WriteFile(settings, []byte("{}\n"), 0o600)
	o.Yes, o.Undo = false, true
	out.Reset()
	err := runMigrate(context.Background(), o)
	if code := exitCodeOf(err); code != exitFindings || !strings.Contains(out.String(), settings+": changed since the migration, left as it is") {
		t.Errorf("undo over a changed file: %v (exit %d)\n%s", err, code, out)
	}
	if mustRead(t, settings) != "{}\n" {
		t.Error("undo overwrote a file changed since the migration")
	}
}

// Earlier hooks in the user and the project settings: ccm's go to the user
// settings only, which cover the project; two registrations would run
// every hook twice.
func TestMigrateUserAndProject(t *testing.T) {
	o, root, out := migrateFixture(t, "agentihooks")
	p := filepath.Join(root, "proj", ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python -m hooks"}]}]}, "model": "x"}`), 0o600)
	o.Yes = true
	if err := runMigrate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if s := mustRead(t, p); s != `{"hooks": {}, "model": "x"}` {
		t.Errorf("local settings:\n%s\n%s", s, out)
	}
	if !strings.Contains(out.String(), "none of ccm's added, since ccm's hooks in the user settings cover this project") {
		t.Errorf("plan:\n%s", out)
	}
}
