package archive

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An archive left beside its originals without a marker (a kill under
// a ccm without markers, or a power cut) that holds exactly the files as
// they are now is a copy of what archive would write: the next archive
// replaces it instead of stopping at "already exists". One that differs
// is kept and refused.
func TestStaleArchiveWithoutMarker(t *testing.T) {
	f := newFixture(t)
	o := f.opts(t)
	p, err := Pack(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(markerPath(p.Archive))
	res, err := Create(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatalf("archive over a stale copy: %v", err)
	}
	if _, err := Verify(res.Archive); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")); err == nil {
		t.Error("originals still in place")
	}
	if _, err := Extract(context.Background(), res.Archive, f.cfg, ExtractOptions{}); err != nil {
		t.Fatal(err)
	}
	// The session changed since the stale archive was written.
	p, err = Pack(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(markerPath(p.Archive))
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	fh, _ := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("{}\n")
	fh.Close()
	if _, err := Create(context.Background(), f.source(t), o); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if _, err := Verify(p.Archive); err != nil {
		t.Errorf("the older archive was not kept: %v", err)
	}
}

// A recovery never removes an original that differs from its archived
// copy: it says so, keeps both and keeps the marker.
func TestRecoverKeepsChangedOriginals(t *testing.T) {
	f := newFixture(t)
	o := f.opts(t)
	p, err := Pack(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	// The removal began (the transcript went), then a companion changed.
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	os.Remove(main)
	sub := filepath.Join(f.cfg, "projects", f.folder, f.id, "subagents", "agent-a1.jsonl")
	os.WriteFile(sub, []byte("changed\n"), 0o600)
	rec, err := Recover(context.Background(), o.Root, f.cfg, ExtractOptions{})
	if err != nil || len(rec) != 1 || rec[0].Err == nil || !strings.Contains(rec[0].Err.Error(), "differs from the archived copy") {
		t.Fatalf("recover: %v %+v", err, rec)
	}
	if got, _ := os.ReadFile(sub); string(got) != "changed\n" {
		t.Error("the changed original was removed")
	}
	if _, err := os.Stat(markerPath(p.Archive)); err != nil {
		t.Error("the marker went: the work is not done")
	}
	// Once it is moved away, the recovery finishes the archive.
	os.Rename(sub, filepath.Join(t.TempDir(), "kept.jsonl"))
	rec, _ = Recover(context.Background(), o.Root, f.cfg, ExtractOptions{})
	if len(rec) != 1 || rec[0].Err != nil || rec[0].Outcome != "finished" {
		t.Fatalf("recover: %+v", rec)
	}
	for rel := range f.files {
		if _, err := os.Stat(filepath.Join(f.cfg, rel)); err == nil && !strings.HasSuffix(rel, "other.jsonl") {
			t.Errorf("%s still in place", rel)
		}
	}
	if _, err := Extract(context.Background(), p.Archive, f.cfg, ExtractOptions{}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range f.files {
		if got, _ := os.ReadFile(filepath.Join(f.cfg, rel)); !bytes.Equal(got, want) {
			t.Errorf("%s not restored", rel)
		}
	}
}

// A marker of another config dir (an archive folder two config dirs
// share) is left to that config dir's runs.
func TestRecoverLeavesOtherConfigDirs(t *testing.T) {
	f := newFixture(t)
	o := f.opts(t)
	p, err := Pack(context.Background(), f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(context.Background(), o.Root, t.TempDir(), ExtractOptions{})
	if err != nil || len(rec) != 0 {
		t.Fatalf("recover: %v %+v", err, rec)
	}
	if _, err := os.Stat(p.Archive); err != nil {
		t.Error(err)
	}
}
