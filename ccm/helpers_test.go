package ccm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// newStore returns a store in a fresh temp dir, never under ~/.claude.
func newStore(t testing.TB) *Store {
	t.Helper()
	t.Setenv("CCM_COMPRESSION", "")
	s, err := Open(filepath.Join(t.TempDir(), "ccm"))
	if err != nil {
		t.Fatal(err)
	}
	s.LockWait = 2 * time.Second
	return s
}

func put(t testing.TB, s *Store, content string, pin PinLevel) Key {
	t.Helper()
	k, err := s.Put(context.Background(), []byte(content), Source{ToolName: "Bash", Command: "echo"}, pin, "")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	return k
}

func get(t testing.TB, s *Store, k Key) string {
	t.Helper()
	b, err := s.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return string(b)
}

// snapshot returns every file under dir with its content, to prove that a
// failed operation left the store as it was.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameSnapshot(t testing.TB, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			t.Errorf("%s changed or vanished", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared", k)
		}
	}
}

// immutable makes dir unwritable even for root (chattr +i), or skips.
func immutable(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	if err := exec.Command("chattr", "+i", dir).Run(); err != nil {
		t.Skipf("cannot make %s read-only as root (chattr: %v)", dir, err)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}
