//go:build unix

package main

import (
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unreadableEnv is a config dir with projects a, b and c of two old
// sessions each, where project b's folder (and, with file, one transcript
// of a) is mode 000, and a way to run ccm as a user whom that stops.
// Permission bits do not stop root: as root, ccm runs as nobody (setpriv),
// on a copy of the binary and a sandbox that nobody owns.
type unreadableEnv struct {
	root, claude string
	bin          string
	asUser       []string // the command prefix that drops root; nil when not root
}

func newUnreadableEnv(t *testing.T, file bool) *unreadableEnv {
	t.Helper()
	e := &unreadableEnv{root: t.TempDir()}
	var uid, gid int
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: permission bits cannot make a folder unreadable for root")
		}
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root without a nobody user (%v)", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		e.asUser = []string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups"}
		// nobody must reach the sandbox through the test's temp folders.
		for d := e.root; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
	}
	e.claude = filepath.Join(e.root, "claude")
	tmpl, err := os.ReadFile(filepath.Join("testdata", "ownfiles", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().AddDate(0, 0, -40)
	for _, p := range []string{"a", "b", "c"} {
		dir := filepath.Join(e.claude, "projects", "-w-"+p)
		os.MkdirAll(dir, 0o700)
		for i := 1; i <= 2; i++ {
			id := "1111111" + strconv.Itoa(i) + "-1111-4111-8111-11111111111" + map[string]string{"a": "a", "b": "b", "c": "c"}[p]
			data := strings.ReplaceAll(string(tmpl), "11111111-1111-4111-8111-111111111111", id)
			data = strings.ReplaceAll(data, `"cwd":"/w"`, `"cwd":"/w/`+p+`"`)
			path := filepath.Join(dir, id+".jsonl")
			os.WriteFile(path, []byte(data), 0o600)
			os.Chtimes(path, old, old)
		}
	}
	src, err := os.ReadFile(builtBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	e.bin = filepath.Join(e.root, "ccm")
	os.WriteFile(e.bin, src, 0o755)
	if e.asUser != nil {
		filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				os.Lchown(p, uid, gid)
			}
			return nil
		})
	}
	os.Chmod(filepath.Join(e.claude, "projects", "-w-b"), 0)
	if file {
		os.Chmod(filepath.Join(e.claude, "projects", "-w-a", "11111111-1111-4111-8111-11111111111a.jsonl"), 0)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(e.claude, "projects", "-w-b"), 0o700) })
	return e
}

// run runs ccm as the unprivileged user and returns its exit code and
// outputs.
func (e *unreadableEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	argv := append(append(append([]string{}, e.asUser...), "env", "HOME="+e.root, "CLAUDE_CONFIG_DIR="+e.claude,
		"CCM_HOME="+filepath.Join(e.root, "ccm-home"), "CCM_CACHE_DIR="+filepath.Join(e.root, "store"), e.bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = withoutCCMEnv(os.Environ())
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := exitOf(t, cmd.Run())
	return code, out.String(), errb.String()
}

// TestBatchUnreadableFolder: one rule for every batch command. With a
// project folder nobody may read, each reports it once as one "ccm:"
// line, counts it among the failed, does the rest (the other projects'
// four sessions), and exits 1.
func TestBatchUnreadableFolder(t *testing.T) {
	for _, c := range []struct {
		args []string
		out  string // a line the output must have
	}{
		{[]string{"sessions"}, `(?m)^/w/c\t1111111[12]-`},
		{[]string{"du"}, `(?m)/w/a$`},
		{[]string{"purge", "--all", "--threshold", "100", "--recent-turns", "0"}, `(?m)^purged 4 of 4 files \(0 unchanged, 0 skipped, 1 failed\)`},
		{[]string{"purge", "--threshold", "100", "--recent-turns", "0", "$PROJECTS"}, `(?m)^purged 4 of 4 files \(0 unchanged, 0 skipped, 1 failed\)`},
		{[]string{"archive", "--older-than", "10d"}, `(?m)^archive: archived 4 of 4 sessions, .* 1 failed\)$`},
		{[]string{"archive", "--older-than", "10d", "--dry-run"}, `(?m)^archive: would archive 4 sessions, .* \(1 could not be read\)$`},
		{[]string{"clean", "--dry-run"}, `(?m)^clean: would remove 0 items, 0 B \(1 could not be read\)$`},
		{[]string{"clean"}, `(?m)^clean: removed 0 of 0 items, freed 0 B \(1 failed\)$`},
		{[]string{"maintain"}, `(?m)^maintain: archived 4 sessions .*, 1 failed$`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			e := newUnreadableEnv(t, false)
			for i, a := range c.args {
				if a == "$PROJECTS" {
					c.args[i] = filepath.Join(e.claude, "projects")
				}
			}
			code, out, errs := e.run(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			folder := filepath.Join(e.claude, "projects", "-w-b")
			if c.args[0] == "maintain" {
				// Prune cannot know what the unreadable folder references:
				// it is skipped, a second failed item that says so.
				first, rest, _ := strings.Cut(errs, "\n")
				if !strings.HasPrefix(rest, "ccm: prune skipped: ") || strings.Count(rest, "\n") != 1 {
					t.Errorf("stderr %q: want the folder, then one line saying prune was skipped", errs)
				}
				errs = first + "\n"
			}
			if strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ccm: ") || !strings.Contains(errs, folder) || !strings.HasSuffix(errs, ": permission denied\n") {
				t.Errorf("stderr %q: want one ccm: line naming %s", errs, folder)
			}
			if !regexp.MustCompile(c.out).MatchString(out) {
				t.Errorf("stdout lacks %s:\n%s", c.out, out)
			}
		})
	}
}

// TestBatchUnreadableTranscript: an old transcript nobody may read is
// not left out in silence: archive names it, counts it among the failed,
// archives the rest and exits 1.
func TestBatchUnreadableTranscript(t *testing.T) {
	e := newUnreadableEnv(t, true)
	code, out, errs := e.run(t, "archive", "--older-than", "10d")
	if code != 1 || !strings.Contains(errs, "11111111-1111-4111-8111-11111111111a.jsonl") || !strings.Contains(out, "archived 3 of 3 sessions") || !strings.Contains(out, "2 failed") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
