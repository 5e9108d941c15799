#!/usr/bin/env bash
# Runs every test of ccm: the Go tests (unit, corpus, CLI scripts, crash and
# concurrency tests), then the checks against the real Claude Code client
# (offline, against a mock API): purged transcripts resume with a valid
# request and no lost history, hook output reaches the model, large tool
# outputs are captured and come back exactly, and an archived session
# comes back where `claude --resume` finds it.
#
# The real-client checks use the project's harness (scripts/realclient),
# which installs the pinned client from the npm registry into
# ~/.cache/ccm-realclient on first use; they need npm, and python3 to read
# the reports. The tests that read the real transcripts of ../shared/corpus
# ($CCM_SHARED) run when it is there and are skipped, with a line saying so,
# when it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d "${CCM_SHARED:-../shared}/corpus" ]; then
  echo "test.sh: corpus tests not run: no ${CCM_SHARED:-../shared}/corpus (go test -v names each one)"
fi
go test ./...
scripts/realclient-resume.sh
scripts/realclient-hooks.sh
scripts/realclient-capture.sh
scripts/realclient-archive.sh
