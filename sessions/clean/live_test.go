package clean

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/testutil"
)

// Clean asks the one live rule whether a session is live: an old empty
// session that another process holds open for writing is kept, with why;
// under CCM_LIVE_DETECT=portable only its modification time counts, and
// it is planned for removal like any old empty session.
func TestCleanLiveAndThePortableSwitch(t *testing.T) {
	if _, ok := fsutil.OpenForWriting(t.TempDir()); !ok {
		t.Skip("this system cannot tell which files are held open")
	}
	cfg := filepath.Join(t.TempDir(), "config")
	path := filepath.Join(cfg, "projects", "-p", "aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	testutil.HoldOpenForWriting(t, path)

	plan, errs, err := Decide(context.Background(), cfg, "", Policy{Empty: true}, time.Now())
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	if len(plan.Items) != 0 || len(plan.Spared) != 1 || plan.Spared[0].Reason != "their session was open for writing by another process" {
		t.Fatalf("held open: items %v, spared %+v", plan.Items, plan.Spared)
	}
	t.Setenv(fsutil.LiveDetectEnv, "portable")
	plan, _, err = Decide(context.Background(), cfg, "", Policy{Empty: true}, time.Now())
	if err != nil || len(plan.Items) != 1 || plan.Items[0].Path != path {
		t.Fatalf("portable: %v, items %+v, spared %+v", err, plan.Items, plan.Spared)
	}
	if err := plan.Remove(context.Background(), plan.Items[0], ""); err != nil {
		t.Fatalf("portable: remove: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("portable: the empty session is still there")
	}
}
