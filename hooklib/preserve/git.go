package preserve

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GitDiffStat returns `git diff --stat HEAD` of dir (or of the index, in a
// repository without commits), and a note saying why there is none: dir
// not a directory, not a repository, git missing, or git too slow. git
// runs with a timeout and without prompting for anything.
func GitDiffStat(dir string, timeout time.Duration) (string, string) {
	return StartGitDiffStat(dir, timeout)()
}

// StartGitDiffStat is GitDiffStat begun now and finished by the function
// it returns: the checks that need no git (is dir a directory, is it in a
// repository, is git installed) run at once, and git, when it must run,
// runs on its own goroutine while the caller reads the transcript. The
// returned function waits for git (within the timeout); call it once.
func StartGitDiffStat(dir string, timeout time.Duration) func() (string, string) {
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
		return noDiff("cwd is not a directory")
	}
	explicit := os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_WORK_TREE") != ""
	if !explicit && !inRepository(dir) {
		// A few stats instead of starting git: most of the hook's time.
		return noDiff("not a git repository")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return noDiff("git not found")
	}
	type result struct{ diff, note string }
	done := make(chan result, 1)
	go func() {
		diff, note := runGitDiffStat(git, dir, explicit, timeout)
		done <- result{diff, note}
	}()
	return func() (string, string) {
		r := <-done
		return r.diff, r.note
	}
}

func noDiff(note string) func() (string, string) {
	return func() (string, string) { return "", note }
}

// runGitDiffStat runs git: rev-parse first when GIT_DIR or GIT_WORK_TREE
// say where the repository is (explicit), then diff --stat.
func runGitDiffStat(git, dir string, explicit bool, timeout time.Duration) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, git, append([]string{"-C", dir, "--no-pager", "--no-optional-locks"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
		cmd.WaitDelay = 500 * time.Millisecond
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		return strings.TrimRight(out.String(), "\n"), err
	}
	if explicit {
		if _, err := run("rev-parse", "--git-dir"); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return "", "git timed out"
			}
			return "", "not a git repository"
		}
	}
	out, err := run("diff", "--stat", "HEAD")
	if err != nil {
		out, err = run("diff", "--stat", "--cached")
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", "git timed out"
	case err != nil:
		return "", "git diff failed"
	case out == "":
		return "", "no changes"
	}
	return capLines(out, 30), ""
}

// inRepository reports whether dir or a directory above it holds .git (a
// directory, or the file of a worktree or submodule), as git finds a
// repository when GIT_DIR is not set.
func inRepository(dir string) bool {
	d, err := filepath.Abs(dir)
	if err != nil {
		return true // let git decide
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

// capLines keeps the first n-1 lines and the summary line of a diff stat.
func capLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	kept := append(lines[:n-1:n-1], "  ...", lines[len(lines)-1])
	return strings.Join(kept, "\n")
}
