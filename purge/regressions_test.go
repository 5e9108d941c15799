package purge

// Regression tests for the defects of claude-context-manager's purge
// (docs/earlier-tools.md): each comment says what that tool did, and the
// test holds what ccm does instead. Appends lost during the rewrite and
// the missing atomic write are in safety_test.go and safety_kill_test.go,
// where they need a second process; the rest of the defects are in
// regressions_repair_test.go and regressions_output_test.go.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/internal/fsutil"
	"ccm/internal/synth"
	"ccm/transcript"
	"ccm/transcript/rewrite"
)

// claude-context-manager: no locking between hooks, purge and prune. A purge
// holds the store's shared lock while it writes blobs, so a prune (exclusive
// lock) waits; and two purges of one transcript never run at once.
func TestLocking(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 103, Turns: 10, Images: true})
	ctx := context.Background()

	t.Run("store locked by a prune", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		// Create the store, then hold it exclusively as prune does.
		if _, err := e.store.Put(ctx, []byte("x"), ccm.Source{}, ccm.PinNone, ""); err != nil {
			t.Fatal(err)
		}
		unlock, err := e.store.LockExclusive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		e.store.LockWait = 200 * time.Millisecond
		_, err = File(ctx, p, e.opts())
		if !errors.Is(err, ccm.ErrLocked) {
			t.Errorf("purge with the store locked: %v, want ccm.ErrLocked", err)
		}
		if !bytes.Equal(readFile(t, p), in) {
			t.Error("the transcript changed")
		}
		assertNoTemp(t, e.dir)
	})

	t.Run("transcript locked by another purge", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		o := e.opts()
		o.LockWait = 100 * time.Millisecond
		// Another ccm holds the transcript's sidecar lock.
		other := o
		other.LockWait = time.Second
		release := holdTranscriptLock(t, p, o.LockDir)
		_, err := File(ctx, p, o)
		release()
		if !errors.Is(err, ErrLocked) {
			t.Errorf("second purge: %v, want ErrLocked", err)
		}
		if !bytes.Equal(readFile(t, p), in) {
			t.Error("the transcript changed")
		}
		// Released, it goes through; the lock is never on the transcript
		// itself (its inode is replaced).
		if _, err := File(ctx, p, other); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(o.LockDir); len(entries) == 0 {
			t.Error("no sidecar lock file in the lock dir")
		}
	})

	t.Run("a prune waits for a running purge", func(t *testing.T) {
		e := newEnv(t)
		p := e.write("s.jsonl", in)
		// The purge's stubbing holds the store; an exclusive lock taken
		// afterwards must see every blob the new transcript names.
		if _, err := File(ctx, p, e.opts()); err != nil {
			t.Fatal(err)
		}
		unlock, err := e.store.LockExclusive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		for _, l := range splitLines(readFile(t, p)) {
			for _, st := range stubsIn(l) {
				if err := e.store.Verify(st.Key); err != nil {
					t.Errorf("stub %s: %v", st.Key, err)
				}
			}
		}
	})
}

// holdTranscriptLock takes the sidecar lock another ccm would hold.
func holdTranscriptLock(t *testing.T, path, lockDir string) func() {
	t.Helper()
	if err := os.MkdirAll(lockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Same name as lockPath: any ccm process computes it the same way.
	l, err := fsutil.LockFile(context.Background(), rewrite.LockPath(lockDir, path), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	return func() { l.Unlock() }
}

// assertNoTemp fails when a temp file is left in dir.
func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "ccm-tmp") || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

// snapshot lists every file and directory under root with its size and
// mtime.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		out[p] = fi.Mode().String() + " " + fi.ModTime().String() + " " + string(rune(fi.Size()))
		return nil
	})
	return out
}

