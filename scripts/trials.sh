#!/usr/bin/env bash
# Every reliability trial at scale, one after the other, with their counts:
# the random kill -9 trials of ccm archive and unarchive
# (scripts/trials-archive.sh) and of ccm migrate (scripts/trials-migrate.sh),
# and the concurrent-writer trials of ccm purge (scripts/trials-append.sh).
# Each runs TRIALS trials of every kind (default 60) and fails on any loss,
# misordered line or run that does not finish the job; this script exits 1
# when any of them failed. docs/reliability.md gives the latest counts.
#
#   scripts/trials.sh [TRIALS]     # about 40 minutes on 2 cores at 60
set -uo pipefail
trials=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
status=0
for t in archive migrate append; do
  echo "== trials-$t ($trials trials of each kind)"
  if [ "$t" = archive ]; then
    TRIALS=$trials "$here/trials-archive.sh" || status=1
  else
    "$here/trials-$t.sh" "$trials" || status=1
  fi
done
if [ "$status" = 0 ]; then echo "trials: all passed"; else echo "trials: FAILED" >&2; fi
exit "$status"
