package main

import (
	"os/exec"
	"strings"
	"testing"

	"ccm/internal/testutil"
)

// TestNoNetworkStackInCcm: ccm's hooks start on every tool call, and Go
// initialises every linked package at every start: linking crypto/tls and
// net/http (what object storage needs) made the idle hook about 0.35 ms
// (13%) slower. They live in the ccm-s3 helper; ccm must not link them.
func TestNoNetworkStackInCcm(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "ccm/cmd/ccm")
	cmd.Dir = testutil.RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "net/http", "crypto/tls", "encoding/xml", "ccm/internal/objstore/s3http":
			t.Errorf("ccm links %s: object storage goes through the ccm-s3 helper (internal/objstore/agent)", pkg)
		}
	}
}
