package preserve

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeGit puts an executable named git that runs script first in PATH, or
// leaves PATH without any git when script is "".
func fakeGit(t *testing.T, script string) {
	bin := t.TempDir()
	if script != "" {
		if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
}

// TestGitDiffStatBadInput: a cwd that is not a directory, a directory
// outside any repository, git missing and git hanging each give no diff
// and a note saying why, within the timeout.
func TestGitDiffStatBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("x"), 0o600)
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o700)

	fakeGit(t, "echo ' a.go | 1 +'")
	if diff, note := GitDiffStat(file, 0); diff != "" || note != "cwd is not a directory" {
		t.Errorf("a file as cwd: %q %q", diff, note)
	}
	if diff, note := GitDiffStat(filepath.Join(dir, "missing"), 0); diff != "" || note != "cwd is not a directory" {
		t.Errorf("a missing cwd: %q %q", diff, note)
	}
	if diff, note := GitDiffStat(dir, 0); diff != "" || note != "not a git repository" {
		t.Errorf("outside a repository (git must not even run): %q %q", diff, note)
	}
	if diff, note := GitDiffStat(repo, 0); diff != " a.go | 1 +" || note != "" {
		t.Errorf("in a repository: %q %q", diff, note)
	}
	fakeGit(t, "")
	if diff, note := GitDiffStat(repo, 0); diff != "" || note != "git not found" {
		t.Errorf("git missing: %q %q", diff, note)
	}
	fakeGit(t, "exec /bin/sleep 30")
	if diff, note := GitDiffStat(repo, 100*time.Millisecond); diff != "" || note != "git timed out" {
		t.Errorf("git hanging: %q %q", diff, note)
	}
}
