#!/usr/bin/env bash
# Times the download of one archive of about SIZE_MB from MinIO, this
# tree (A) against BASE (B), with farm-bench (A and B alternate; medians
# and pair-by-pair ratios):
#
#   1. the download alone: scripts/benchfetch, built against each tree,
#      runs remote.Target.Fetch (the GET through the ccm-s3 helper, the
#      check of its size and SHA-256 against the manifest, the sidecar,
#      the fsyncs) into a temporary folder;
#   2. the command: ccm unarchive -n --from s3://… ID (the download, then
#      the archive read whole and verified, nothing written).
#
#   scripts/bench-fetch.sh                   # 200 MB, 10 runs each, against the merge base with main
#   SIZE_MB=500 RUNS=5 BASE=main scripts/bench-fetch.sh
#
# The archive is one generated session with a tool output of SIZE_MB
# random bytes (incompressible: the archive is about as large), exported
# once with this tree's ccm. MinIO is built once into ~/.cache/ccm-minio
# by scripts/minio.sh. Everything is removed at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CCM_TEST_S3_ENDPOINT:-}" ]; then
  exec "$repo/scripts/minio.sh" -- "$0" "$@"
fi
size_mb=${SIZE_MB:-200}
runs=${RUNS:-10}
base=${BASE:-$(cd "$repo" && git merge-base HEAD main 2>/dev/null || echo main)}
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Each tree's ccm, ccm-s3 and benchfetch side by side (ccm and benchfetch
# find the helper beside them); BASE gets this tree's benchfetch, built
# against its own packages.
mkdir -p "$work/a" "$work/b" "$work/base"
(cd "$repo" && git archive "$base" | tar -x -C "$work/base")
rm -rf "$work/base/scripts/benchfetch"
cp -r "$repo/scripts/benchfetch" "$work/base/scripts/benchfetch"
for t in "$repo:$work/a" "$work/base:$work/b"; do
  src=${t%%:*} out=${t#*:}
  (cd "$src" && CGO_ENABLED=0 go build -o "$out/ccm" ./cmd/ccm && CGO_ENABLED=0 go build -o "$out/ccm-s3" ./cmd/ccm-s3 &&
    CGO_ENABLED=0 go build -o "$out/benchfetch" ./scripts/benchfetch)
done
(cd "$repo" && go build -o "$work/gen" ./scripts/gen)

export CLAUDE_CONFIG_DIR=$work/claude CCM_HOME=$work/ccmhome CCM_CACHE_DIR=$work/store CCM_S3_ENDPOINT=$CCM_TEST_S3_ENDPOINT
id=0b6c1c2e-1111-4222-8333-444455556666
p=$CLAUDE_CONFIG_DIR/projects/-home-dev-bench
mkdir -p "$p/$id/tool-results"
"$work/gen" -o "$p/$id.jsonl" -size 1MB -seed 1 -session "$id" -cwd /home/dev/bench >/dev/null 2>&1
head -c "${size_mb}M" /dev/urandom >"$p/$id/tool-results/toolu_bench.txt"
find "$CLAUDE_CONFIG_DIR" -type f -exec touch -d '3 days ago' {} +
url=s3://$CCM_TEST_S3_BUCKET/bench-fetch
"$work/a/ccm" export --session "$id" -o "$url" >/dev/null
"$work/a/ccm" sessions --archived --from "$url"
printf '%d cores, %s; this tree (A) vs %s (B)\n\n' "$(nproc)" "$(uptime | sed 's/.*load/load/')" "$base"
mkdir -p "$work/dl" "$work/empty/projects"
fb() { farm-bench -n "$runs" --warmup 1 --timeout 3600 "$@" 2>&1 | grep -E '^(A|B) = |^(A|B) exit|wall s|cpu s|A/B (wall|cpu)|peak MiB'; echo; }

echo "== the download alone: benchfetch (remote.Target.Fetch)"
fb --vs "$work/b/benchfetch -url $url -session $id -dir $work/dl" -- "$work/a/benchfetch" -url "$url" -session "$id" -dir "$work/dl"

echo "== the command: ccm unarchive -n --from (download, then the archive verified)"
export CLAUDE_CONFIG_DIR=$work/empty
fb --vs "$work/b/ccm unarchive -n --from $url $id" -- "$work/a/ccm" unarchive -n --from "$url" "$id"
