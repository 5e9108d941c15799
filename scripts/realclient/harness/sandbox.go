package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// Box is the sandbox of one client run, all under one output folder:
// config/ is CLAUDE_CONFIG_DIR, home/ is HOME, project/ the working
// directory; ProjectsDir is where the client looks for the project's
// sessions.
type Box struct {
	Out, Config, Home, Project, ProjectsDir string
}

// NewBox creates out/{config,home,project} with onboarding done and the
// project trusted in config/.claude.json, so that no first-run path can
// block a headless run.
func NewBox(out string) (*Box, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	out, err := filepath.EvalSymlinks(out) // the client resolves the cwd; so must the encoding
	if err != nil {
		return nil, err
	}
	out, _ = filepath.Abs(out)
	b := &Box{Out: out, Config: filepath.Join(out, "config"), Home: filepath.Join(out, "home"),
		Project: filepath.Join(out, "project")}
	enc, err := EncodeProject(b.Project)
	if err != nil {
		return nil, err
	}
	b.ProjectsDir = filepath.Join(b.Config, "projects", enc)
	for _, d := range []string{b.Config, b.Home, b.Project, b.ProjectsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := WriteClientState(b.Config, b.Project); err != nil {
		return nil, err
	}
	return b, nil
}

// WriteClientState writes configDir/.claude.json marking onboarding done
// and project trusted.
func WriteClientState(configDir, project string) error {
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"lastOnboardingVersion":  PinnedVersion,
		"projects": map[string]any{project: map[string]any{
			"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	data, _ := json.MarshalIndent(state, "", " ")
	return os.WriteFile(filepath.Join(configDir, ".claude.json"), data, 0o600)
}

var notAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// EncodeProject is the client's projects/ folder name for an absolute
// working directory: every character that is not an ASCII letter or digit
// becomes '-'. Longer names than 200 characters get a hash in the client;
// they are refused here rather than guessed.
func EncodeProject(dir string) (string, error) {
	enc := notAlnum.ReplaceAllString(dir, "-")
	if len(enc) > 200 {
		return "", fmt.Errorf("project path %s encodes to more than 200 characters: use a shorter --out", dir)
	}
	return enc, nil
}

// passedEnv are the only variables of the caller's environment the client
// sees, so that an outer Claude Code session or a real API key cannot leak
// into a run.
var passedEnv = []string{"PATH", "LANG", "LC_ALL", "TMPDIR", "TZ", "CI", "TERM"}

// offlineEnv keeps the client offline and quiet: with these set its debug
// log shows no request to any host but the mock.
var offlineEnv = []string{
	"ANTHROPIC_API_KEY=sk-ant-mock-key",
	"DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1",
	"DISABLE_AUTOUPDATER=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
	"CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false",
}

// ClientEnviron is the clean environment of a run: the passed-through
// variables, the offline ones, HOME, CLAUDE_CONFIG_DIR, the mock's URL and
// REALCLIENT_OUT (for hooks that want to leave files there); extra
// ("K=V") comes last and wins.
func ClientEnviron(home, configDir, baseURL, out string, extra ...string) []string {
	var env []string
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	env = append(env, offlineEnv...)
	env = append(env, "HOME="+home, "CLAUDE_CONFIG_DIR="+configDir, "ANTHROPIC_BASE_URL="+baseURL,
		"REALCLIENT_OUT="+out)
	return append(env, extra...)
}

// RunResult is how a client run ended.
type RunResult struct {
	ExitCode int  // -1 when it timed out or was killed
	TimedOut bool // killed after the timeout
}

// RunClient runs bin with args in dir, with env, stdin /dev/null and its
// output in out/stdout.txt and out/stderr.txt. The client runs in its own
// process group; on timeout (or ctx's end) the whole group is killed.
// The error is only for a client that could not be started.
func RunClient(ctx context.Context, bin string, args []string, dir string, env []string, out string, timeout time.Duration) (RunResult, error) {
	so, err := os.Create(filepath.Join(out, "stdout.txt"))
	if err != nil {
		return RunResult{}, err
	}
	defer so.Close()
	se, err := os.Create(filepath.Join(out, "stderr.txt"))
	if err != nil {
		return RunResult{}, err
	}
	defer se.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, so, se
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return RunResult{}, fmt.Errorf("cannot start the client %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res RunResult
	select {
	case err = <-done:
	case <-timer.C:
		res.TimedOut = true
		killGroup(cmd)
		err = <-done
	case <-ctx.Done():
		killGroup(cmd)
		err = <-done
	}
	res.ExitCode = 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		res.ExitCode = -1
	}
	if res.TimedOut {
		res.ExitCode = -1
	}
	return res, nil
}
