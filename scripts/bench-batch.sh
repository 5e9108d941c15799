#!/usr/bin/env bash
# Times ccm sessions, ccm du and ccm archive on a generated config dir,
# side by side with du -s and tar --zstd -cf of the same tree, with
# farm-bench (medians of alternating runs).
#
#   scripts/bench-batch.sh              # 1,000 sessions, about 200 MB (a few minutes)
#   scripts/bench-batch.sh --large      # 10,000 sessions, about 20 GB (needs the disk space)
#   SESSIONS=N SIZE_MB=M scripts/bench-batch.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sessions=${SESSIONS:-1000}
size_mb=${SIZE_MB:-200}
if [ "${1:-}" = "--large" ]; then sessions=10000; size_mb=20000; fi
runs=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-batch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
cfg=$work/claude
export CLAUDE_CONFIG_DIR=$cfg CCM_HOME=$work/ccmhome CCM_CACHE_DIR=$work/cache

# 16 distinct generated transcripts, copied to every session (sizes vary
# from a few KB to several MB; the mean makes SIZE_MB in total).
per=$(( size_mb * 1024 / sessions ))  # KB per session on average
for i in $(seq 0 15); do
  kb=$(( per * (i + 1) * 2 / 17 + 4 ))
  "$work/gen" -o "$work/t$i.jsonl" -size "${kb}KB" -seed "$i" >/dev/null
done
projects=$(( sessions / 50 + 1 ))
for n in $(seq 1 "$sessions"); do
  p=$cfg/projects/-home-u-proj$(( n % projects ))
  mkdir -p "$p"
  id=$(printf '%08x-0000-4000-8000-%012x' "$n" "$n")
  cp "$work/t$(( n % 16 )).jsonl" "$p/$id.jsonl"
  if [ $(( n % 10 )) = 0 ]; then
    mkdir -p "$p/$id/subagents" && cp "$work/t$(( (n / 10) % 4 )).jsonl" "$p/$id/subagents/agent-a$n.jsonl"
  fi
done
find "$cfg" -type f -exec touch -d '40 days ago' {} +
echo "config dir: $sessions sessions, $(du -sh "$cfg" | cut -f1)"
sync

echo "== ccm sessions vs du -s"
farm-bench -n "$runs" --vs "du -s $cfg" -- "$work/ccm" sessions --json
echo "== ccm du vs du -s"
farm-bench -n "$runs" --vs "du -s $cfg" -- "$work/ccm" du --json

# Archive: each run works on a fresh copy (hard links cost nothing to make
# and archive removes only the links), against tar of the same files.
echo "== ccm archive (incl. read-back verification) vs tar --zstd -cf"
cat >"$work/arch.sh" <<SH
#!/bin/sh
rm -rf $work/c2 $work/h2; cp -al $cfg $work/c2
CLAUDE_CONFIG_DIR=$work/c2 CCM_HOME=$work/h2 exec $work/ccm archive --older-than 30d --json >/dev/null
SH
cat >"$work/tar.sh" <<SH
#!/bin/sh
rm -rf $work/c2 $work/t.tar.zst; cp -al $cfg $work/c2
cd $work/c2 && exec tar --zstd -cf $work/t.tar.zst projects
SH
chmod +x "$work/arch.sh" "$work/tar.sh"
farm-bench -n "$runs" --vs "$work/tar.sh" -- "$work/arch.sh"
