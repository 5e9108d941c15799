//go:build unix

package ccm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPermissions: files are 0600 and directories 0700 from creation,
// whatever the umask, including index.jsonl and last_key.
func TestPermissions(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := newStore(t)
	k := put(t, s, strings.Repeat("private output\n", 200), PinNone)
	get(t, s, k)
	s.Hold(context.Background())
	filepath.WalkDir(s.Root(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	// An index.jsonl claude-context-manager left world-readable is made private.
	idx := filepath.Join(s.Root(), "index.jsonl")
	os.Chmod(idx, 0o644)
	put(t, s, "another", PinNone)
	if fi, _ := os.Stat(idx); fi.Mode().Perm() != 0o600 {
		t.Errorf("index.jsonl stays %v", fi.Mode().Perm())
	}
}
