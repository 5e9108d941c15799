#!/usr/bin/env bash
# Runs every test of ccm: the Go tests (unit, corpus, CLI scripts, crash and
# concurrency tests), then the checks against the real Claude Code client
# (offline, against a mock API): purged transcripts resume with a valid
# request and no lost history, and hook output reaches the model.
#
# The real-client checks install the pinned client from the npm registry
# into ~/.cache/ccm-realclient on first use; they need python3 and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./...
scripts/realclient-resume.sh
scripts/realclient-hooks.sh
