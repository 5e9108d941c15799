// Package testutil holds helpers shared by ccm's tests: where the shared
// corpus of real transcripts is, and copying inputs into temp dirs so no
// test ever writes next to a real file.
package testutil

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot returns the directory holding go.mod, found from the test's
// working directory (the package directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// SharedDir returns the project's shared folder: $CCM_SHARED, or
// ../shared beside the repository, as CI lays it out. The corpus tests run
// when it holds the corpus; on a plain clone, where it is absent, the test
// is skipped with a message that says so. A $CCM_SHARED that names a
// folder without the corpus fails the test: someone asked for it.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir, ok := LookupShared(t)
	if !ok {
		if os.Getenv("CCM_SHARED") != "" {
			t.Fatalf("shared corpus not found at %s ($CCM_SHARED)", dir)
		}
		t.Skipf("corpus test not run: no ../shared/corpus beside the repository (%s); set CCM_SHARED to run it", dir)
	}
	return dir
}

// LookupShared returns the shared folder ($CCM_SHARED or ../shared beside
// the repository) and whether it holds the corpus, for tests that run a
// corpus part only when it is there.
func LookupShared(t testing.TB) (string, bool) {
	t.Helper()
	dir := os.Getenv("CCM_SHARED")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared")
	}
	_, err := os.Stat(filepath.Join(dir, "corpus"))
	return dir, err == nil
}

// CorpusConfigDir is the corpus laid out as a Claude config directory.
func CorpusConfigDir(t testing.TB) string {
	return filepath.Join(SharedDir(t), "corpus", "claude-config")
}

// Corpus files by their short names (see shared/corpus/SOURCES.md).
const (
	Spotter      = "projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
	SpotterAgent = "projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl"
	Acompact     = "projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl"
	Demo         = "projects/-path-to-Demo/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
	FlatAgent    = "projects/-Users-user-project/agent-a434715.jsonl"
	MetaOnly     = "projects/-Users-user-project/a751b8dd-6b29-4eed-8cb9-64bc9a916a39.jsonl"
)

// CorpusFile returns the path of a corpus file (read-only: copy it
// before anything rewrites it).
func CorpusFile(t testing.TB, rel string) string {
	return filepath.Join(CorpusConfigDir(t), rel)
}

// CopyFile copies src to dst with mode 0600.
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// CopyCorpus copies the corpus config dir into a temp dir and returns it,
// for tests that rewrite files.
func CopyCorpus(t testing.TB) string {
	t.Helper()
	src := CorpusConfigDir(t)
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		CopyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TempDir is t.TempDir, whose removal also works under Wine: Go removes a
// tree on Windows with a call (FileDispositionInformationEx) that Wine 8
// does not implement, so on Windows the tree is first removed here entry
// by entry, leaving testing an empty folder to remove.
func TempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if runtime.GOOS == "windows" {
		t.Cleanup(func() { removeTree(dir) }) // runs before TempDir's own
	}
	return dir
}

// removeTree removes dir and everything under it with os.Remove, deepest
// first.
func removeTree(dir string) {
	var all []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		all = append(all, p)
		return nil
	})
	for i := len(all) - 1; i >= 0; i-- {
		os.Chmod(all[i], 0o700) // a read-only file cannot be removed on Windows
		os.Remove(all[i])
	}
}

// CopyTree copies a tree of folders and regular files from src to dst
// with their modes (made readable and writable by their owner, as the
// read-only corpus is not) and modification times, which archive and
// clean decide by.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, fi.Mode().Perm()|0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()|0o600); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}
