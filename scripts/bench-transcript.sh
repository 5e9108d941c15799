#!/usr/bin/env bash
# Benchmarks ccm analyze, check and purge on a synthetic transcript, side
# by side with the ceilings measured in the same run: cat FILE >/dev/null
# for the read-only commands, cp FILE + fsync for purge.
#
#   scripts/bench-transcript.sh [SIZE] [RUNS]     # default 200MB, best of 3
#
# The input is the generator's benchmark mix (seed 42), the shape of the
# Python tool's reference file. Prints wall time, MB/s and peak RSS.
set -euo pipefail
size=${1:-200MB}
runs=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
"$work/gen" -o "$work/in.jsonl" -bench -size "$size" 2>/dev/null
bytes=$(stat -c %s "$work/in.jsonl")
mb=$(python3 -c "print($bytes/1e6)")
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
cat "$work/in.jsonl" >/dev/null # warm the page cache

# best CMD...: best-of-$runs wall time (s) and the peak RSS (KB) of that run.
best() {
  local bt="" brss=""
  for _ in $(seq "$runs"); do
    [ -n "${BENCH_PREP:-}" ] && eval "$BENCH_PREP"
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; cat "$work/t" >&2; exit 1; }
    read -r t rss <"$work/t"
    if [ -z "$bt" ] || python3 -c "import sys; sys.exit(0 if $t < $bt else 1)"; then bt=$t brss=$rss; fi
  done
  echo "$bt $brss"
}
row() { # name seconds rss
  python3 -c "
t=max($2,0.001); print('%-34s %7.2f s %9.0f MB/s %8.1f MB' % ('$1', t, $mb/t, $3/1024))"
}
echo "input: $(python3 -c "print('%.1f MB' % $mb)"), $(wc -l <"$work/in.jsonl") lines, $(nproc) cores"
echo
printf '%-34s %9s %14s %11s\n' command wall throughput "peak RSS"
read -r t r < <(best cat "$work/in.jsonl"); row "cat FILE >/dev/null (ceiling)" "$t" "$r"
read -r t r < <(best "$work/ccm" check "$work/in.jsonl"); row "ccm check" "$t" "$r"
read -r t r < <(best "$work/ccm" analyze --no-tokens "$work/in.jsonl"); row "ccm analyze --no-tokens" "$t" "$r"
read -r t r < <(best "$work/ccm" analyze "$work/in.jsonl"); row "ccm analyze (with cl100k estimate)" "$t" "$r"
echo
cat >"$work/cpsync.py" <<'PY'
import os, shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)
PY
BENCH_PREP="rm -f $work/copy" read -r t r < <(BENCH_PREP="rm -f $work/copy" best python3 "$work/cpsync.py" "$work/in.jsonl" "$work/copy"); row "cp FILE x + fsync x (ceiling)" "$t" "$r"
ceil=$t
prep="cp $work/in.jsonl $work/p.jsonl; rm -rf $work/cache $work/p.jsonl.backup.*; sync"
read -r t r < <(BENCH_PREP="$prep" best "$work/ccm" purge --no-tokens "$work/p.jsonl"); row "ccm purge (default, fsync'd)" "$t" "$r"
purge=$t
read -r t r < <(BENCH_PREP="$prep" best "$work/ccm" purge --no-tokens --dry-run "$work/p.jsonl"); row "ccm purge --dry-run" "$t" "$r"
read -r t r < <(BENCH_PREP="cp $work/in.jsonl $work/p.jsonl; rm -rf $work/p.jsonl.backup.*; sync" best "$work/ccm" purge --no-tokens --no-ccm "$work/p.jsonl"); row "ccm purge --no-ccm" "$t" "$r"
echo
"$work/ccm" purge --no-tokens --backup none "$work/p.jsonl" 2>/dev/null | sed -n 2p || true
cp "$work/in.jsonl" "$work/p.jsonl"; rm -rf "$work/cache"
"$work/ccm" purge --no-tokens --backup none "$work/p.jsonl" | sed -n '2,6p'
python3 -c "print('purge / (cp + fsync): %.2fx; Python reference (5.4 s for 210 MB, no fsync) / purge: %.1fx' % ($purge/$ceil, 5.4*($mb/210.15)/$purge))"
