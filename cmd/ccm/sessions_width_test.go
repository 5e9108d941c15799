package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/internal/ui"
	"ccm/sessions"
)

// widthConfigDir makes a config dir of generated sessions in projects
// with long paths, one of them in a folder whose name is not UTF-8 and
// whose records name no cwd (so the table shows the folder's name).
func widthConfigDir(t *testing.T) (dir string, ids []string) {
	t.Helper()
	dir = t.TempDir()
	for i := range 6 {
		cwd := fmt.Sprintf("/Users/someone/src/github.com/an-organisation/a-rather-long-repository-name-%d/worktrees/feature-%d", i, i)
		id := fmt.Sprintf("%08x-1111-4a2b-9d7e-123456789abc", 0xa0b0c0d0+i)
		folder := strings.NewReplacer("/", "-", ".", "-").Replace(cwd)
		if i == 5 {
			cwd, folder = "", "-tmp-caf\xe9-\xff\xfe-latin1" // a Latin-1 name, as an old tool may have made
		}
		p := filepath.Join(dir, "projects", folder)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := synth.Generate(&b, synth.Options{Seed: int64(i), Turns: 3, SessionID: id, Cwd: cwd}); err != nil {
			t.Fatal(err)
		}
		out := b.Bytes()
		if cwd == "" {
			out = bytes.ReplaceAll(out, []byte(`"cwd":"`), []byte(`"cwdx":"`))
		}
		path := filepath.Join(p, id+".jsonl")
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Duration(i+1) * 24 * time.Hour)
		os.Chtimes(path, old, old)
		ids = append(ids, id)
	}
	return dir, ids
}

// sessionsOn lists dir's sessions as a terminal gets them, at COLUMNS.
func sessionsOn(t *testing.T, dir, columns string, wide bool) string {
	t.Helper()
	t.Setenv("COLUMNS", columns)
	t.Setenv("LANG", "en_US.UTF-8")
	var out, errs bytes.Buffer
	o := sessionsOptions{globalOptions: globalOptions{ClaudeDir: dir, Stdout: &out, Stderr: &errs, Terminal: true, Wide: wide,
		ASCII: false}, Select: sessions.Selector{All: true}, Sort: "age", Now: time.Now()}
	o.CacheDir = filepath.Join(dir, "cache")
	t.Setenv("CCM_HOME", filepath.Join(dir, "ccm"))
	if err := runSessions(context.Background(), o); err != nil {
		t.Fatalf("sessions at COLUMNS=%s: %v (%s)", columns, err, errs.String())
	}
	return out.String()
}

// TestSessionsFitColumns: at COLUMNS=100 every line of ccm sessions is at
// most 100 cells wide, with 8-character ids and the middle of long paths
// cut; --wide prints ids and paths whole; COLUMNS=10 and a folder name
// that is not UTF-8 are shown without breaking the table.
func TestSessionsFitColumns(t *testing.T) {
	dir, ids := widthConfigDir(t)
	out := sessionsOn(t, dir, "100", false)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(ids)+2 { // the header, a row each, the note
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(ids)+2, out)
	}
	for _, l := range lines[:len(lines)-1] { // the note is prose, not a table line
		if w := ui.Width(l); w > 100 {
			t.Errorf("a line %d cells wide at COLUMNS=100: %q", w, l)
		}
	}
	for _, id := range ids {
		if !strings.Contains(out, " "+id[:8]+" ") || strings.Contains(out, id) {
			t.Errorf("the table does not show %s as its first 8 characters:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "…") || strings.Contains(out, "a-rather-long-repository-name-1/worktrees/feature-1") {
		t.Errorf("long project paths are not cut in the middle:\n%s", out)
	}
	if !strings.Contains(out, "/latin1  a0b0c0d5 ") {
		t.Errorf("the session in a folder whose name is not UTF-8 is not listed:\n%s", out)
	}

	wide := sessionsOn(t, dir, "100", true)
	for _, id := range ids {
		if !strings.Contains(wide, id) {
			t.Errorf("--wide does not show the whole id %s", id)
		}
	}
	if !strings.Contains(wide, "a-rather-long-repository-name-1/worktrees/feature-1") {
		t.Errorf("--wide cuts project paths:\n%s", wide)
	}
	// Its bytes that are not UTF-8 are shown as U+FFFD, one each.
	if !strings.Contains(wide, "/tmp/caf\uFFFD/\uFFFD\uFFFD/latin1 ") {
		t.Errorf("a folder name that is not UTF-8 is not shown with replacement characters:\n%s", wide)
	}

	// Too narrow for any table: the rows run over (the terminal wraps
	// them), nothing is lost but the columns that can go.
	narrow := sessionsOn(t, dir, "10", false)
	for _, id := range ids {
		if !strings.Contains(narrow, id[:8]) {
			t.Errorf("COLUMNS=10 lost session %s:\n%s", id, narrow)
		}
	}
	if n := len(strings.Split(strings.TrimSuffix(narrow, "\n"), "\n")); n != len(ids)+2 {
		t.Errorf("COLUMNS=10: %d lines, want %d", n, len(ids)+2)
	}
}

// TestSessionsFitColumnsCorpus: the real sessions of the corpus fit 100
// columns too.
func TestSessionsFitColumnsCorpus(t *testing.T) {
	shared, ok := testutil.LookupShared(t)
	if !ok {
		t.Skip("no corpus: ../shared is absent")
	}
	out := sessionsOn(t, filepath.Join(shared, "corpus", "claude-config"), "100", false)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 10 {
		t.Fatalf("only %d lines from the corpus", len(lines))
	}
	for _, l := range lines[:len(lines)-1] {
		if w := ui.Width(l); w > 100 {
			t.Errorf("a line %d cells wide at COLUMNS=100: %q", w, l)
		}
	}
}
