#!/usr/bin/env bash
# Runs every test of ccm: the Go tests (unit, corpus, CLI scripts, crash and
# concurrency tests), then the checks against the real Claude Code client
# (offline, against a mock API): purged transcripts resume with a valid
# request and no lost history, and hook output reaches the model.
#
# The real-client checks install the pinned client from the npm registry
# into ~/.cache/ccm-realclient on first use; they need python3 and npm.
# The report's browser check needs Chromium: it installs Debian's package
# when missing, as root or with sudo; without either it is left out, said
# on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./...
scripts/realclient-resume.sh
scripts/realclient-hooks.sh
if command -v chromium >/dev/null || [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/ccm-report-browser.XXXXXX")
  scripts/report-browser.sh "" "$out"
  rm -rf "$out"
else
  echo "test.sh: the report's browser check is left out: no chromium, and no root or sudo to install it" >&2
fi
