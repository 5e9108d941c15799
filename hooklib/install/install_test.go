package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
)

const exe = "/opt/ccm/bin/ccm"

// settingsCases are settings files in the styles people keep: with their
// own hooks, minified, tabs and CRLF, odd spacing, existing empty objects.
var settingsCases = map[string]string{
	"missing":             "",
	"empty":               "{}",
	"plain":               "{\n  \"model\": \"opus\"\n}\n",
	"minified-user-hooks": `{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"my-guard.sh"}]}]}}`,
	"tabs-crlf":           "{\r\n\t\"hooks\": {\r\n\t\t\"UserPromptSubmit\": [\r\n\t\t\t{ \"hooks\": [ { \"type\": \"command\", \"command\": \"echo hi\" } ] }\r\n\t\t]\r\n\t},\r\n\t\"env\": {\"A\": \"1\"}\r\n}\r\n",
	"odd-spacing":         "  {   \"permissions\" :{\"allow\":[ \"Bash(ls)\" ]} ,\n\n      \"hooks\":   { \"SessionEnd\" : [ ] , \"Stop\": [{\"hooks\":[{\"type\":\"command\",\"command\":\"notify.sh\",\"timeout\":3}]}] }  }  \n",
	"empty-hooks":         "{\n    \"hooks\": {},\n    \"x\": [1, 2]\n}",
	"unicode":             "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"echo 'ünï ✓'\"}\n}",
}

func TestMergeRoundTrip(t *testing.T) {
	for name, in := range settingsCases {
		out, changes, created, err := Merge([]byte(in), exe)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !gjson.ValidBytes(out) || len(changes) != len(Registrations()) {
			t.Fatalf("%s: invalid result or %d changes:\n%s", name, len(changes), out)
		}
		for _, r := range Registrations() {
			path := "hooks." + r.Event + ".#.hooks.#.command"
			if !strings.Contains(gjson.GetBytes(out, path).Raw, HookCommand(exe, r.Event)) {
				t.Errorf("%s: %s not registered", name, r.Event)
			}
		}
		// The user's own values are still there, byte for byte.
		for _, keep := range []string{"my-guard.sh", "echo hi", "notify.sh", `"permissions" :{"allow":[ "Bash(ls)" ]}`, "ünï ✓"} {
			if strings.Contains(in, keep) && !strings.Contains(string(out), keep) {
				t.Errorf("%s: lost %q", name, keep)
			}
		}
		again, changes2, _, err := Merge(out, exe)
		if err != nil || string(again) != string(out) || len(changes2) != 0 {
			t.Errorf("%s: second merge changed %v", name, changes2)
		}
		want := in
		if strings.TrimSpace(in) == "" {
			want = "{}\n"
		}
		back, _, err := Unmerge(out, created, exe)
		if err != nil || string(back) != want {
			t.Errorf("%s: unmerge gave\n%q\nwant\n%q", name, back, want)
		}
	}
}

