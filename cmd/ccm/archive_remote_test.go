package main

import (
	"os"
	"path/filepath"
	"testing"

	"ccm/sessions/archive"
)

// dropUnmarked clears a staging folder of what no recovery needs: an
// archive without a marker with its sidecar, and a sidecar whose archive
// went (a run killed between removing the one and the other), and a
// project folder left empty; anything else stays.
func TestDropUnmarkedStaging(t *testing.T) {
	stage := t.TempDir()
	folder := filepath.Join(stage, "-home-dev-app")
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	pair := archive.ArchivePath(stage, "-home-dev-app", "5d40e43b-7c64-4c7d-8203-4267fd299db7")
	orphan := archive.SidecarPath(archive.ArchivePath(stage, "-home-dev-app", "0c0c0c0c-7c64-4c7d-8203-4267fd299db7"))
	other := filepath.Join(folder, "notes.txt")
	for _, p := range []string{pair, archive.SidecarPath(pair), orphan, other} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(stage, "-home-dev-gone")
	if err := os.MkdirAll(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := dropUnmarked(stage); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pair, archive.SidecarPath(pair), orphan} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s: still there (%v)", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("%s went: %v", other, err)
	}
	if _, err := os.Lstat(empty); !os.IsNotExist(err) {
		t.Errorf("the empty project folder is still there (%v)", err)
	}
}
