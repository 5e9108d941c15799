#!/usr/bin/env bash
# Measures how ccm check, analyze and purge scale with the size of a
# transcript: the same commands on generated files of several sizes, each
# with its wall time, time per MB and peak RSS, beside cp + fsync of the
# same file (the ceiling of a rewrite) measured in the same run. Time per
# MB should not grow with the size, nor peak RSS beyond the index's share.
#
#   scripts/bench-scale.sh [RUNS] [SIZE...]    # default: 3 runs; 50MB 200MB 1GB
#
# The inputs are the generator's benchmark mix (-bench, seed 42). Wall time
# is the best of RUNS, with that run's peak RSS (scripts/timeit.py). The
# machine this runs on may be shared: run it twice and compare, or quote
# farm-bench for a claim about one command.
set -euo pipefail
runs=${1:-3}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(50MB 200MB 1GB)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist
timeit="python3 $repo/scripts/timeit.py $runs"
cat >"$work/cpsync.py" <<'PY'
import os, shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)
PY
# Every purge stores into a new store directory under one parent (see
# bench-transcript.sh for why nothing is deleted between runs).
mkdir -p "$work/stores"
printf '%d cores, %s, best of %d\n\n' "$(nproc)" "$(uptime | sed 's/.*load/load/')" "$runs"
printf '%-8s %-34s %9s %9s %10s\n' size command wall "ms/MB" "peak RSS"
rows=$work/rows
: >"$rows"
for size in "${sizes[@]}"; do
  in=$work/in-$size.jsonl
  "$work/gen" -o "$in" -bench -size "$size" 2>/dev/null
  mb=$(python3 -c "print($(stat -c %s "$in")/1e6)")
  cat "$in" >/dev/null # warm the page cache
  row() { # command name, then "seconds rss_kb" on stdin
    read -r t rss
    printf '%-8s %-34s %7.3f s %9.2f %7.1f MB\n' "$size" "$1" "$t" "$(python3 -c "print($t*1000/$mb)")" "$(python3 -c "print($rss/1024)")"
    printf '%s\t%s\t%s\t%s\n' "$1" "$size" "$(python3 -c "print($t*1000/$mb)")" "$rss" >>"$rows"
  }
  $timeit --prep "rm -f $work/copy; sync" -- python3 "$work/cpsync.py" "$in" "$work/copy" | row "cp FILE x + fsync x (ceiling)"
  rm -f "$work/copy"
  # The benchmark mix has planted defects: check exits 1, as it should.
  $timeit --ok 0,1 -- "$work/ccm" check "$in" | row "ccm check"
  $timeit -- "$work/ccm" analyze --no-tokens "$in" | row "ccm analyze --no-tokens"
  $timeit -- "$work/ccm" analyze "$in" | row "ccm analyze"
  prep="cp $in $work/p.jsonl; sync"
  fresh="CCM_CACHE_DIR=$work/stores"
  $timeit --prep "$prep" --fresh "$fresh" -- "$work/ccm" purge --backup none "$work/p.jsonl" | row "ccm purge --backup none"
  $timeit --prep "$prep" -- "$work/ccm" purge --backup none --no-tokens --no-ccm "$work/p.jsonl" | row "ccm purge --no-tokens --no-ccm"
  rm -f "$work/p.jsonl" "$in"
done
echo
# Time per MB of each command at each size against its smallest-size figure.
python3 - "$rows" "${sizes[@]}" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
sizes = sys.argv[2:]
per = {}
for name, size, msmb, rss in rows:
    per.setdefault(name, {})[size] = (float(msmb), int(rss) / 1024)
print("time per MB against %s, and the largest peak RSS:" % sizes[0])
for name, by in per.items():
    base = by[sizes[0]][0]
    ratios = "  ".join("%s %.2fx" % (s, by[s][0] / base) for s in sizes[1:] if s in by)
    print("  %-34s %s   peak %.0f MB" % (name, ratios, max(v[1] for v in by.values())))
PY
