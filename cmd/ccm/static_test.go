package main

import (
	"os/exec"
	"strings"
	"testing"

	"ccm/internal/testutil"
)

// TestNoCgoDependencies: `go install ./cmd/ccm` gives a static binary
// without CGO_ENABLED=0 only while no package of ccm's build uses cgo.
// os/user (which archive/tar imports) and net do wherever a C compiler
// is found; their needs are met otherwise (internal/tar, $HOME).
func TestNoCgoDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", "ccm/cmd/ccm")
	cmd.Dir = testutil.RepoRoot(t)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, n, _ := strings.Cut(line, " ")
		if n != "0" || pkg == "os/user" || pkg == "net" || pkg == "runtime/cgo" {
			t.Errorf("ccm depends on %s, which links the C library when cgo is available", pkg)
		}
	}
}