// TestMatchersAndTimeouts: every registration is matched as narrowly as
// its feature allows and has a timeout (the earlier tools registered 11
// events with neither: two Python starts per tool call).
func TestMatchersAndTimeouts(t *testing.T) {
	// The context features are tested in TestContextFeatures.
	lean := func(f Features) Features {
		f.NoMonitor, f.NoPreserve, f.NoColdTasks = true, true, true
		return f
	}
	cases := []struct {
		f         Features
		pre, post string
		failure   bool
	}{
		{lean(Features{}), MemoryPreMatcher, CaptureMatcher, true},
		{lean(Features{NoMemory: true}), "Agent|Task", CaptureMatcher, false},
		{lean(Features{NoCapture: true}), MemoryPreMatcher, "^mcp__.*", true},
		{lean(Features{NoCapture: true, NoMemory: true}), "Agent|Task", "", false},
	}
	for _, c := range cases {
		out, _, _, err := MergeWith(nil, exe, RegistrationsFor(c.f))
		if err != nil {
			t.Fatal(err)
		}
		if m := gjson.GetBytes(out, "hooks.PreToolUse.0.matcher").String(); m != c.pre {
			t.Errorf("%+v: PreToolUse matcher %q", c.f, m)
		}
		if m := gjson.GetBytes(out, "hooks.PostToolUse.0.matcher"); m.String() != c.post || c.post == "" && gjson.GetBytes(out, "hooks.PostToolUse").Exists() {
			t.Errorf("%+v: PostToolUse matcher %q", c.f, m.String())
		}
		if gjson.GetBytes(out, "hooks.PostToolUseFailure").Exists() != c.failure || gjson.GetBytes(out, "hooks.Stop").Exists() != c.failure {
			t.Errorf("%+v: PostToolUseFailure/Stop registered: %s", c.f, out)
		}
		if m := gjson.GetBytes(out, "hooks.SessionStart.0.matcher").String(); m != "startup|clear|compact" {
			t.Errorf("SessionStart matcher %q", m)
		}
		if gjson.GetBytes(out, "hooks.PreCompact").Exists() || gjson.GetBytes(out, "hooks.Notification").Exists() || gjson.GetBytes(out, "hooks.PostCompact").Exists() {
			t.Error("registered events ccm does nothing on")
		}
		gjson.GetBytes(out, "hooks.@values.#.hooks.#.timeout").ForEach(func(_, v gjson.Result) bool {
			if v.Raw == "" || v.Raw == "[]" {
				t.Error("a handler without timeout")
			}
			return true
		})
	}
}

// TestMergeSwitchesFeatures: installing again with a feature left out
// removes its handlers and narrows the matchers; installing the full set
// again brings them back; the user's own hooks keep their bytes
// throughout, and unmerging gives the original back.
func TestMergeSwitchesFeatures(t *testing.T) {
	orig := "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"my-stop.sh\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	full, _, created, err := MergeWith([]byte(orig), exe, RegistrationsFor(Features{}))
	if err != nil {
		t.Fatal(err)
	}
	lean, changes, _, err := MergeWith(full, exe, RegistrationsFor(Features{NoCapture: true, NoMemory: true, NoMonitor: true, NoPreserve: true, NoColdTasks: true}))
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(lean, "hooks.PostToolUse").Exists() || gjson.GetBytes(lean, "hooks.PostToolUseFailure").Exists() {
		t.Errorf("capture or memory left registered:\n%s", lean)
	}
	if gjson.GetBytes(lean, "hooks.Stop.#").Int() != 1 || gjson.GetBytes(lean, "hooks.Stop.0.hooks.0.command").String() != "my-stop.sh" {
		t.Errorf("the user's Stop hook changed:\n%s", lean)
	}
	if m := gjson.GetBytes(lean, "hooks.PreToolUse.0.matcher").String(); m != "Agent|Task" {
		t.Errorf("PreToolUse matcher not narrowed: %q (%v)", m, changes)
	}
	again, _, _, err := MergeWith(lean, exe, RegistrationsFor(Features{}))
	if err != nil {
		t.Fatal(err)
	}
	if m := gjson.GetBytes(again, "hooks.PreToolUse.0.matcher").String(); m != MemoryPreMatcher {
		t.Errorf("PreToolUse matcher not widened again: %q", m)
	}
	twice, changes, _, _ := MergeWith(again, exe, RegistrationsFor(Features{}))
	if string(twice) != string(again) || len(changes) != 0 {
		t.Errorf("a second install changed %v", changes)
	}
	back, _, err := Unmerge(again, created, exe)
	if err != nil || string(back) != orig {
		t.Errorf("unmerge gave\n%s\nwant\n%s", back, orig)
	}
}