// claude-context-manager: --dry-run wrote the cache. A dry run has no side
// effect at all: no store, no backup, no temp file, no lock file, the
// transcript's bytes and mtime unchanged; it still reports what would change.
func TestDryRunNoSideEffects(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 104, Turns: 16, Thinking: true, Progress: true, Images: true, Defects: synth.AllDefects})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(filepath.Dir(e.dir))
	before := snapshot(t, base)
	o := e.opts()
	o.DryRun = true
	o.Tokens = true
	rep, err := File(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, base); len(after) != len(before) {
		for k := range after {
			if _, ok := before[k]; !ok {
				t.Errorf("dry run created %s", k)
			}
		}
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Errorf("dry run changed %s", k)
			}
		}
	}
	if e.store.Exists() {
		t.Error("dry run created the store")
	}
	fi, _ := os.Stat(p)
	if !fi.ModTime().Equal(old) {
		t.Errorf("mtime changed: %v -> %v", old, fi.ModTime())
	}
	if !bytes.Equal(readFile(t, p), in) {
		t.Error("dry run changed the transcript")
	}
	// What it would do.
	if !rep.Changed || !rep.DryRun || rep.Backup != "" {
		t.Errorf("report: changed=%v dry=%v backup=%q", rep.Changed, rep.DryRun, rep.Backup)
	}
	if rep.Stubs == 0 || rep.ThinkingRemoved == 0 || rep.DroppedProgress == 0 || rep.BytesAfter >= rep.BytesBefore {
		t.Errorf("dry run reports no savings: %+v", rep)
	}
	if rep.TokensBefore == nil || rep.TokensAfter == nil || rep.TokensAfter.Tokens >= rep.TokensBefore.Tokens {
		t.Errorf("dry run token estimate: %+v -> %+v", rep.TokensBefore, rep.TokensAfter)
	}
	// And it says exactly what the real purge then does.
	o.DryRun = false
	o.Tokens = false
	real, out := e.purge(p, o)
	if real.BytesAfter != rep.BytesAfter || real.Stats != rep.Stats {
		t.Errorf("dry run said %d bytes %+v, purge did %d bytes %+v", rep.BytesAfter, rep.Stats, real.BytesAfter, real.Stats)
	}
	if int64(len(out)) != real.BytesAfter {
		t.Errorf("report %d bytes, file %d", real.BytesAfter, len(out))
	}
}

// claude-context-manager: backup names had 1-second resolution (two runs in
// one second overwrote the first backup), and the backup was made after
// processing.
func TestBackupNamesUnique(t *testing.T) {
	e := newEnv(t)
	v1 := thinkingFixture()
	v2 := stubFixture()
	p := e.write("s.jsonl", v1)
	o := e.opts()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	o.Now = func() time.Time { return now }
	var backups []string
	for i, in := range [][]byte{v1, v2, v1} {
		if i > 0 {
			// Claude Code rewrote the session meanwhile (same second).
			if err := os.WriteFile(p, in, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		rep, _ := e.purge(p, o)
		if rep.Backup == "" {
			t.Fatalf("run %d: no backup", i)
		}
		if !bytes.Equal(readBackup(t, rep.Backup), in) {
			t.Errorf("run %d: backup %s is not the file as it was", i, rep.Backup)
		}
		backups = append(backups, rep.Backup)
	}
	seen := map[string]bool{}
	for _, b := range backups {
		if seen[b] {
			t.Errorf("backup name %s used twice", b)
		}
		seen[b] = true
		if !strings.HasPrefix(filepath.Base(b), "s.jsonl.backup.20260301_120000.000") {
			t.Errorf("backup name %s", b)
		}
	}
	// Every backup still holds its version.
	for i, in := range [][]byte{v1, v2, v1} {
		if !bytes.Equal(readBackup(t, backups[i]), in) {
			t.Errorf("backup %d was overwritten", i)
		}
	}
	// Backups are not transcripts: discovery must not pick them up.
	for _, b := range backups {
		if transcript.IsSessionFileName(filepath.Base(b)) {
			t.Errorf("%s looks like a session file", b)
		}
	}
}
