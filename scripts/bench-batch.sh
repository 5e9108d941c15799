#!/usr/bin/env bash
# Times ccm sessions, ccm du and ccm archive on a generated config dir,
# side by side with du -s and tar --zstd -cf of the same tree, with
# farm-bench (A and B alternate; medians and pair-by-pair ratios).
#
#   scripts/bench-batch.sh            # 1,000 sessions, about 2 GB, archive all of them
#   scripts/bench-batch.sh --large    # 10,000 sessions, about 20 GB, archive 500 of them
#   SESSIONS=N SIZE_MB=M ARCHIVE_SESSIONS=K RUNS=R scripts/bench-batch.sh
#   ARCHIVE_SESSIONS=0 scripts/bench-batch.sh --large   # the listings only
#
# DISTINCT (default 50) transcripts are generated with scripts/gen, sizes
# spread evenly from 2% to 198% of the mean (SIZE_MB / SESSIONS), and
# hard-linked into every session path: the tree has SESSIONS sessions in
# SESSIONS/50 project folders, one in ten with a subagent, and takes only
# the distinct transcripts' space on disk. du counts a hard-linked file
# once, so it runs as du -sl (count every link), which does the same work
# (one stat per file) and prints the tree's full size. The page cache
# holds the distinct files, as it would hold the heads and tails a second
# listing reads. The archive runs on its own tree of ARCHIVE_SESSIONS
# sessions laid out the same way, a fresh hard-linked copy per run; tar
# runs with --hard-dereference so that it, too, packs every file's bytes.
# Everything is removed at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sessions=${SESSIONS:-1000}
size_mb=${SIZE_MB:-2000}
asessions=${ARCHIVE_SESSIONS:-}
if [ "${1:-}" = "--large" ]; then sessions=10000; size_mb=20000; asessions=${asessions:-500}; fi
asessions=${asessions:-$sessions}
distinct=${DISTINCT:-50}
runs=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-batch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
export CCM_CACHE_DIR=$work/cache

per=$(( size_mb * 1024 / sessions )) # KB per session on average
for i in $(seq 0 $(( distinct - 1 ))); do
  kb=$(( per * (2 * i + 1) / distinct + 4 ))
  "$work/gen" -o "$work/t$i.jsonl" -size "${kb}KB" -seed "$i" >/dev/null 2>&1
done
touch -d '40 days ago' "$work"/t*.jsonl

# tree DIR N: N sessions hard-linked from the distinct transcripts.
tree() {
  local cfg=$1 n=$2 projects=$(( $2 / 50 + 1 )) i p id
  for i in $(seq 1 "$n"); do
    p=$cfg/projects/-home-u-proj$(( i % projects ))
    id=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
    [ -d "$p" ] || mkdir -p "$p"
    ln "$work/t$(( i % distinct )).jsonl" "$p/$id.jsonl"
    if [ $(( i % 10 )) = 0 ]; then
      mkdir -p "$p/$id/subagents"
      ln "$work/t$(( (i / 10) % 8 )).jsonl" "$p/$id/subagents/agent-a$i.jsonl"
    fi
  done
}
cfg=$work/claude
tree "$cfg" "$sessions"
echo "config dir: $sessions sessions, $(du -shl "$cfg" | cut -f1) ($(du -sh "$work" | cut -f1) on disk)"
sync

export CLAUDE_CONFIG_DIR=$cfg CCM_HOME=$work/ccmhome
to=$(( runs * 60 + 120 ))
echo "== ccm sessions vs du -sl"
farm-bench -n "$runs" --timeout "$to" --vs "du -sl $cfg" -- "$work/ccm" sessions --json
echo "== ccm du vs du -sl"
farm-bench -n "$runs" --timeout "$to" --vs "du -sl $cfg" -- "$work/ccm" du --json

[ "$asessions" = 0 ] && exit 0 # ARCHIVE_SESSIONS=0: listings only
# Archive: each run works on a fresh hard-linked copy (archive removes
# only the links), against tar of the same files.
acfg=$work/aclaude
tree "$acfg" "$asessions"
echo "archive tree: $asessions sessions, $(du -shl "$acfg" | cut -f1)"
cat >"$work/arch.sh" <<SH
#!/bin/sh
rm -rf $work/c2 $work/h2; cp -al $acfg $work/c2
CLAUDE_CONFIG_DIR=$work/c2 CCM_HOME=$work/h2 exec $work/ccm archive --older-than 30d --json >/dev/null
SH
cat >"$work/tar.sh" <<SH
#!/bin/sh
rm -rf $work/c2 $work/t.tar.zst; cp -al $acfg $work/c2
cd $work/c2 && exec tar --hard-dereference --zstd -cf $work/t.tar.zst projects
SH
chmod +x "$work/arch.sh" "$work/tar.sh"
echo "== ccm archive (incl. fsync and read-back verification) vs tar --zstd -cf"
farm-bench -n "$runs" --timeout "$to" --vs "$work/tar.sh" -- "$work/arch.sh"
echo "archives: $(du -sh "$work/h2/archive" | cut -f1); tar --zstd of the same: $(du -sh "$work/t.tar.zst" | cut -f1)"
