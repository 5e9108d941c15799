package locate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilesNamesAndWalks(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.jsonl", "a.jsonl", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(dir, "b.jsonl")
	fs, err := Files("", Selection{Args: []string{named, dir}, Dirs: true, AnyDir: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []File{{named, true}, {filepath.Join(dir, "a.jsonl"), false}, {filepath.Join(dir, "b.jsonl"), false}}
	if len(fs) != len(want) {
		t.Fatalf("got %v, want %v", fs, want)
	}
	for i := range want {
		if fs[i] != want[i] {
			t.Errorf("file %d = %v, want %v", i, fs[i], want[i])
		}
	}
	if _, err := Files("", Selection{Args: []string{dir}}); err == nil {
		t.Error("a directory without Dirs was accepted")
	}
	var ue *UsageError
	if _, err := Files("", Selection{Args: []string{named}, Current: true}); !errors.As(err, &ue) {
		t.Errorf("files and --current: %v, want a usage error", err)
	}
	if _, err := Files("", Selection{}); !errors.As(err, &ue) {
		t.Errorf("nothing given: %v, want a usage error", err)
	}
	var fe *FileError
	if _, err := Files("", Selection{Args: []string{filepath.Join(dir, "gone.jsonl")}}); !errors.As(err, &fe) || !os.IsNotExist(fe.Err) {
		t.Errorf("missing file: %v, want a FileError", err)
	}
	empty := t.TempDir()
	if _, err := Files("", Selection{Args: []string{empty}, Dirs: true, AnyDir: true}); err == nil {
		t.Error("a directory without transcripts was accepted")
	}
}

func TestHomeStoreArchive(t *testing.T) {
	t.Setenv("CCM_HOME", "")
	if got := Home("/c"); got != "/c/ccm" {
		t.Errorf("Home = %s", got)
	}
	t.Setenv("CCM_HOME", "/h")
	if got := Home("/c"); got != "/h" {
		t.Errorf("Home with $CCM_HOME = %s", got)
	}
	if got := Store("/c", "/s"); got != "/s" {
		t.Errorf("Store with a cache dir = %s", got)
	}
	if got := Store("/c", ""); got != "/c/cache/ccm" {
		t.Errorf("Store = %s", got)
	}
	if Archive("/h", "/to", "/cfg") != "/to" || Archive("/h", "", "/cfg") != "/cfg" || Archive("/h", "", "") != "/h/archive" {
		t.Error("Archive does not prefer --to, then the configured dir, then <home>/archive")
	}
}

// A folder is walked only when it is the config dir's projects/ or inside
// it once symlinks are resolved; a project folder may be a symlink itself.
func TestInsideProjects(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "claude")
	projects := filepath.Join(cfg, "projects")
	outside := filepath.Join(root, "elsewhere")
	linked := filepath.Join(root, "linked-project")
	for _, d := range []string{filepath.Join(projects, "-p", "s1", "subagents"), outside, linked} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(projects, "-p", "a.jsonl"), filepath.Join(outside, "x.jsonl"), filepath.Join(linked, "l.jsonl")} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) string {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	intoProjects := link(filepath.Join(projects, "-p"), filepath.Join(root, "to-project"))
	toOutside := link(outside, filepath.Join(root, "to-outside"))
	projectLink := link(linked, filepath.Join(projects, "-linked"))
	planted := link(outside, filepath.Join(projects, "-p", "planted"))
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{projects, true},
		{filepath.Join(projects, "-p"), true},
		{filepath.Join(projects, "-p", "s1", "subagents"), true},
		{intoProjects, true},
		{projectLink, true},
		{filepath.Join(projects, "-p", ".."), true},
		{cfg, false},
		{root, false},
		{outside, false},
		{toOutside, false},
		{planted, false},
		{filepath.Join(projects, ".."), false},
		{filepath.Join(projects, "-p", "..", "..", ".."), false},
	} {
		if got := InsideProjects(cfg, c.dir); got != c.want {
			t.Errorf("InsideProjects(%s) = %v, want %v", c.dir, got, c.want)
		}
	}
	var ue *UsageError
	for _, d := range []string{outside, toOutside, planted, root} {
		_, err := Files(cfg, Selection{Args: []string{d}, Dirs: true})
		if !errors.As(err, &ue) || !strings.Contains(ue.Msg, RecursiveFlag) || strings.Contains(ue.Msg, "\n") {
			t.Errorf("Files(%s) = %v, want a one-line usage error naming %s", d, err, RecursiveFlag)
		}
		if _, err := Files(cfg, Selection{Args: []string{d}, Dirs: true, AnyDir: true}); errors.As(err, &ue) {
			t.Errorf("Files(%s) with AnyDir = %v", d, err)
		}
	}
	if fs, err := Files(cfg, Selection{Args: []string{projects}, Dirs: true}); err != nil || len(fs) != 1 {
		t.Errorf("Files(projects) = %v, %v; want the one transcript", fs, err)
	}
}