func TestMergeUpdatesMovedBinary(t *testing.T) {
	in := `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"/old/place/ccm hook UserPromptSubmit","timeout":10}]}]}}`
	out, changes, _, err := Merge([]byte(in), "/new place/ccm")
	if err != nil {
		t.Fatal(err)
	}
	got := gjson.GetBytes(out, "hooks.UserPromptSubmit.0.hooks.0.command").String()
	if got != `'/new place/ccm' hook UserPromptSubmit` || gjson.GetBytes(out, "hooks.UserPromptSubmit.#").Int() != 1 {
		t.Errorf("%s\n%v", out, changes)
	}
}

func TestMergeRefusesBadSettings(t *testing.T) {
	for _, in := range []string{"{not json", "[1,2]", `"x"`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`} {
		if _, _, _, err := Merge([]byte(in), exe); !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestUnmergeKeepsMixedGroups(t *testing.T) {
	in := `{"hooks":{"PreToolUse":[{"matcher":"Agent","hooks":[{"type":"command","command":"mine.sh"},{"type":"command","command":"ccm hook PreToolUse"}]}]}}`
	out, changes, err := Unmerge([]byte(in), nil, exe)
	want := `{"hooks":{"PreToolUse":[{"matcher":"Agent","hooks":[{"type":"command","command":"mine.sh"}]}]}}`
	if err != nil || string(out) != want || len(changes) != 1 {
		t.Errorf("%s %v %v", out, changes, err)
	}
}

func TestCCMEvent(t *testing.T) {
	cases := map[string]string{
		"ccm hook SessionStart":                   "SessionStart",
		"/usr/bin/ccm hook PreToolUse":            "PreToolUse",
		"'/a b/ccm' hook Stop":                    "Stop",
		`"/a b/ccm" hook Stop`:                    "Stop",
		"ccm hook":                                "",
		"ccm purge --current":                     "",
		"/usr/bin/notccm hook X":                  "",
		"python3 ccm hook X":                      "",
		"ccm hook SessionStart; rm -rf /tmp/fake": "",
	}
	for cmd, want := range cases {
		if got, _ := ccmEvent(cmd); got != want {
			t.Errorf("ccmEvent(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// sandbox returns install options rooted in a temp dir.
func sandbox(t *testing.T) Options {
	dir := t.TempDir()
	o := Options{Scope: ScopeUser, ClaudeDir: filepath.Join(dir, "claude"), ProjectDir: filepath.Join(dir, "proj"),
		Home: filepath.Join(dir, "claude", "ccm"), Exe: exe, Now: time.Unix(1_800_000_000, 0),
		Commands: fstest.MapFS{"ccm.md": {Data: []byte("run {{CCM}} cache stats\n")}, "pin-last.md": {Data: []byte("ccm:pin last level=soft\n")}}}
	os.MkdirAll(o.ClaudeDir, 0o700)
	os.MkdirAll(o.ProjectDir, 0o700)
	return o
}

func TestInstallUninstallFiles(t *testing.T) {
	for _, scope := range []string{ScopeUser, ScopeProject, ScopeLocal} {
		for name, in := range settingsCases {
			o := sandbox(t)
			o.Scope = scope
			path, _ := SettingsPath(o)
			if in != "" || name != "missing" {
				os.MkdirAll(filepath.Dir(path), 0o700)
				os.WriteFile(path, []byte(in), 0o640)
			}
			r1, err := Install(o)
			if err != nil {
				t.Fatalf("%s/%s: %v", scope, name, err)
			}
			if name != "missing" && r1.Backup == "" {
				t.Errorf("%s/%s: no backup", scope, name)
			}
			if b, _ := os.ReadFile(r1.Backup); r1.Backup != "" && string(b) != in {
				t.Errorf("%s/%s: backup differs", scope, name)
			}
			cmdFile := filepath.Join(CommandsDir(o), "ccm.md")
			if scope == ScopeLocal {
				// Nothing goes into the shared commands folder.
				if _, err := os.Stat(CommandsDir(o)); err == nil || len(r1.Notes) != 1 {
					t.Errorf("%s/%s: commands folder written, or no note: %v", scope, name, r1.Notes)
				}
			} else if data, err := os.ReadFile(cmdFile); err != nil || !strings.Contains(string(data), exe+" cache stats") {
				t.Errorf("%s/%s: command file %q %v", scope, name, data, err)
			}
			r2, err := Install(o)
			if err != nil || r2.Changed || len(r2.Changes) != 0 {
				t.Errorf("%s/%s: second install: %v %v", scope, name, r2.Changes, err)
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if name == "missing" {
				if err == nil {
					t.Errorf("%s: the file install created is still there: %q", scope, data)
				}
			} else if string(data) != in {
				t.Errorf("%s/%s: after uninstall\n%q\nwant\n%q", scope, name, data, in)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o640 {
				t.Errorf("%s/%s: mode %v", scope, name, fi.Mode())
			}
			if _, err := os.Stat(cmdFile); err == nil {
				t.Errorf("%s/%s: command file left", scope, name)
			}
			// Folders install created go too; the user's stay.
			if _, err := os.Stat(CommandsDir(o)); err == nil {
				t.Errorf("%s/%s: commands folder left", scope, name)
			}
			if _, err := os.Stat(filepath.Dir(path)); (err == nil) != (name != "missing" || scope == ScopeUser) {
				t.Errorf("%s/%s: settings folder: %v", scope, name, err)
			}
		}
	}
}

func TestInstallRefuses(t *testing.T) {
	o := sandbox(t)
	path, _ := SettingsPath(o)
	os.WriteFile(path, []byte("{broken"), 0o600)
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("invalid: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{broken" {
		t.Error("invalid file changed")
	}
	os.WriteFile(path, []byte("{}"), 0o400)
	os.Chmod(path, 0o400)
	if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only: %v", err)
	}
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	o := sandbox(t)
	o.DryRun = true
	r, err := Install(o)
	if err != nil || !strings.Contains(string(r.Content), "ccm hook UserPromptSubmit") {
		t.Fatalf("%v %s", err, r.Content)
	}
	ents, _ := os.ReadDir(o.ClaudeDir)
	if len(ents) != 0 {
		t.Errorf("dry run wrote %v", ents)
	}
}

func TestUserCommandFilesKept(t *testing.T) {
	o := sandbox(t)
	dir := CommandsDir(o)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "pin-last.md"), []byte("my own pin-last\n"), 0o644)
	r, err := Install(o)
	if err != nil || !strings.Contains(strings.Join(r.Changes, "\n"), "keep "+filepath.Join(dir, "pin-last.md")) {
		t.Errorf("%v %v", r.Changes, err)
	}
	Uninstall(o)
	if b, _ := os.ReadFile(filepath.Join(dir, "pin-last.md")); string(b) != "my own pin-last\n" {
		t.Errorf("user's command changed: %q", b)
	}
	// A command the user edited after install stays too.
	Install(o)
	os.WriteFile(filepath.Join(dir, "ccm.md"), []byte("edited\n"), 0o644)
	Uninstall(o)
	if _, err := os.Stat(filepath.Join(dir, "ccm.md")); err != nil {
		t.Error("an edited command was removed")
	}
}

// TestCommandFilesPrivate: the slash-command files are 0600, like every
// file ccm writes.
func TestCommandFilesPrivate(t *testing.T) {
	o := sandbox(t)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(CommandsDir(o))
	if err != nil || len(ents) == 0 {
		t.Fatalf("no command files: %v", err)
	}
	for _, e := range ents {
		fi, err := os.Lstat(filepath.Join(CommandsDir(o), e.Name()))
		if err != nil || fi.Mode() != fsutil.FileMode {
			t.Errorf("%s: mode %v (%v), want %v", e.Name(), fi.Mode(), err, fsutil.FileMode)
		}
	}
}

func TestInstallFollowsSymlink(t *testing.T) {
	o := sandbox(t)
	real := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	os.WriteFile(real, []byte("{}\n"), 0o600)
	link, _ := SettingsPath(o)
	os.Symlink(real, link)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("symlink replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "ccm hook") {
		t.Error("target not updated")
	}
}
