package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// cfgDir is a config dir for the selection tests: a project folder -plain
// and a project folder -linked that is a symlink to a folder elsewhere,
// each with one session (transcript and subagent transcript); the files
// are old unless touched.
type cfgDir struct {
	root, cfg, projects, target string
	plain, linked               string // the sessions' ids
}

func newCfg(t *testing.T) cfgDir {
	t.Helper()
	root := t.TempDir()
	c := cfgDir{root: root, cfg: filepath.Join(root, "claude"), target: filepath.Join(root, "elsewhere"),
		plain: "aaaaaaaa-1111-4111-8111-111111111111", linked: "bbbbbbbb-2222-4222-8222-222222222222"}
	c.projects = filepath.Join(c.cfg, "projects")
	write(t, filepath.Join(c.projects, "-plain", c.plain+".jsonl"), 100)
	write(t, filepath.Join(c.projects, "-plain", c.plain, "subagents", "agent-x.jsonl"), 10)
	write(t, filepath.Join(c.target, c.linked+".jsonl"), 200)
	write(t, filepath.Join(c.target, c.linked, "subagents", "agent-y.jsonl"), 20)
	if err := os.Symlink(c.target, filepath.Join(c.projects, "-linked")); err != nil {
		t.Fatal(err)
	}
	return c
}

