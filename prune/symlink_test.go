package prune

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ccm/ccm"
)

// A project folder kept elsewhere behind a symlink in projects/ is a
// project like the others (sessions.ListProjects): gc reads its
// transcripts, so what only they reference stays, on the first run and on
// the next one that reads the index; while the link leads nowhere (a disk
// not mounted), what they referenced stays too.
func TestGCSymlinkedProjectFolder(t *testing.T) {
	s, claude := testStore(t)
	old := time.Now().Add(-72 * time.Hour)
	linked := putAt(t, s, "only the linked project references this", old, ccm.PinNone)
	plain := putAt(t, s, "the plain project references this", old, ccm.PinNone)
	nobody := putAt(t, s, "nobody references this", old, ccm.PinNone)
	writeFile(t, filepath.Join(claude, "projects", "-plain", "a.jsonl"), line(plain))
	target := filepath.Join(t.TempDir(), "elsewhere")
	writeFile(t, filepath.Join(target, "b.jsonl"), line(linked))
	link := filepath.Join(claude, "projects", "-linked")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	dry, err := Prepare(context.Background(), s, Policy{GC: true}, Options{ClaudeDir: claude, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := keys(dry.Deletions)
	dry.Close()
	if len(got) != 1 || got[0] != string(nobody) {
		t.Fatalf("the dry run would delete %v, want only %s", got, nobody)
	}
	_, res := run(t, s, claude, Policy{GC: true})
	if res.Deleted != 1 || !exists(s, linked) || !exists(s, plain) || exists(s, nobody) {
		t.Fatalf("gc: %+v; linked kept %v, plain kept %v", res, exists(s, linked), exists(s, plain))
	}
	// The link's target goes away (a disk not mounted): what it
	// referenced is kept by the index.
	if err := os.Rename(target, target+".unmounted"); err != nil {
		t.Fatal(err)
	}
	again := putAt(t, s, "nobody references this either", old, ccm.PinNone)
	_, res = run(t, s, claude, Policy{GC: true})
	if res.Deleted != 1 || !exists(s, linked) || exists(s, again) {
		t.Fatalf("with the link dangling: %+v; linked kept %v", res, exists(s, linked))
	}
}
