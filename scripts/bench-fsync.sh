#!/usr/bin/env bash
# What F_FULLFSYNC costs: run on a Mac, in the folder whose disk to measure
# (default: beside ~/.claude, where Claude Code's transcripts live).
#
#   scripts/bench-fsync.sh [DIR] [N]
#
# It times N of ccm's durable replacements (temp file, sync, rename,
# directory sync) of a 64 KB file, once with fsync(2) alone and once with
# fsutil.Sync, which on macOS is F_FULLFSYNC (the drive writes out its
# cache too), then a batch of 200 small files synced one by one with fsync
# against fsutil.SyncFiles (a plain fsync per file, one F_FULLFSYNC at the
# end). Each pair runs twice; the second is the one to read. On Linux both
# are fsync and the pairs should match, which checks the script itself.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${CLAUDE_CONFIG_DIR:-$HOME/.claude}/..}
n=${2:-200}
bin=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-fsync.XXXXXX")
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/benchfsync" ./scripts/benchfsync
echo "bench-fsync: $(uname -sm), $(df -h "$dir" | awk 'NR==2 {print $1}') ($dir)"
"$bin/benchfsync" -dir "$dir" -n "$n"
