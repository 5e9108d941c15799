package clean

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ccm/purge"
)

// TestPlanReasons builds a config dir (under a path with spaces and
// non-ASCII characters) holding one thing for each rule, plus things
// that must stay, and checks the plan names exactly the expected files,
// each with its reason, and that removing them leaves the rest.
func TestPlanReasons(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	root := filepath.Join(t.TempDir(), "my claude dir", "é")
	cfg := filepath.Join(root, "config")
	archives := filepath.Join(root, "archive")
	proj := filepath.Join(cfg, "projects", "-tmp-my-proj-caf-")
	const (
		keep  = "aaaaaaaa-0000-4000-8000-000000000001" // a normal session with backups
		zero  = "aaaaaaaa-0000-4000-8000-000000000002" // 0 bytes
		blank = "aaaaaaaa-0000-4000-8000-000000000003" // blank lines only
		gone  = "aaaaaaaa-0000-4000-8000-000000000004" // subagent folder, no transcript
		lost  = "aaaaaaaa-0000-4000-8000-000000000005" // backup, no transcript
		live  = "aaaaaaaa-0000-4000-8000-000000000006" // 0 bytes but written just now
	)
	write := func(path, data string, mtime time.Time) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	line := `{"type":"user","cwd":"/tmp/my proj/café","message":{"role":"user","content":"hi"}}` + "\n"
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	backup := func(id string, d time.Duration) string {
		stamp := ago(d).In(time.Local).Format(purge.BackupStamp)
		return write(filepath.Join(proj, id+".jsonl.backup."+stamp), line, ago(d))
	}
	day := 24 * time.Hour
	keepMain := write(filepath.Join(proj, keep+".jsonl"), line+line, ago(2*time.Hour))
	b1 := backup(keep, 1*day)
	b10 := backup(keep, 10*day)
	b40 := backup(keep, 40*day)
	temp := write(filepath.Join(proj, "."+keep+".jsonl.ccm-tmp-12345"), line, ago(time.Hour))
	zeroMain := write(filepath.Join(proj, zero+".jsonl"), "", ago(3*time.Hour))
	blankMain := write(filepath.Join(proj, blank+".jsonl"), "\n\n\n", ago(3*time.Hour))
	write(filepath.Join(proj, gone, "subagents", "agent-x.jsonl"), line, ago(5*day))
	lostBackup := backup(lost, 40*day)
	liveMain := write(filepath.Join(proj, live+".jsonl"), "", now)
	archTemp := write(filepath.Join(archives, "-tmp-my-proj-caf-", ".s.tar.zst.ccm-tmp-7"), "x", ago(time.Hour))
	freshArchTemp := write(filepath.Join(archives, "-tmp-my-proj-caf-", ".t.tar.zst.ccm-tmp-8"), "x", now)

	pol := Policy{OldBackups: true, BackupsOlderThan: 7 * day, CapBackups: true, KeepBackups: 2, Temps: true, Empty: true, Orphans: true}
	plan, errs, err := Decide(context.Background(), cfg, archives, pol, now)
	if err != nil || len(errs) > 0 {
		t.Fatalf("Decide: %v %v", err, errs)
	}
	want := map[string]string{
		b40:                       "purge backup 3 of 3, beyond the 2 newest kept",
		b10:                       "purge backup made 10d ago, over 7d",
		temp:                      "temp file of a killed ccm run, 1h old",
		zeroMain:                  "zero-byte session (left by a resume without a turn)",
		blankMain:                 "session with no record (blank lines only)",
		lostBackup:                "purge backup made 40d ago, over 7d (its transcript is gone)",
		filepath.Join(proj, gone): "subagent/tool-results folder of a session whose transcript " + gone + ".jsonl is gone",
		archTemp:                  "partial archive of a killed ccm run, 1h old",
	}
	got := map[string]string{}
	for _, it := range plan.Items {
		got[it.Path] = it.Reason
	}
	for p, r := range want {
		if got[p] != r {
			t.Errorf("%s: reason %q, want %q", p, got[p], r)
		}
	}
	for p, r := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("planned %s (%s), which must stay", p, r)
		}
	}
	spared := false
	for _, s := range plan.Spared {
		if s.Path == liveMain && s.Kind == "empty" && s.Reason == "their session was written in the last 2 minutes" {
			spared = true
		}
	}
	if !spared {
		t.Errorf("the live zero-byte session is not listed as spared: %+v", plan.Spared)
	}

	for _, it := range plan.Items {
		if err := plan.Remove(context.Background(), it, filepath.Join(root, "locks")); err != nil {
			t.Errorf("remove %s: %v", it.Path, err)
		}
	}
	for p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there after the clean", p)
		}
	}
	for _, p := range []string{keepMain, b1, liveMain, freshArchTemp} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
