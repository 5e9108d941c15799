package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// migrateBin runs the built ccm's migrate in the fixture at root (home
// folder root/home, project root/proj), with extra environment, and
// returns its exit code (-1 when a signal killed it) and output.
func migrateBin(t *testing.T, root string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := migrateCmd(t, root, env, args...)
	out, err := cmd.CombinedOutput()
	return exitOf(t, err), string(out)
}

func migrateCmd(t *testing.T, root string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(builtBinary(t), append([]string{"migrate"}, args...)...)
	cmd.Dir = filepath.Join(root, "proj")
	cmd.Env = append(append(withoutCCMEnv(os.Environ()), "HOME="+filepath.Join(root, "home"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(root, "home", ".claude")), env...)
	return cmd
}

func withoutCCMEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "CCM_") && !strings.HasPrefix(e, "CLAUDE_") && !strings.HasPrefix(e, "AGENTI") && !strings.HasPrefix(e, "HOME=") {
			out = append(out, e)
		}
	}
	return out
}

func exitOf(t *testing.T, err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return ee.ExitCode()
	}
	t.Fatal(err)
	return 0
}

// newMigrateRoot copies a fixture into a fresh temp dir.
func newMigrateRoot(t *testing.T, tool string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "migrate", tool))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "proj"), 0o700)
	return root
}

// migrateStates are a fixture's state before and after an uninterrupted
// migration (snapshot: every file's mode and content, backups and lock
// files aside).
func migrateStates(t *testing.T, tool string) (before, after map[string]string) {
	root := newMigrateRoot(t, tool)
	before = rootSnapshot(t, root)
	if code, out := migrateBin(t, root, nil, "--yes"); code != 0 {
		t.Fatalf("migrate --yes: exit %d\n%s", code, out)
	}
	return before, rootSnapshot(t, root)
}

// checkRecovery finishes what a killed run left at root, alternately by
// --undo (which must give the state before) and --yes (the state after,
// which --undo then turns back into the state before). No temp file may
// be left either way.
func checkRecovery(t *testing.T, root string, undo bool, before, after map[string]string, what string) {
	t.Helper()
	if undo {
		// Killed before its journal was written, it changed nothing: there
		// is no migration to undo.
		if code, out := migrateBin(t, root, nil, "--undo"); code != 0 && !strings.Contains(out, "no migration to undo") {
			t.Fatalf("%s, then --undo: exit %d\n%s", what, code, out)
		}
		if d := diffSnapshots(before, rootSnapshot(t, root)); len(d) > 0 {
			t.Fatalf("%s, then --undo: not the state before: %v", what, d)
		}
		return
	}
	if code, out := migrateBin(t, root, nil, "--yes"); code != 0 {
		t.Fatalf("%s, then --yes: exit %d\n%s", what, code, out)
	}
	if d := diffSnapshots(after, rootSnapshot(t, root)); len(d) > 0 {
		t.Fatalf("%s, then --yes: not the migrated state: %v", what, d)
	}
	if code, out := migrateBin(t, root, nil, "--undo"); code != 0 {
		t.Fatalf("%s, then --yes and --undo: exit %d\n%s", what, code, out)
	}
	if d := diffSnapshots(before, rootSnapshot(t, root)); len(d) > 0 {
		t.Fatalf("%s, then --yes and --undo: not the state before: %v", what, d)
	}
}

