//go:build unix

// SIGKILL at any point of a purge, through the CLI: the transcript is the
// original or the purged file, never anything between, and every stub's
// content is in the store (claude-context-manager lost lines to a kill,
// docs/earlier-tools.md).

package purge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/internal/synth"
	"ccm/internal/testutil"
	"ccm/purge/restore"
	"ccm/transcript/rewrite"
)

// claude-context-manager had no atomic write: a crash mid-rewrite left a
// truncated transcript (and truncated blobs that dedup trusted). ccm purge is
// SIGKILLed at random points: the path always holds the original or the
// complete purged file, a purged file has its backup, every stored blob
// verifies, and the next purge completes with the same result.
func TestKillDuringPurge(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "orig.jsonl")
	genFile(t, src, synth.Options{Seed: 102, TargetBytes: 24 << 20, Thinking: true, Progress: true, Images: true, Version: "2.1.39",
		Defects: []synth.Defect{synth.DanglingParent, synth.OrphanToolUse, synth.TornLastLine}})
	orig := readFile(t, src)
	origSum := sum(orig)

	// A complete run gives the reference result, and its duration.
	ref := newCLI(t, filepath.Join(base, "ref"))
	refPath := filepath.Join(base, "ref", ".claude", "projects", "-p", "s.jsonl")
	os.MkdirAll(filepath.Dir(refPath), 0o700)
	testutil.CopyFile(t, src, refPath)
	start := time.Now()
	if code, _, stderr := ref.run("purge", "--no-tokens", refPath); code != 0 {
		t.Fatalf("reference purge: exit %d: %s", code, stderr)
	}
	took := time.Since(start)
	purged := readFile(t, refPath)
	purgedSum := sum(purged)
	if purgedSum == origSum {
		t.Fatal("the reference purge changed nothing")
	}
	mustCheck(t, purged, false)

	rng := rand.New(rand.NewPCG(102, uint64(time.Now().UnixNano())))
	outcomes := map[string]int{}
	for i := 0; i < 10; i++ {
		home := filepath.Join(base, fmt.Sprintf("run%d", i))
		c := newCLI(t, home)
		p := filepath.Join(home, ".claude", "projects", "-p", "s.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		testutil.CopyFile(t, src, p)
		delay := time.Duration(rng.Int64N(int64(took + took/5)))
		cmd := c.command("purge", "--no-tokens", p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		got := readFile(t, p)
		switch sum(got) {
		case origSum:
			outcomes["original"]++
		case purgedSum:
			outcomes["purged"]++
			// One backup of the original; a kill between the rename and
			// the end of the wait for writers may also leave the old file's
			// -held link, which is the original too (clean removes it as a
			// backup).
			bs, _ := restore.Backups(p)
			var kept []string
			for _, b := range bs {
				if sum(readBackup(t, b)) != origSum {
					t.Errorf("run %d: %s is not the original", i, b)
				}
				if !strings.HasSuffix(b, rewrite.HeldTag) {
					kept = append(kept, b)
				}
			}
			if len(kept) != 1 {
				t.Errorf("run %d: purged file without one backup of the original (%v)", i, bs)
			}
		default:
			t.Errorf("run %d (killed after %v): the transcript is neither the original nor the purged file (%d bytes)", i, delay, len(got))
			continue
		}
		// Every blob in the store is whole.
		st, err := ccm.Open(filepath.Join(home, ".claude", "cache", "ccm"))
		if err != nil {
			t.Fatal(err)
		}
		if st.Exists() {
			l, err := st.List(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range l.Entries {
				if len(en.Files) == 0 {
					continue
				}
				if err := st.Verify(en.Key); err != nil {
					t.Errorf("run %d: %v", i, err)
				}
			}
		}
		temps := func() int {
			n := 0
			entries, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".ccm-tmp-") {
					n++
				}
			}
			return n
		}
		leftAfterKill := temps()
		// No lock is left held, nothing is corrupt: purging again works
		// and ends with the reference result.
		if code, _, stderr := c.run("purge", "--no-tokens", p); code != 0 {
			t.Errorf("run %d: purge after the kill: exit %d: %s", i, code, stderr)
		}
		if sum(readFile(t, p)) != purgedSum {
			t.Errorf("run %d: purge after the kill gave a different file", i)
		}
		if n := temps(); n > 0 {
			outcomes["temp files left"] += n
			t.Logf("run %d: %d temp transcripts left by the kill, %d after the next purge", i, leftAfterKill, n)
		}
		for _, l := range splitLines(readFile(t, p)) {
			for _, s := range stubsIn(l) {
				if err := st.Verify(s.Key); err != nil {
					t.Errorf("run %d: stub %s: %v", i, s.Key, err)
				}
			}
		}
		os.RemoveAll(home)
	}
	t.Logf("reference purge took %v; outcomes %v", took, outcomes)
}
