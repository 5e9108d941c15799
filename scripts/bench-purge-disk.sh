#!/usr/bin/env bash
# Disk taken by a config dir and its CCM store before and after
# `ccm purge --all`, with no other command: on a copy of the corpus config
# dir (../shared/corpus/claude-config, when it is there) and on a generated
# config dir of about SIZE_MB (default 1024) of sessions made with
# scripts/gen (-bench: thinking, images, compactions, pins), each with the
# default backup (zstd) and with --backup link for comparison. The store
# is the default one, inside the config dir, so `du` of the config dir is
# the whole cost. Sizes are blocks on disk (du -sB1; a hard link counts
# once) and, beside them, the files' apparent bytes.
#
#   scripts/bench-purge-disk.sh              # corpus and 1 GB
#   SIZE_MB=200 scripts/bench-purge-disk.sh  # a smaller generated dir
#   SESSIONS=N  (default 24) sessions in the generated dir
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
size_mb=${SIZE_MB:-1024}
sessions=${SESSIONS:-24}
corpus=${CCM_SHARED:-$repo/../shared}/corpus/claude-config
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-purge-disk.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)

blocks() { du -sB1 "$1" | cut -f1; }
bytes() { du -sb --apparent-size "$1" | cut -f1; }
mib() { awk -v n="$1" 'BEGIN { printf "%.1f MiB", n / 1048576 }'; }

# measure NAME DIR BACKUP: copy DIR, purge --all, print before and after.
measure() {
  local name=$1 src=$2 backup=$3 cfg=$work/cfg
  rm -rf "$cfg"
  cp -r "$src" "$cfg"
  chmod -R u+w "$cfg"
  # Old enough that no session counts as live.
  find "$cfg" -type f -exec touch -d '3 hours ago' {} +
  sync
  local b0 a0 t0 t1 b1 a1 s1
  b0=$(blocks "$cfg"); a0=$(bytes "$cfg")
  t0=$(date +%s.%N)
  CLAUDE_CONFIG_DIR=$cfg CCM_CACHE_DIR= CCM_HOME= "$work/ccm" purge --all --backup "$backup" >"$work/purge.out"
  t1=$(date +%s.%N)
  sync
  b1=$(blocks "$cfg"); a1=$(bytes "$cfg")
  s1=$(blocks "$cfg/cache/ccm")
  printf '%-10s %-6s %12s -> %12s (%+.1f%%)   apparent %12s -> %12s   store %s   purge %.1f s\n' \
    "$name" "$backup" "$(mib "$b0")" "$(mib "$b1")" "$(awk -v a="$b0" -v b="$b1" 'BEGIN { print 100 * (b - a) / a }')" \
    "$(mib "$a0")" "$(mib "$a1")" "$(mib "$s1")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  tail -1 "$work/purge.out" | sed 's/^/           /'
}

echo "config dir + store on disk, before -> after ccm purge --all (nothing else run)"
if [ -d "$corpus/projects" ]; then
  measure corpus "$corpus" zstd
  measure corpus "$corpus" link
else
  echo "corpus: not run (no corpus at $corpus)"
fi

gen=$work/gen-cfg
per=$(( size_mb * 1024 / sessions ))
for i in $(seq 1 "$sessions"); do
  kb=$(( per * (2 * i - 1) / sessions ))
  d=$gen/projects/-home-dev-proj$(( i % 6 ))
  mkdir -p "$d"
  id=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
  "$work/gen" -o "$d/$id.jsonl" -bench -size "${kb}KB" -seed "$i" -session "$id" >/dev/null 2>&1
done
measure "gen-${size_mb}MB" "$gen" zstd
measure "gen-${size_mb}MB" "$gen" link
