package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRestoreBackupBatchSkipsUnpurged: restore --backup over every
// session brings back the one a purge changed and says it skipped the
// one no purge changed (it has no backup), without counting it as a
// failure; the same session named alone is an error.
func TestRestoreBackupBatchSkipsUnpurged(t *testing.T) {
	claude, _ := storeEnv(t)
	t.Setenv("CCM_HOME", filepath.Join(t.TempDir(), "home"))
	dir := filepath.Join(claude, "projects", "-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "sample-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	purged := filepath.Join(dir, "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	untouched := filepath.Join(dir, "bbbbbbbb-0000-4000-8000-000000000002.jsonl")
	for _, p := range []string{purged, untouched} {
		if err := os.WriteFile(p, orig, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := runCCM("", "purge", purged); code != 0 {
		t.Fatalf("purge: exit %d: %s", code, errs)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, p := range []string{purged, untouched} {
		os.Chtimes(p, old, old)
	}
	code, out, errs := runCCM("", "restore", "--backup", "-v", "--all")
	if code != 0 || errs != "" {
		t.Errorf("restore --backup --all: exit %d, stderr %q", code, errs)
	}
	// The summary first, counting it as skipped; -v then names it.
	if !strings.HasPrefix(out, "restored 1 of 2 files (0 unchanged, 1 skipped, 0 failed): ") {
		t.Errorf("the summary does not come first, or does not count the session without a backup as skipped:\n%s", out)
	}
	if !strings.Contains(out, "\nskipped "+untouched+": no backup (no purge changed it)\n") {
		t.Errorf("the session without a backup is not said to be skipped:\n%s", out)
	}
	if got, _ := os.ReadFile(purged); !bytes.Equal(got, orig) {
		t.Error("the purged session did not come back byte for byte")
	}
	code, _, errs = runCCM("", "restore", "--backup", untouched)
	if code != 2 || !strings.HasPrefix(errs, "ccm: no backup of "+untouched+" (looked for") || strings.Count(errs, untouched) != 1 {
		t.Errorf("restore --backup of the session alone: exit %d, %q", code, errs)
	}
}
