package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"ccm/ccm/stub"
	"ccm/internal/fsutil"
	"ccm/internal/synth"
	"ccm/internal/testutil"
)

// The promise, end to end, as a cron user runs ccm: purge everything,
// archive half the sessions, maintain with limits so small that only
// referenced content is left, gc, then unarchive every archived session
// and restore every transcript: every stub comes back, and restore
// --backup gives the original bytes. Then --evict-referenced does evict,
// and restore names each stub whose content went. On a copy of the corpus
// config dir when it is there, and always on a generated one.
func TestPromiseCorpus(t *testing.T) {
	shared, ok := testutil.LookupShared(t)
	if !ok {
		t.Skip("corpus not run: no corpus under ../shared (the generated config dir runs in TestPromiseGenerated)")
	}
	cfg := filepath.Join(t.TempDir(), "claude")
	testutil.CopyTree(t, filepath.Join(shared, "corpus", "claude-config"), cfg)
	checkPromise(t, cfg)
}

func TestPromiseGenerated(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude")
	for i := 0; i < 8; i++ {
		o := synth.Benchmark(int64(i+1), int64(60_000+40_000*i))
		o.Seed = int64(i + 1)
		dir := filepath.Join(cfg, "projects", fmt.Sprintf("-home-dev-gen%d", i%3))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		m, err := synth.Generate(&b, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.SessionID+".jsonl"), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	checkPromise(t, cfg)
}

func checkPromise(t *testing.T, cfg string) {
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	t.Setenv("CCM_CACHE_DIR", "")
	t.Setenv("CCM_HOME", "")
	t.Setenv("CCM_ARCHIVE_DIR", "")
	t.Setenv("CCM_COMPRESSION", "")
	t.Setenv("CLAUDECODE", "")
	projects := filepath.Join(cfg, "projects")

	// Every file a few hours old, half the sessions two days old.
	orig := map[string][32]byte{}
	var mains []string
	filepath.WalkDir(projects, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		orig[p] = sha256.Sum256(b)
		at := time.Now().Add(-3 * time.Hour)
		os.Chtimes(p, at, at)
		if filepath.Dir(p) != projects && filepath.Dir(filepath.Dir(p)) == projects && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), "agent-") {
			mains = append(mains, p)
		}
		return nil
	})
	sort.Strings(mains)
	old := map[string]bool{}
	for i, p := range mains {
		if i%2 == 0 {
			at := time.Now().Add(-48 * time.Hour)
			os.Chtimes(p, at, at)
			old[strings.TrimSuffix(filepath.Base(p), ".jsonl")] = true
		}
	}

	out := ccmOK(t, "purge", "--all")
	if !strings.HasPrefix(out, "purged ") {
		t.Fatalf("purge: %s", out)
	}
	stubs := countStubs(t, projects)
	if stubs == 0 {
		t.Fatal("the purge made no stub: nothing to check")
	}

	out = ccmOK(t, "archive", "--older-than", "1d")
	if want := fmt.Sprintf("archived %d of %d sessions", len(old), len(old)); !strings.Contains(out, want) {
		t.Fatalf("archive: %s (want %q)", out, want)
	}

	t.Setenv("CCM_PRUNE_MAX_SIZE_MB", "0.1")
	t.Setenv("CCM_PRUNE_MAX_AGE_DAYS", "0.0001")
	out = ccmOK(t, "maintain")
	if !strings.Contains(out, "over the limit") || !strings.Contains(out, "--evict-referenced") || strings.Count(out, "\n") != 1 {
		t.Errorf("maintain: want one line saying what keeps the store over its limit, got %q", out)
	}
	t.Setenv("CCM_PRUNE_MAX_SIZE_MB", "")
	t.Setenv("CCM_PRUNE_MAX_AGE_DAYS", "")
	ccmOK(t, "prune", "--gc-unreferenced")

	var ids []string
	for id := range old {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ccmOK(t, append([]string{"unarchive"}, ids...)...)
	out = ccmOK(t, "restore", projects)
	if strings.Contains(out, "stays a stub") {
		t.Fatalf("restore left stubs:\n%s", out)
	}
	if n := countStubs(t, projects); n != 0 {
		t.Fatalf("%d stubs left after restore (of %d)", n, stubs)
	}

	// restore --backup: the state before the purge, byte for byte, for
	// every transcript the purge changed (it kept a zstd backup).
	backups := 0
	for p, sum := range orig {
		if !strings.HasSuffix(p, ".jsonl") {
			continue
		}
		if bs, _ := filepath.Glob(p + ".backup.*"); len(bs) == 0 {
			continue
		}
		backups++
		ccmOK(t, "restore", "--backup", p)
		b, err := os.ReadFile(p)
		if err != nil || sha256.Sum256(b) != sum {
			t.Errorf("%s: restore --backup did not give the original bytes (%v)", p, err)
		}
	}
	if backups == 0 {
		t.Fatal("no backup found")
	}

	// --evict-referenced does evict; restore names every stub whose
	// content went.
	ccmOK(t, "purge", "--all")
	stubs = countStubs(t, projects)
	code, out, errs := runCCM("", "prune", "--max-size-mb", "0", "--evict-referenced")
	if code != 0 && code != 1 || !strings.Contains(out, "deleted") {
		t.Fatalf("prune --evict-referenced: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCCM("", "--json", "restore", projects)
	if code != 1 {
		t.Fatalf("restore after eviction: exit %d, want 1", code)
	}
	var batch struct {
		Reports []struct {
			Restored int                       `json:"stubs_restored"`
			Missing  []struct{ Reason string } `json:"stubs_missing"`
		} `json:"reports"`
	}
	if err := json.Unmarshal([]byte(out), &batch); err != nil {
		t.Fatal(err)
	}
	reps := batch.Reports
	named, restored := 0, 0
	evicted := regexp.MustCompile(`^its content was evicted by ccm prune --evict-referenced on \d{4}-\d\d-\d\d \d\d:\d\d \((age|size) rule\)$`)
	for _, r := range reps {
		restored += r.Restored // pinned blobs stay: pins hold under eviction
		for _, m := range r.Missing {
			if !evicted.MatchString(m.Reason) {
				t.Errorf("a stub stays a stub with reason %q", m.Reason)
			}
			named++
		}
	}
	if named == 0 || named+restored != stubs {
		t.Errorf("restore named %d stubs whose content went and restored %d (pinned), want %d in all", named, restored, stubs)
	}
}

// ccmOK runs ccm and fails the test unless it exits 0.
func ccmOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCCM("", args...)
	if code != 0 {
		t.Fatalf("ccm %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// countStubs counts the stub markers in every transcript under dir.
func countStubs(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte(stub.Start))
		return nil
	})
	return n
}

// A store locked by another ccm during maintain: what archive and clean
// did is printed, then one line saying the store is locked, exit 4, and
// no blob or transcript lost. The same when only the reference index is
// locked.
func TestMaintainStoreLocked(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude")
	tr, _ := generatedSession(t, cfg, 7, 200_000)
	t.Setenv("CCM_PRUNE_MAX_SIZE_MB", "0")
	t.Setenv("CCM_PRUNE_MAX_AGE_DAYS", "0")
	ccmOK(t, "purge", "--all")
	// An old backup for clean to remove.
	old := tr + ".backup.20200101_000000.000"
	os.WriteFile(old, []byte("{}\n"), 0o600)
	purged, _ := os.ReadFile(tr)
	store := filepath.Join(cfg, "cache", "ccm")
	for _, lockFile := range []string{filepath.Join(store, "lock"), filepath.Join(store, "refs", "lock")} {
		lk, err := fsutil.LockFile(t.Context(), lockFile, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCCM("", "maintain", "--lock-wait", "200ms")
		lk.Unlock()
		if code != exitLocked || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ccm: prune: ") || !strings.Contains(errs, "locked") {
			t.Errorf("%s held: exit %d, stderr %q; want exit 4 and one line", lockFile, code, errs)
		}
		if lockFile == filepath.Join(store, "lock") && !strings.Contains(out, "removed 1 backups") {
			t.Errorf("the summary of what maintain did is missing: %q", out)
		}
		if got, _ := os.ReadFile(tr); !bytes.Equal(got, purged) {
			t.Fatal("the transcript changed")
		}
		if out := ccmOK(t, "restore", "--dry-run", tr); strings.Contains(out, "stays a stub") {
			t.Fatalf("a blob was lost:\n%s", out)
		}
	}
}

// generatedSession writes a generated session (synth.Benchmark of seed,
// about size bytes) into cfg's project folder -home-dev-p, last written 3
// hours ago, and points ccm at cfg with its default store and home. It
// returns the transcript and the session id.
func generatedSession(t *testing.T, cfg string, seed, size int64) (path, id string) {
	t.Helper()
	dir := filepath.Join(cfg, "projects", "-home-dev-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	m, err := synth.Generate(&b, synth.Benchmark(seed, size))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, m.SessionID+".jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	t.Setenv("CCM_CACHE_DIR", "")
	t.Setenv("CCM_HOME", "")
	return path, m.SessionID
}
