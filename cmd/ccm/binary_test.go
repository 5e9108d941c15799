package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"ccm/internal/testutil"
)

// exeSuffix is what an executable's name ends in here.
var exeSuffix = map[bool]string{true: ".exe"}[runtime.GOOS == "windows"]

// built is ccm built once for the tests that need a real process.
var built struct {
	once sync.Once
	path string
	err  error
}

// builtBinary builds ccm once for the tests that need a real process.
func builtBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "ccm-cmd-test-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "ccm"+exeSuffix)
		cmd := exec.Command("go", "build", "-o", built.path, "ccm/cmd/ccm")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}
