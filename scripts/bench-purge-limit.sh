#!/usr/bin/env bash
# The purge's memory limit against its time on a large transcript: the
# default purge of a generated file (the benchmark mix, 1 GB by default)
# under two soft memory limits, A and B alternating with farm-bench. Each
# run copies the file, syncs, and purges the copy into a new store, so the
# copy is in both figures.
#
#   scripts/bench-purge-limit.sh [SIZE] [LIMIT_A_MIB] [LIMIT_B_MIB] [RUNS]
#   (default: 1GB 84 110 5; 84 MiB is the limit ccm sets itself at 1 GB)
set -euo pipefail
size=${1:-1GB}
a=${2:-84}
b=${3:-110}
runs=${4:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-limit.XXXXXX")
trap 'rm -rf "$work"' EXIT
command -v farm-bench >/dev/null || { echo "bench-purge-limit: farm-bench is not installed" >&2; exit 2; }
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
"$work/gen" -o "$work/in.jsonl" -bench -size "$size" 2>/dev/null
mkdir -p "$work/stores" "$work/claude" "$work/home"
cat >"$work/run.sh" <<RUN
#!/bin/sh
d=\$(mktemp -d "$work/run.XXXXXX")
cp "$work/in.jsonl" "\$d/q.jsonl" && sync
GOMEMLIMIT=\${1}MiB CCM_CACHE_DIR="$work/stores/\$\$" CLAUDE_CONFIG_DIR="$work/claude" CCM_HOME="$work/home" "$work/ccm" purge --backup none "\$d/q.jsonl" >/dev/null
rm -rf "\$d"
RUN
chmod +x "$work/run.sh"
farm-bench -n "$runs" --timeout 900 --vs "$work/run.sh $b" -- "$work/run.sh" "$a"