// TestMigrateKilledAtEveryStep kills ccm migrate --yes (then ccm migrate
// --undo) with SIGKILL at each of its steps in turn, for each fixture:
// whatever the step, --undo then gives the state before byte for byte,
// and --yes the same state as an uninterrupted migration.
func TestMigrateKilledAtEveryStep(t *testing.T) {
	for _, tool := range []string{"claude-context-manager", "agentihooks", "claude-agentic-framework"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			before, after := migrateStates(t, tool)
			for _, undo := range []bool{true, false} {
				for k := 1; ; k++ {
					root := newMigrateRoot(t, tool)
					code, out := migrateBin(t, root, []string{fmt.Sprintf("CCM_MIGRATE_CRASH_AT=%d", k)}, "--yes")
					if code == 0 {
						if k < 5 {
							t.Fatalf("only %d steps", k-1)
						}
						break
					}
					if code != -1 {
						t.Fatalf("step %d: exit %d\n%s", k, code, out)
					}
					checkRecovery(t, root, undo, before, after, fmt.Sprintf("killed at step %d", k))
				}
			}
			// An undo killed at each of its steps: the next undo finishes it.
			for k := 1; ; k++ {
				root := newMigrateRoot(t, tool)
				if code, out := migrateBin(t, root, nil, "--yes"); code != 0 {
					t.Fatalf("migrate --yes: exit %d\n%s", code, out)
				}
				code, out := migrateBin(t, root, []string{fmt.Sprintf("CCM_MIGRATE_CRASH_AT=%d", k)}, "--undo")
				if code == 0 {
					break
				}
				if code != -1 {
					t.Fatalf("undo, step %d: exit %d\n%s", k, code, out)
				}
				checkRecovery(t, root, true, before, after, fmt.Sprintf("undo killed at step %d", k))
			}
		})
	}
}

// TestMigrateRandomKills kills ccm migrate --yes with SIGKILL after a
// random delay, 50 times, and recovers each by --undo or --yes in turn.
// It takes about 15 s: it runs with CCM_KILL_TRIALS=1 only
// (scripts/trials-migrate.sh sets it, and runs more trials of its own).
func TestMigrateRandomKills(t *testing.T) {
	if os.Getenv("CCM_KILL_TRIALS") == "" {
		t.Skip("50 kill -9 trials: run with CCM_KILL_TRIALS=1 (scripts/trials-migrate.sh does)")
	}
	const tool = "claude-context-manager"
	before, after := migrateStates(t, tool)
	// How long a whole run takes, to spread the kills over it.
	root := newMigrateRoot(t, tool)
	start := time.Now()
	if code, out := migrateBin(t, root, nil, "--yes"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	span := time.Since(start)
	rng := rand.New(rand.NewPCG(1, 2))
	killed := 0
	for i := 0; i < 50; i++ {
		root := newMigrateRoot(t, tool)
		cmd := migrateCmd(t, root, nil, "--yes")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span) * 7 / 10)))
		cmd.Process.Kill()
		if exitOf(t, cmd.Wait()) == -1 {
			killed++
		}
		checkRecovery(t, root, i%2 == 0, before, after, fmt.Sprintf("trial %d", i))
	}
	t.Logf("50 trials over %s runs: %d killed mid-way, %d finished first; every one recovered", span.Round(time.Millisecond), killed, 50-killed)
}

// rootSnapshot is snapshot with root written as $ROOT in the contents, so
// the states of two copies of a fixture compare.
func rootSnapshot(t *testing.T, root string) map[string]string {
	m := snapshot(t, root)
	for k, v := range m {
		m[k] = strings.ReplaceAll(v, root, "$ROOT")
	}
	return m
}

// TestMigrateInterruptedNamed: after a migration killed mid-way, ccm
// migrate without --yes (and with --dry-run) names the interrupted
// migration and how to finish it, and changes nothing.
func TestMigrateInterruptedNamed(t *testing.T) {
	root := newMigrateRoot(t, "agentihooks")
	if code, out := migrateBin(t, root, []string{"CCM_MIGRATE_CRASH_AT=5"}, "--yes"); code != -1 {
		t.Fatalf("not killed at step 5: exit %d\n%s", code, out)
	}
	killed := rootSnapshot(t, root)
	for _, args := range [][]string{nil, {"--dry-run"}} {
		code, out := migrateBin(t, root, nil, args...)
		if code != 0 || !strings.Contains(out, "a migration was interrupted") || !strings.Contains(out, "ccm migrate --yes puts back what it changed and migrates again") {
			t.Errorf("migrate %v: exit %d\n%s", args, code, out)
		}
		if d := diffSnapshots(killed, rootSnapshot(t, root)); len(d) > 0 {
			t.Errorf("migrate %v changed %v", args, d)
		}
	}
}
