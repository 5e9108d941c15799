package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestVersion: a release build's version, commit and date (set by
// scripts/release.sh at link time) are what --version prints.
func TestVersion(t *testing.T) {
	old := [3]string{buildVersion, buildCommit, buildDate}
	defer func() { buildVersion, buildCommit, buildDate = old[0], old[1], old[2] }()
	buildVersion, buildCommit, buildDate = "v1.2.0", "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", "2026-01-05T09:12:16Z"
	var out bytes.Buffer
	if code := run([]string{"ccm", "--version"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if got, want := strings.TrimSpace(out.String()), "ccm version v1.2.0 (commit 1a2b3c4d5e6f, built 2026-01-05T09:12:16Z)"; got != want {
		t.Errorf("--version printed %q, want %q", got, want)
	}
}
