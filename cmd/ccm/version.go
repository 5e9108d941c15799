package main

import (
	"runtime/debug"
	"strings"
)

// Set at link time by scripts/release.sh (-X main.buildVersion=...); a
// plain go build or go install leaves them empty, and version falls back
// to what the Go toolchain recorded from the repository.
var (
	buildVersion string // the release, v1.2.3
	buildCommit  string // the full commit hash
	buildDate    string // the commit's time, RFC 3339 in UTC
)

// version is what ccm --version prints after "ccm version": the release,
// then the commit and the build date, e.g.
// "v1.2.0 (commit 1a2b3c4d5e6f, built 2026-01-05T09:12:16Z)". A build
// from a repository with uncommitted changes says "+dirty" after the
// commit; one without repository information says only the version.
func version() string {
	v, commit, date, dirty := buildVersion, buildCommit, buildDate, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				if date == "" {
					date = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true" && buildCommit == ""
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var parts []string
	if commit != "" {
		c := commit[:min(12, len(commit))]
		if dirty {
			c += "+dirty"
		}
		parts = append(parts, "commit "+c)
	}
	if date != "" {
		parts = append(parts, "built "+date)
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}
