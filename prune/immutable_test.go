package prune

import (
	"os"
	"os/exec"
	"testing"
)

// immutableDir makes dir unwritable even for root (chattr +i), or skips.
func immutableDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		os.Chmod(dir, 0o500)
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	if err := exec.Command("chattr", "+i", dir).Run(); err != nil {
		t.Skipf("chattr: %v", err)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}
