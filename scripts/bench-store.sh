#!/usr/bin/env bash
# Benchmarks the CCM store and prune at scale, beside the ceilings measured
# in the same run:
#
#   scripts/bench-store.sh [BLOBS] [TRANSCRIPTS] [PUT]   # default 100000 1GB 1GB
#
# 1. A store of BLOBS blobs (2-22 KB of tool-output text each, zstd, 10 % soft
#    and 2 % hard pins, access times over 90 days): "ccm cache stats", a
#    "ccm prune --max-size-mb" dry run (the whole plan) and a real one that
#    deletes 10 %, flat and in the fan-out layout; then BLOBS blobs in
#    packs (100 batches): "ccm cache stats" and a prune dry run with
#    farm-bench beside cat of the pack index and du -s of the store.
# 2. gc: "ccm prune --gc-unreferenced" over TRANSCRIPTS of generated
#    transcripts (5 files of the generator's benchmark mix), beside
#    "cat FILES >/dev/null".
# 3. Storing PUT of tool-output text: one "ccm cache put" of a single file,
#    and the API as purge uses it (2 goroutines, outputs of 5 KB-2 MB),
#    each Put durable, or one Batch committed at the end.
#
# Timings are the best of 3 with a warm page cache unless noted. Needs go,
# python3 and GNU time.
set -euo pipefail
blobs=${1:-100000}
tsize=${2:-1GB}
psize=${3:-1GB}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-store.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/benchstore" ./scripts/benchstore &&
  go build -o "$work/gen" ./scripts/gen)
ccm=$work/ccm
export CLAUDE_CONFIG_DIR=$work/claude CCM_HOME=$work/home CCM_COMPRESSION=
mkdir -p "$CLAUDE_CONFIG_DIR/projects/-bench"

# best CMD...: "WALL CPU" of the run with the best wall time of 3, in
# seconds; CPU is user + system time. The machine may be shared: CPU time
# says what the work costs when wall time is stretched by other load.
best() {
  local bt="" bc=""
  for _ in 1 2 3; do
    read -r t c < <(once "$@")
    if [ -z "$bt" ] || python3 -c "import sys; sys.exit(0 if $t < $bt else 1)"; then bt=$t bc=$c; fi
  done
  echo "$bt $bc"
}
once() {
  /usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r t u s <"$work/t"
  echo "$t $(python3 -c "print('%.2f' % ($u + $s))")"
}
# row NAME "WALL CPU" [NOTE]
row() {
  read -r t c <<<"$2"
  printf '%-56s %7s s wall %7s s CPU  %s\n' "$1" "$t" "${c:--}" "${3:-}"
}
mbps() { python3 -c "print('%.0f MB/s' % ($1 / 1e6 / max($2, 0.001)))"; }

echo "ccm $(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(findmnt -no FSTYPE,OPTIONS -T "$work" 2>/dev/null | cut -c1-80)"
echo

# ---- 1. a store of $blobs blobs
store=$work/store
export CCM_CACHE_DIR=$store
t=$(once "$work/benchstore" gen-store -dir "$store" -n "$blobs")
row "lay out $blobs blobs (benchstore gen-store, no fsync)" "$t"
disk=$(python3 -c "import json,sys; print(json.load(sys.stdin)['bytes_on_disk'])" < <("$ccm" --json cache stats))
limit=$(python3 -c "print('%.3f' % ($disk * 0.9 / 1048576))")
row "ccm cache stats" "$(best "$ccm" cache stats)" "$blobs blobs, $(python3 -c "print('%.0f MB' % ($disk/1048576))") on disk"
row "ccm prune --max-size-mb $limit --dry-run" "$(best "$ccm" prune --max-size-mb "$limit" --dry-run)" "plans ~10 % deletions"
cp -a "$store" "$work/store-copy"
row "ccm prune --max-size-mb $limit (deletes ~10 %, once)" "$(once "$ccm" prune --max-size-mb "$limit")"
rm -rf "$store" && mv "$work/store-copy" "$store"
"$work/benchstore" fanout -dir "$store"
row "ccm cache stats, fan-out layout (blobs/ab/abcd...)" "$(best "$ccm" cache stats)"
row "ccm prune --max-size-mb $limit --dry-run, fan-out layout" "$(best "$ccm" prune --max-size-mb "$limit" --dry-run)"
rm -rf "$store"
echo

