package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"ccm/internal/testutil"
)

// TestMain registers ccm as a command that testscript scripts can exec
// in-process, without building a binary per test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ccm": func() { os.Exit(ccmMain(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs every CLI scenario in testdata/script. Each script runs
// in its own work dir with HOME, CLAUDE_CONFIG_DIR, CCM_CACHE_DIR and
// CCM_HOME pointing inside it, so no test touches the real ~/.claude.
// $CORPUS is the shared corpus config dir (read-only); scripts that read
// it check the [corpus] condition, false on a plain clone without
// ../shared, and say that they did not run.
func TestScripts(t *testing.T) {
	shared, haveCorpus := testutil.LookupShared(t)
	corpus := filepath.Join(shared, "corpus", "claude-config")
	if !haveCorpus {
		t.Logf("corpus scripts not run: no corpus at %s", corpus)
	}
	// [tmpfs]: a small tmpfs can be mounted (root on Linux), to fill a
	// disk for real.
	unmount, err := testutil.MountTmpfs(t.TempDir(), 1<<20)
	haveTmpfs := err == nil
	if haveTmpfs {
		unmount()
	} else {
		t.Logf("full-disk scripts not run: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// [corpus]: the shared corpus is there. [root]: running as root,
		// for whom a folder's mode does not stop a write.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "corpus":
				return haveCorpus, nil
			case "root":
				return os.Geteuid() == 0, nil
			case "tmpfs":
				return haveTmpfs, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			// Claude Code has run once: its config dir exists (a
			// script that wants none sets CLAUDE_CONFIG_DIR elsewhere).
			if err := os.MkdirAll(filepath.Join(work, "home", ".claude"), 0o700); err != nil {
				return err
			}
			env.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(work, "home", ".claude"))
			env.Setenv("CCM_CACHE_DIR", filepath.Join(work, "home", ".claude", "cache", "ccm"))
			env.Setenv("CCM_HOME", filepath.Join(work, "home", ".claude", "ccm"))
			env.Setenv("CORPUS", corpus)
			return nil
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// flipbyte FILE OFFSET: change one bit of the byte at OFFSET, as
			// a damaged disk or a tampered file would.
			"flipbyte": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: flipbyte FILE OFFSET")
				}
				off, err := strconv.Atoi(args[1])
				ts.Check(err)
				data, err := os.ReadFile(ts.MkAbs(args[0]))
				ts.Check(err)
				if off >= len(data) {
					ts.Fatalf("%s has %d bytes", args[0], len(data))
				}
				data[off] ^= 0x10
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o600))
			},
			// glob1 VAR PATTERN: set VAR to the one file PATTERN matches.
			"glob1": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: glob1 VAR PATTERN")
				}
				m, err := filepath.Glob(ts.MkAbs(args[1]))
				ts.Check(err)
				if len(m) != 1 {
					ts.Fatalf("%s matches %d files: %v", args[1], len(m), m)
				}
				ts.Setenv(args[0], m[0])
			},
			// tmpfs SIZE DIR: mount a tmpfs of SIZE bytes on DIR (created),
			// unmounted when the script ends.
			"tmpfs": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: tmpfs SIZE DIR")
				}
				size, err := strconv.ParseInt(args[0], 10, 64)
				ts.Check(err)
				dir := ts.MkAbs(args[1])
				ts.Check(os.MkdirAll(dir, 0o700))
				unmount, err := testutil.MountTmpfs(dir, size)
				ts.Check(err)
				ts.Defer(unmount)
			},
			// fill FILE: write zeros to FILE until its disk is full.
			"fill": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: fill FILE")
				}
				f, err := os.Create(ts.MkAbs(args[0]))
				ts.Check(err)
				buf := make([]byte, 4096)
				for {
					if _, err := f.Write(buf); err != nil {
						if !errors.Is(err, syscall.ENOSPC) {
							ts.Fatalf("fill: %v", err)
						}
						break
					}
				}
				// Small files fit in what the last block left: fill by byte.
				for {
					if _, err := f.Write(buf[:1]); err != nil {
						break
					}
				}
				ts.Check(f.Close())
			},
			// mtime AGE FILE...: set the files' modification time to AGE
			// (a Go duration) ago, as old sessions have.
			"mtime": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: mtime AGE FILE...")
				}
				d, err := time.ParseDuration(args[0])
				ts.Check(err)
				t := time.Now().Add(-d)
				for _, f := range args[1:] {
					ts.Check(os.Chtimes(ts.MkAbs(f), t, t))
				}
			},
		},
	})
}

// sharedCommand: a ccm inside the project is called relative to it, one
// outside as "ccm" from PATH, with a warning when PATH has none.
func TestSharedCommand(t *testing.T) {
	proj := t.TempDir()
	var w strings.Builder
	if got := sharedCommand(filepath.Join(proj, "bin", "ccm"), proj, &w); got != `"$CLAUDE_PROJECT_DIR/bin/ccm"` {
		t.Errorf("in the project: %s", got)
	}
	t.Setenv("PATH", t.TempDir())
	if got := sharedCommand("/opt/x/ccm", proj, &w); got != "ccm" {
		t.Errorf("outside the project: %s", got)
	}
	if !strings.Contains(w.String(), "ccm: warning: ccm is not on PATH") {
		t.Errorf("no warning without ccm on PATH: %q", w.String())
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ccm"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	w.Reset()
	sharedCommand("/opt/x/ccm", proj, &w)
	if w.Len() != 0 {
		t.Errorf("a warning with ccm on PATH: %q", w.String())
	}
}