// write makes a file of n bytes, last written 40 days ago.
func write(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","message":{"role":"user","content":"x"}}` + "\n"
	data := []byte(strings.Repeat(line, n/len(line)+1)[:n])
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func sel(t *testing.T, cfg string, s Selector, o SelectOptions) *Selection {
	t.Helper()
	got, err := Select(context.Background(), cfg, s, o)
	if err != nil {
		t.Fatalf("Select(%+v): %v", s, err)
	}
	if len(got.Failed) > 0 {
		t.Fatalf("Select(%+v) failed: %v", s, got.Failed)
	}
	return got
}

// names lists the targets by file name, with their project folder and
// whether they carry their session.
func names(ts []Target) []string {
	var out []string
	for _, t := range ts {
		n := t.Project + "/" + filepath.Base(t.Path)
		if t.Session != nil {
			n += " (session)"
		}
		if t.Named {
			n += " (named)"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func wantNames(t *testing.T, what string, got []Target, want ...string) {
	t.Helper()
	g := names(got)
	sort.Strings(want)
	if strings.Join(g, ", ") != strings.Join(want, ", ") {
		t.Errorf("%s: got %v, want %v", what, g, want)
	}
}

// A project folder that is a symlink is a project like the others for
// every way of selecting sessions: --all, --project, --session, a walk of
// projects/, of the link, or of the folder it leads to; and it is listed.
func TestSymlinkedProjectFolderSeenByEverySelector(t *testing.T) {
	c := newCfg(t)
	ps, err := ListProjects(c.cfg)
	if err != nil || len(ps) != 2 || ps[0].Folder != "-linked" || !ps[0].Linked || ps[1].Linked {
		t.Fatalf("ListProjects = %+v, %v", ps, err)
	}
	both := []string{"-linked/" + c.linked + ".jsonl (session)", "-plain/" + c.plain + ".jsonl (session)"}
	wantNames(t, "--all", sel(t, c.cfg, Selector{All: true}, SelectOptions{}).Todo, both...)
	wantNames(t, "--older-than alone", sel(t, c.cfg, Selector{OlderThan: time.Hour}, SelectOptions{}).Todo, both...)
	wantNames(t, "--project -linked", sel(t, c.cfg, Selector{Project: "-linked"}, SelectOptions{}).Todo, both[0])
	wantNames(t, "--session bbbb", sel(t, c.cfg, Selector{Session: "bbbb"}, SelectOptions{}).Todo, both[0]+" (named)")
	walked := []string{"-linked/" + c.linked + ".jsonl (session)", "-linked/agent-y.jsonl",
		"-plain/" + c.plain + ".jsonl (session)", "-plain/agent-x.jsonl"}
	wantNames(t, "projects/", sel(t, c.cfg, Selector{Args: []string{c.projects}}, SelectOptions{Sessions: true}).Todo, walked...)
	wantNames(t, "the link", sel(t, c.cfg, Selector{Args: []string{filepath.Join(c.projects, "-linked")}}, SelectOptions{Sessions: true}).Todo, walked[:2]...)
	wantNames(t, "the link's target", sel(t, c.cfg, Selector{Args: []string{c.target}}, SelectOptions{Sessions: true}).Todo, walked[:2]...)
	named := filepath.Join(c.projects, "-linked", c.linked+".jsonl")
	wantNames(t, "the transcript", sel(t, c.cfg, Selector{Args: []string{named}}, SelectOptions{Sessions: true}).Todo, both[0]+" (named)")

	rows, errs, err := Scan(context.Background(), c.cfg, Options{NoPeek: true})
	if err != nil || len(errs) > 0 || len(rows) != 2 {
		t.Fatalf("Scan: %d rows, %v, %v", len(rows), errs, err)
	}
	for _, r := range rows {
		if r.ID == c.linked && (r.TotalBytes != 220 || r.Subagents != 1) {
			t.Errorf("linked row: %d bytes, %d subagents; want 220 and 1", r.TotalBytes, r.Subagents)
		}
	}
}

// No other symlink is followed: not a transcript, not a folder planted in
// a project folder, not a symlink to a folder outside projects/.
func TestOtherSymlinksNotFollowed(t *testing.T) {
	c := newCfg(t)
	out := filepath.Join(c.root, "out")
	write(t, filepath.Join(out, "cccccccc-3333-4333-8333-333333333333.jsonl"), 50)
	for _, l := range [][2]string{
		{filepath.Join(out, "cccccccc-3333-4333-8333-333333333333.jsonl"), filepath.Join(c.projects, "-plain", "cccccccc-3333-4333-8333-333333333333.jsonl")},
		{out, filepath.Join(c.projects, "-plain", "planted")},
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	wantNames(t, "--all", sel(t, c.cfg, Selector{All: true}, SelectOptions{}).Todo,
		"-linked/"+c.linked+".jsonl (session)", "-plain/"+c.plain+".jsonl (session)")
	wantNames(t, "the folder", sel(t, c.cfg, Selector{Args: []string{filepath.Join(c.projects, "-plain")}}, SelectOptions{}).Todo,
		"-plain/"+c.plain+".jsonl", "-plain/agent-x.jsonl")
	if _, err := Find(c.cfg, "cccc", nil); !errors.Is(err, ErrNoSession) {
		t.Errorf("a symlinked transcript was found by id: %v", err)
	}
	// Named, a symlinked transcript is what the user meant.
	named := filepath.Join(c.projects, "-plain", "cccccccc-3333-4333-8333-333333333333.jsonl")
	if got := sel(t, c.cfg, Selector{Args: []string{named}}, SelectOptions{}).Todo; len(got) != 1 || !got[0].Named {
		t.Errorf("named symlinked transcript: %v", names(got))
	}
}

// A session id names its session whole or by a unique prefix of 4
// characters or more; an ambiguous prefix lists the sessions it starts, a
// whole id wins over the longer ids it starts, and a path is no id.
func TestFindByPrefix(t *testing.T) {
	c := newCfg(t)
	for _, id := range []string{"58e50d6c-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "58e50d6c-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "abcd", "abcdef"} {
		write(t, filepath.Join(c.projects, "-plain", id+".jsonl"), 10)
	}
	for _, f := range []struct{ id, want string }{
		{"58e50d6c-a", "58e50d6c-aaaa-4aaa-8aaa-aaaaaaaaaaaa"},
		{"58e50d6c-bbbb-4bbb-8bbb-bbbbbbbbbbbb.jsonl", "58e50d6c-bbbb-4bbb-8bbb-bbbbbbbbbbbb"},
		{"bbbbbbbb", c.linked},
		{"abcd", "abcd"},
		{"abcde", "abcdef"},
	} {
		s, err := Find(c.cfg, f.id, nil)
		if err != nil || s.ID != f.want {
			t.Errorf("Find(%s) = %v, %v; want %s", f.id, s, err, f.want)
		}
	}
	_, err := Find(c.cfg, "58e50d6c", nil)
	var ae *AmbiguousError
	if !errors.As(err, &ae) || len(ae.Matches) != 2 {
		t.Fatalf("Find(58e50d6c) = %v, want the two sessions it starts", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "58e50d6c-aaaa-4aaa-8aaa-aaaaaaaaaaaa  -plain") {
		t.Errorf("ambiguous: %q", err)
	}
	for _, id := range []string{"aaa", "99999999", "58e50d6c-c"} {
		if _, err := Find(c.cfg, id, nil); !errors.Is(err, ErrNoSession) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Find(%s) = %v, want one line of ErrNoSession", id, err)
		}
	}
	// A prefix too short to name a session says how long one must be.
	if _, err := Find(c.cfg, "aaa", nil); err == nil || !strings.Contains(err.Error(), "needs 4 characters or more") {
		t.Errorf("Find(aaa) = %v, want the hint of the shortest prefix", err)
	}
	if _, err := Find(c.cfg, "999", nil); err == nil || strings.Contains(err.Error(), "characters or more") {
		t.Errorf("Find(999) = %v, want no hint: no id starts with it", err)
	}
	for _, id := range []string{"../x", "a/b", "..", ""} {
		if _, err := Find(c.cfg, id, nil); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Find(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	// --project narrows where the prefix is looked for.
	ps, _ := ListProjects(c.cfg)
	if _, err := Find(c.cfg, "bbbb", ps[1:]); !errors.Is(err, ErrNoSession) {
		t.Errorf("--session bbbb --project -plain = %v", err)
	}
}

// --older-than, --min-size and --project narrow what was chosen, named
// files too, and say why; a session's size is its transcript and its
// folder's files (subagents, tool results), not its backups.
func TestNarrowing(t *testing.T) {
	c := newCfg(t)
	write(t, filepath.Join(c.projects, "-plain", c.plain+".jsonl.backup.20250101_000000.000"), 5000)
	young := filepath.Join(c.projects, "-plain", "dddddddd-4444-4444-8444-444444444444.jsonl")
	write(t, young, 1000)
	now := time.Now()
	if err := os.Chtimes(young, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	s := sel(t, c.cfg, Selector{All: true, OlderThan: 2 * time.Hour, MinSize: 150}, SelectOptions{})
	wantNames(t, "kept", s.Todo, "-linked/"+c.linked+".jsonl (session)")
	why := map[string]SkipReason{}
	for _, k := range s.Skipped {
		why[k.Session.ID] = k.Why
		if k.Session.ID == c.plain && k.Size != 110 {
			t.Errorf("plain session's size %d, want 110 (transcript and subagent, no backup)", k.Size)
		}
	}
	if why[c.plain] != TooSmall || why["dddddddd-4444-4444-8444-444444444444"] != TooRecent || len(why) != 2 {
		t.Errorf("skipped: %v", why)
	}
	// A file named outside every project folder is not in one.
	outside := filepath.Join(c.root, "loose.jsonl")
	write(t, outside, 10)
	s = sel(t, c.cfg, Selector{Args: []string{outside}, Project: "-plain"}, SelectOptions{})
	if len(s.Todo) != 0 || len(s.Skipped) != 1 || s.Skipped[0].Why != NotInProject {
		t.Errorf("a file outside with --project: todo %v, skipped %+v", names(s.Todo), s.Skipped)
	}
	if _, err := Select(context.Background(), c.cfg, Selector{Project: "-nowhere"}, SelectOptions{}); err == nil || !strings.Contains(err.Error(), "no project matches -nowhere") {
		t.Errorf("--project -nowhere: %v", err)
	}
}

// The selectors that say what to work on go one at a time; a command that
// needs a selection and got none is told which there are; a folder
// outside projects/ needs --recursive; a file named is never refused.
func TestSelectUsage(t *testing.T) {
	c := newCfg(t)
	named := filepath.Join(c.projects, "-plain", c.plain+".jsonl")
	var ue *UsageError
	for _, s := range []Selector{
		{},
		{All: true, Session: "aaaa"},
		{Args: []string{named}, Current: true},
		{Args: []string{named}, All: true},
		{Args: []string{c.root}},
		{Args: []string{c.cfg}},
	} {
		if _, err := Select(context.Background(), c.cfg, s, SelectOptions{}); !errors.As(err, &ue) || strings.Contains(ue.Msg, "\n") {
			t.Errorf("Select(%+v) = %v, want a one-line usage error", s, err)
		}
	}
	if _, err := Select(context.Background(), c.cfg, Selector{}, SelectOptions{}); err == nil || err.Error() != ErrNothingGiven {
		t.Errorf("nothing given: %v", err)
	}
	if _, err := Select(context.Background(), c.cfg, Selector{Args: []string{c.root}}, SelectOptions{}); err == nil || !strings.Contains(err.Error(), RecursiveFlag) {
		t.Errorf("outside: %v, want the hint %s", err, RecursiveFlag)
	}
	// From the root: each file once, the link to -linked not followed
	// (its target is walked as the plain folder it is there).
	s := sel(t, c.cfg, Selector{Args: []string{c.root}, Recursive: true}, SelectOptions{})
	if len(s.Todo) != 4 {
		t.Errorf("--recursive from the root: %v", names(s.Todo))
	}
	for _, tg := range s.Todo {
		if strings.Contains(tg.Path, "-linked") {
			t.Errorf("walked through the link: %s", tg.Path)
		}
	}
	var fe *FileError
	if _, err := Select(context.Background(), c.cfg, Selector{Args: []string{filepath.Join(c.root, "gone.jsonl")}}, SelectOptions{}); !errors.As(err, &fe) || !os.IsNotExist(fe.Err) {
		t.Errorf("missing file: %v, want a FileError", err)
	}
	empty := filepath.Join(c.projects, "-empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Select(context.Background(), c.cfg, Selector{Args: []string{empty}}, SelectOptions{}); err == nil || !strings.Contains(err.Error(), "no transcripts") {
		t.Errorf("empty folder: %v", err)
	}
}

// --current is the newest transcript of the working directory's project
// folder, named after the directory as given or with its symlinks
// resolved.
func TestCurrent(t *testing.T) {
	c := newCfg(t)
	real := filepath.Join(c.root, "work", "my_proj.v2")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(c.root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	folder := filepath.Join(c.projects, strings.NewReplacer("/", "-", "_", "-", ".", "-").Replace(real))
	write(t, filepath.Join(folder, "eeeeeeee-0000-4000-8000-000000000000.jsonl"), 10)
	write(t, filepath.Join(folder, "ffffffff-0000-4000-8000-000000000000.jsonl"), 10)
	now := time.Now()
	os.Chtimes(filepath.Join(folder, "ffffffff-0000-4000-8000-000000000000.jsonl"), now, now)
	for _, cwd := range []string{real, link} {
		s, err := Current(c.cfg, cwd)
		if err != nil || s.ID != "ffffffff-0000-4000-8000-000000000000" {
			t.Errorf("Current(%s) = %v, %v", cwd, s, err)
		}
	}
	if _, err := Current(c.cfg, c.root); !errors.Is(err, ErrNoSession) {
		t.Errorf("no folder: %v", err)
	}
}

// A folder is inside projects/ when it is projects/ or lies in it once
// symlinks are resolved, or lies in the target of a symlinked project
// folder.
func TestInsideProjects(t *testing.T) {
	c := newCfg(t)
	outside := filepath.Join(c.root, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	link := func(target, name string) string {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	intoProjects := link(filepath.Join(c.projects, "-plain"), filepath.Join(c.root, "to-project"))
	toOutside := link(outside, filepath.Join(c.root, "to-outside"))
	planted := link(outside, filepath.Join(c.projects, "-plain", "planted"))
	for _, f := range []struct {
		dir  string
		want bool
	}{
		{c.projects, true},
		{filepath.Join(c.projects, "-plain"), true},
		{filepath.Join(c.projects, "-plain", c.plain, "subagents"), true},
		{intoProjects, true},
		{filepath.Join(c.projects, "-linked"), true},
		{c.target, true},
		{filepath.Join(c.target, c.linked), true},
		{filepath.Join(c.projects, "-plain", ".."), true},
		{c.cfg, false},
		{c.root, false},
		{outside, false},
		{toOutside, false},
		{planted, false},
		{filepath.Join(c.projects, ".."), false},
	} {
		if got := InsideProjects(c.cfg, f.dir); got != f.want {
			t.Errorf("InsideProjects(%s) = %v, want %v", f.dir, got, f.want)
		}
	}
	// A relative folder is taken from the working directory, as the
	// command line gives it.
	t.Chdir(c.root)
	rel, err := filepath.Rel(c.root, filepath.Join(c.projects, "-plain"))
	if err != nil || filepath.IsAbs(rel) {
		t.Fatalf("no relative path to the project folder: %q %v", rel, err)
	}
	if !InsideProjects(c.cfg, rel) {
		t.Errorf("InsideProjects(%s) from %s = false, want true", rel, c.root)
	}
}

func TestHomeStoreArchive(t *testing.T) {
	t.Setenv("CCM_HOME", "")
	if got := Home("/c"); got != filepath.Join("/c", "ccm") {
		t.Errorf("Home = %s", got)
	}
	t.Setenv("CCM_HOME", "/h")
	if got := Home("/c"); got != "/h" {
		t.Errorf("Home with $CCM_HOME = %s", got)
	}
	if got := StoreDir("/c", "/s"); got != "/s" {
		t.Errorf("StoreDir with a cache dir = %s", got)
	}
	if got := StoreDir("/c", ""); got != filepath.Join("/c", "cache", "ccm") {
		t.Errorf("StoreDir = %s", got)
	}
	if ArchiveDir("/h", "/to", "/cfg") != "/to" || ArchiveDir("/h", "", "/cfg") != "/cfg" || ArchiveDir("/h", "", "") != filepath.Join("/h", "archive") {
		t.Error("ArchiveDir does not prefer --to, then the configured dir, then <home>/archive")
	}
}
