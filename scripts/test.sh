#!/usr/bin/env bash
# Runs every test of ccm: the Go tests (unit, corpus, CLI scripts, crash and
# concurrency tests), then the checks against the real Claude Code client
# (offline, against a mock API): purged transcripts resume with a valid
# request and no lost history (every corpus session too, when the corpus is
# there), hook output reaches the model, large tool outputs are captured and
# come back exactly, an archived session comes back where `claude --resume`
# finds it, migrating from the earlier tools keeps one of each hook, and the
# context warnings and the preservation block across /compact reach the
# model; and the report page renders in a real browser; and the object
# storage tests against a real MinIO server (scripts/test-s3.sh, which
# builds MinIO into ~/.cache/ccm-minio on first use), with their kill -9
# trials; and a session moved to other config dirs and paths (a bundle
# file, through MinIO, an archive there, a Windows session) resumed by the
# real client with the same history and every stub restored
# (scripts/realclient-move.sh; the corpus session, or a generated one).
#
# The real-client checks use the project's harness (scripts/realclient),
# which installs the pinned client from the npm registry into
# ~/.cache/ccm-realclient on first use; they need npm, and python3 to read
# the reports. The tests that read the real transcripts of ../shared/corpus
# ($CCM_SHARED) run when it is there and are skipped, with a line saying so,
# when it is not. The report's browser check needs Chromium: it installs
# Debian's package when missing, as root or with sudo; without either it is
# left out, said on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=yes
if [ ! -d "${CCM_SHARED:-../shared}/corpus" ]; then
  corpus=
  echo "test.sh: corpus tests not run: no ${CCM_SHARED:-../shared}/corpus (go test -v names each one)"
fi
go test ./...
scripts/test-s3.sh
scripts/realclient-resume.sh
scripts/realclient-hooks.sh
scripts/realclient-capture.sh
scripts/realclient-archive.sh
scripts/realclient-move.sh
scripts/realclient-migrate.sh
scripts/realclient-compact.sh
scripts/realclient-mcp.sh
if [ -n "$corpus" ]; then
  scripts/request-size.sh
fi
if command -v chromium >/dev/null || [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/ccm-report-browser.XXXXXX")
  scripts/report-browser.sh "" "$out"
  rm -rf "$out"
else
  echo "test.sh: the report's browser check is left out: no chromium, and no root or sudo to install it" >&2
fi
