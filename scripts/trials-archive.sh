#!/usr/bin/env bash
# Random kill -9 trials of ccm archive and ccm unarchive, at scale.
#
#   scripts/trials-archive.sh           # 60 kills of each
#   TRIALS=200 scripts/trials-archive.sh
#
# Runs TestArchiveKilledAtRandom (cmd/ccm/archive_kill_test.go): a config
# dir of six purged sessions (synth transcripts, their store content, a
# subagent each) is copied afresh for every trial; ccm archive (or ccm
# unarchive of every session, with the store deleted so that the content
# must come from the archives) is started and killed with SIGKILL after a
# random delay within 1.2x an undisturbed run. After each kill it checks
# that nothing is lost (every file in place byte for byte or in a verified
# archive of its session, every stored content in the store or in such an
# archive), then runs the same command again and checks that it finishes
# the job: every session archived (or restored byte for byte, content back
# in the store), no marker or temp file left. It prints the counts of each
# command; any loss or stuck run fails the script.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trials="${TRIALS:-60}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
cd "$root"
status=0
CCM_KILL_TRIALS="$trials" go test ./cmd/ccm/ -run '^TestArchiveKilledAtRandom$' -count=1 -v -timeout 60m >"$out" 2>&1 || status=$?
grep -E '^\s+archive_kill_test.go:[0-9]+: (trials:|.*(lost|changed|not |left|exit))' "$out" | sed 's/^ *archive_kill_test.go:[0-9]*: //' || true
if [ "$status" != 0 ]; then
  grep -E -- '--- FAIL|FAIL' "$out" | head -20
  echo "trials-archive: FAILED (full log above)" >&2
  exit 1
fi
