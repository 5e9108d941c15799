package locate

import (
	"errors"
	"os"
	"path/filepath"
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
	fs, err := Files("", Selection{Args: []string{named, dir}, Dirs: true})
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
	if _, err := Files("", Selection{Args: []string{empty}, Dirs: true}); err == nil {
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