# ---- 1b. the same number of blobs in packs, as purges store them: only the
# pack index is read. farm-bench alternates each command with a ceiling
# (cat of the index log, du -s of the store) and prints medians.
store=$work/packs
export CCM_CACHE_DIR=$store
t=$(once "$work/benchstore" gen-packs -dir "$store" -n "$blobs")
row "store $blobs blobs in packs (benchstore gen-packs, 1,000 a batch)" "$t"
"$ccm" cache stats >/dev/null # a first run writes packs/index.cache
if command -v farm-bench >/dev/null; then
  fb() { farm-bench -n 10 --vs "$1" -- "${@:2}" 2>&1 | grep -E '^(A|B|A/B) (wall|cpu|peak)'; }
  echo "ccm cache stats, vs cat packs/index.jsonl:"
  fb "cat $store/packs/index.jsonl" "$ccm" cache stats
  echo "ccm prune --max-size-mb 500 --dry-run, vs du -s the store:"
  fb "du -s $store" "$ccm" prune --max-size-mb 500 --dry-run
else
  row "ccm cache stats, packs" "$(best "$ccm" cache stats)"
  row "ccm prune --max-size-mb 500 --dry-run, packs" "$(best "$ccm" prune --max-size-mb 500 --dry-run)"
fi
rm -rf "$store"
echo

# ---- 2. gc over $tsize of transcripts
per=$(python3 -c "
s='$tsize'; m={'KB':1e3,'MB':1e6,'GB':1e9}
for k,v in m.items():
    if s.endswith(k): print(int(float(s[:-2])*v/5)); break
else: print(int(float(s)/5))")
for i in 1 2 3 4 5; do
  "$work/gen" -o "$CLAUDE_CONFIG_DIR/projects/-bench/s$i.jsonl" -bench -seed "$i" -size "$per" 2>/dev/null
done
tbytes=$(cat "$CLAUDE_CONFIG_DIR"/projects/-bench/*.jsonl | wc -c)
export CCM_CACHE_DIR=$work/small
echo "a blob" | "$ccm" cache put >/dev/null
t=$(best cat "$CLAUDE_CONFIG_DIR"/projects/-bench/s1.jsonl "$CLAUDE_CONFIG_DIR"/projects/-bench/s2.jsonl \
  "$CLAUDE_CONFIG_DIR"/projects/-bench/s3.jsonl "$CLAUDE_CONFIG_DIR"/projects/-bench/s4.jsonl "$CLAUDE_CONFIG_DIR"/projects/-bench/s5.jsonl)
read -r tw tc <<<"$t"
row "cat 5 transcripts >/dev/null (ceiling)" "$t" "$(mbps "$tbytes" "$tw"), $(python3 -c "print('%.2f GB' % ($tbytes/1e9))")"
t=$(best "$ccm" prune --gc-unreferenced --dry-run)
read -r tw tc <<<"$t"
row "ccm prune --gc-unreferenced --dry-run (whole run)" "$t" "$(mbps "$tbytes" "$tw") wall, $(mbps "$tbytes" "$tc") per CPU second"
echo

# ---- 3. storing $psize of tool-output text
"$work/benchstore" text -size "$psize" >"$work/out.txt"
pbytes=$(stat -c %s "$work/out.txt")
cat "$work/out.txt" >/dev/null
bt="" bc=""
for i in 1 2 3; do
  export CCM_CACHE_DIR=$work/put$i
  read -r t c < <(once "$ccm" cache put "$work/out.txt")
  if [ -z "$bt" ] || python3 -c "import sys; sys.exit(0 if $t < $bt else 1)"; then bt=$t bc=$c; fi
  rm -rf "$work/put$i"
done
row "ccm cache put FILE ($(python3 -c "print('%.2f GB' % ($pbytes/1e9))") in one file, fresh store)" "$bt $bc" "$(mbps "$pbytes" "$bt") wall, $(mbps "$pbytes" "$bc") per CPU second"
"$work/benchstore" put -dir "$work/api1" -size "$psize" -workers 2 -batch | sed 's/^/API, /'
"$work/benchstore" put -dir "$work/api2" -size 200MB -workers 2 | sed 's/^/API, /'
"$work/benchstore" put -dir "$work/api3" -size 200MB -workers 8 | sed 's/^/API, /'
echo
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
