#!/usr/bin/env bash
# The concurrent-writer trials at scale: ccm purge runs while another
# process appends to the transcript, TRIALS times for each kind of writer
# (scripts/appendtrials says what each does): one that reopens the file
# per line as Claude Code does, one timed for the rename, one that holds the
# file open, with each backup kind, and a 60 MB purge with 1,000 appends one
# per millisecond; each with the system's view of open files (/proc) and
# with the portable path (CCM_LIVE_DETECT=portable). One line per kind and
# detection, with the counts of lines lost, misordered and duplicated, all
# of which must be 0 (exit 1 otherwise).
#
#   scripts/trials-append.sh [TRIALS]     # default 60; about 15 minutes
#
# CCM_TRIALS_BIN=path runs another ccm binary (an older build, to compare).
set -euo pipefail
trials=${1:-60}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-trials-append.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/appendtrials" ./scripts/appendtrials)
bin=${CCM_TRIALS_BIN:-$work/ccm}
printf 'ccm %s, %d cores, %s\n' "$bin" "$(nproc)" "$(uptime | sed 's/.*load/load/')"
status=0
trial() { "$work/appendtrials" -ccm "$bin" -trials "$trials" "$@" || status=1; }
for detect in "" -portable; do
  trial -kind reopen $detect
  trial -kind timed $detect
  for backup in link copy zstd none; do
    # Each trial waits up to 2 s for the holder: four at a time.
    trial -kind hold -backup "$backup" -jobs 4 $detect
  done
  trial -kind big $detect
done
exit $status
