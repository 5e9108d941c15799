#!/usr/bin/env bash
# Times ccm report against its yardsticks with farm-bench (A and B in turn,
# medians and the A/B ratio pair by pair):
#
#   1. the page of one generated transcript (default 1GB, the generator's
#      benchmark mix; over 300 MB the page has no purge curve by default),
#      against ccm analyze --no-tokens, which reads the file the same way;
#   2. the same page with the purge curve (--purge), against ccm purge
#      --dry-run, which it runs;
#   3. ccm report --all over a farm of 10,000 sessions (100 projects; each
#      the first 80 lines of a corpus session, 30 to 300 KB), against ccm
#      sessions over the same farm.
#
#   scripts/bench-report.sh [SIZE] [SESSIONS] [RUNS]   # default 1GB 10000 3
#
# Needs farm-bench on PATH. Takes a few minutes; the work dir is removed.
set -euo pipefail
size=${1:-1GB}
nsessions=${2:-10000}
runs=${3:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist
ccm=$work/ccm

"$work/gen" -o "$work/big.jsonl" -bench -size "$size" 2>/dev/null
cat "$work/big.jsonl" >/dev/null # warm the page cache
echo "== 1. the page of a $size transcript, without the purge curve, vs ccm analyze --no-tokens"
farm-bench -n "$runs" --timeout 900 --vs "$ccm analyze --no-tokens $work/big.jsonl" -- \
  "$ccm" report -o "$work/big.html" "$work/big.jsonl"
echo "== 2. the page with the purge curve, vs ccm purge --dry-run"
farm-bench -n "$runs" --timeout 1800 --vs "$ccm purge --dry-run $work/big.jsonl" -- \
  "$ccm" report --purge -o "$work/big.html" "$work/big.jsonl"
rm -f "$work/big.jsonl"

# The farm: the heads of the corpus sessions (read in place, written only
# to the work dir) under fresh session ids.
corpus=${SHARED:-$repo/../shared}/corpus/claude-config/projects
farm=$work/farm
mkdir -p "$farm/projects"
python3 - "$farm/projects" "$corpus" "$nsessions" <<'PY'
import glob, os, sys, uuid, random
root, corpus, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
heads = []
for p in sorted(glob.glob(os.path.join(corpus, "*", "*.jsonl"))):
    with open(p, "rb") as f:
        lines = f.readlines()[:80]
    if len(lines) >= 10:
        heads.append(b"".join(lines))
rnd = random.Random(7)
for i in range(n):
    proj = os.path.join(root, "-home-u-proj%03d" % (i % 100))
    os.makedirs(proj, exist_ok=True)
    sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    with open(os.path.join(proj, sid + ".jsonl"), "wb") as f:
        f.write(heads[i % len(heads)])
PY
du -sh "$farm" | sed 's/^/farm: /'
echo "== 3. ccm report --all over $nsessions sessions, vs ccm sessions"
farm-bench -n "$runs" --timeout 900 --vs "$ccm --claude-dir $farm sessions" -- \
  "$ccm" --claude-dir "$farm" report --all -o "$work/all.html"
