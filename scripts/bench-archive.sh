#!/usr/bin/env bash
# Times ccm archive of purged sessions against the ccm of another git
# revision (default: main), with farm-bench (the two alternate; medians
# and pair-by-pair ratios), and compares the archives' sizes.
#
#   scripts/bench-archive.sh               # 100 sessions of about 2 MB before the purge
#   SESSIONS=N SIZE_MB=M BASE=REF RUNS=R scripts/bench-archive.sh
#
# DISTINCT (default 20) transcripts are generated with scripts/gen -bench
# (images, big tool outputs, thinking, compactions), spread evenly from 2%
# to 198% of the mean size, copied into SESSIONS sessions in SESSIONS/20
# project folders, purged with ccm purge --all (so the store holds their
# content) and made 40 days old. Each run archives a fresh hard-linked
# copy of that tree into a fresh archive folder; the store is shared (an
# archive only reads it). Since archives carry their stubs' content, the
# archive compresses the purged transcripts plus that content: the base
# revision compresses the transcripts alone. Everything is removed at the
# end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sessions=${SESSIONS:-100}
size_mb=${SIZE_MB:-200}
distinct=${DISTINCT:-20}
runs=${RUNS:-5}
base=${BASE:-main}
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-archive.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
mkdir "$work/base-src"
git -C "$repo" archive "$base" | tar -x -C "$work/base-src"
(cd "$work/base-src" && go build -o "$work/ccm-base" ./cmd/ccm)
echo "A: $(git -C "$repo" rev-parse --short HEAD) (working tree), B: $base ($(git -C "$repo" rev-parse --short "$base"))"

export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
per=$(( size_mb * 1024 / sessions )) # KB per session on average
for i in $(seq 0 $(( distinct - 1 ))); do
  kb=$(( per * (2 * i + 1) / distinct + 4 ))
  "$work/gen" -o "$work/t$i.jsonl" -bench -size "${kb}KB" -seed "$i" >/dev/null 2>&1
done
projects=$(( sessions / 20 + 1 ))
for i in $(seq 1 "$sessions"); do
  p=$CLAUDE_CONFIG_DIR/projects/-home-u-proj$(( i % projects ))
  id=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
  mkdir -p "$p"
  sed "s/\"sessionId\":\"[^\"]*\"/\"sessionId\":\"$id\"/g" "$work/t$(( i % distinct )).jsonl" >"$p/$id.jsonl"
done
find "$CLAUDE_CONFIG_DIR" -type f -exec touch -d '40 days ago' {} +
echo "before the purge: $(du -sh "$CLAUDE_CONFIG_DIR" | cut -f1) in $sessions sessions"
"$work/ccm" purge --all --backup none >/dev/null
find "$CLAUDE_CONFIG_DIR" -type f -exec touch -d '40 days ago' {} +
echo "after: transcripts $(du -sh "$CLAUDE_CONFIG_DIR" | cut -f1), store $(du -sh "$CCM_CACHE_DIR" | cut -f1) ($("$work/ccm" --json cache stats | grep -o '"items": [0-9]*'))"
sync

for v in ccm ccm-base; do
  cat >"$work/$v.sh" <<SH
#!/bin/sh
rm -rf $work/c-$v $work/h-$v; cp -al $CLAUDE_CONFIG_DIR $work/c-$v
CLAUDE_CONFIG_DIR=$work/c-$v CCM_HOME=$work/h-$v exec $work/$v archive --older-than 30d --json >/dev/null
SH
  chmod +x "$work/$v.sh"
done
echo "== ccm archive: A (archives carry the content) vs B ($base)"
farm-bench -n "$runs" --timeout $(( runs * 120 + 120 )) --vs "$work/ccm-base.sh" -- "$work/ccm.sh"
echo "archives: A $(du -sh "$work/h-ccm/archive" | cut -f1), B $(du -sh "$work/h-ccm-base/archive" | cut -f1)"
