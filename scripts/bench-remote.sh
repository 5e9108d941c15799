#!/usr/bin/env bash
# Times ccm export and ccm import of SESSIONS generated sessions (about
# SIZE_MB in all) to a local folder and to MinIO, side by side with
# tar --zstd of the same tree (and an upload of it with the MinIO client,
# mc), with farm-bench (A and B alternate; medians and pair-by-pair
# ratios); ccm search --archived --from over the bucket's bundles, the
# first time (every archive downloaded and indexed) against a first
# search of the same archives in a local folder, and again against the
# listing alone; then the idle
# hook's start-up and ccm's size against the tree
# it branched from: the S3 client lives in the ccm-s3 helper, and ccm
# itself must not grow slower to start (linking the TLS and HTTP stack
# into it cost about 13%, minio-go about 65%).
#
#   scripts/bench-remote.sh                  # 1,000 sessions, about 2 GB
#   SESSIONS=200 SIZE_MB=400 RUNS=3 scripts/bench-remote.sh
#   BASE=main scripts/bench-remote.sh        # the hook comparison against another commit
#
# Every session is a distinct transcript from scripts/gen (sizes spread
# from 2% to 198% of the mean, 20 project folders, last written 3 days
# ago), so neither tool gains from repeated files. ccm export writes one
# verified bundle per session (read back and hashed before it is
# published); tar writes one stream, unverified. Imports go into a fresh
# config dir each run (ccm: every bundle checked, the records' cwd moved
# to --cwd; tar: extracted as they are). Uploads go to a new prefix each
# run. MinIO and mc are built once into ~/.cache/ccm-minio by
# scripts/minio.sh. Everything is removed at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CCM_TEST_S3_ENDPOINT:-}" ] || [ -z "${CCM_MC:-}" ]; then
  exec "$repo/scripts/minio.sh" --mc -- "$0" "$@"
fi
sessions=${SESSIONS:-1000}
size_mb=${SIZE_MB:-2000}
runs=${RUNS:-3}
base=${BASE:-$(cd "$repo" && git merge-base HEAD main 2>/dev/null || echo main)}
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-remote.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/ccm" ./cmd/ccm && CGO_ENABLED=0 go build -o "$work/ccm-s3" ./cmd/ccm-s3 &&
  go build -o "$work/gen" ./scripts/gen)
ccm=$work/ccm
export CLAUDE_CONFIG_DIR=$work/claude CCM_HOME=$work/ccmhome CCM_CACHE_DIR=$work/store CCM_S3_ENDPOINT=$CCM_TEST_S3_ENDPOINT
export MC_HOST_bench=http://$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY@$CCM_MINIO_ADDR
bucket=$CCM_TEST_S3_BUCKET

echo "generating $sessions sessions, about $size_mb MB"
# gen stops after the turn that crosses its size: aimed 21% low, the tree
# comes out near SIZE_MB.
per=$(( size_mb * 1024 * 79 / 100 / sessions ))
for i in $(seq 1 "$sessions"); do
  kb=$(( per * (2 * (i % 50) + 1) / 50 + 4 ))
  p=$CLAUDE_CONFIG_DIR/projects/-home-dev-proj$(( i % 20 ))
  mkdir -p "$p"
  id=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
  "$work/gen" -o "$p/$id.jsonl" -size "${kb}KB" -seed "$i" -session "$id" -cwd "/home/dev/proj$(( i % 20 ))" >/dev/null 2>&1
done
find "$CLAUDE_CONFIG_DIR" -type f -exec touch -d '3 days ago' {} +
bytes=$(du -sb "$CLAUDE_CONFIG_DIR/projects" | cut -f1)
printf '%d sessions, %.1f MB, %d cores, %s\n\n' "$sessions" "$(python3 -c "print($bytes/1e6)")" "$(nproc)" "$(uptime | sed 's/.*load/load/')"
mkdir -p "$work/dest"
fb() { farm-bench -n "$runs" --warmup 0 --timeout 3600 "$@" 2>&1 | grep -E '^(A|B) = |^(A|B) exit|wall s|A/B wall|peak MiB'; echo; }

echo "== export to a local folder: ccm export --all -o DIR (A) vs tar --zstd -cf (B)"
fb --vs "tar --zstd -cf $work/all.tar.zst -C $CLAUDE_CONFIG_DIR projects" -- "$ccm" export --all -o "$work/bundles"
du -sb "$work/bundles" "$work/all.tar.zst" | awk '{printf "  %s: %.1f MB\n", $2, $1/1e6}'
echo

echo "== import from a local folder into a fresh config dir: ccm import DIR/*.tar.zst --cwd (A) vs tar --zstd -xf (B)"
cat >"$work/import.sh" <<EOF
#!/usr/bin/env bash
set -e
d=\$(mktemp -d "$work/dest/i.XXXXXX"); mkdir -p "\$d/projects" "\$d/proj"
CLAUDE_CONFIG_DIR=\$d CCM_CACHE_DIR=\$d/store CCM_HOME=\$d/home "$ccm" import "$work"/bundles/*.tar.zst --cwd "\$d/proj" >/dev/null
rm -rf "\$d"
EOF
cat >"$work/untar.sh" <<EOF
#!/usr/bin/env bash
set -e
d=\$(mktemp -d "$work/dest/t.XXXXXX")
tar --zstd -xf "$work/all.tar.zst" -C "\$d"
rm -rf "\$d"
EOF
chmod +x "$work/import.sh" "$work/untar.sh"
fb --vs "$work/untar.sh" -- "$work/import.sh"

echo "== export to MinIO: ccm export --all -o s3:// (A) vs tar --zstd -cf + mc cp (B)"
cat >"$work/s3export.sh" <<EOF
#!/usr/bin/env bash
exec "$ccm" export --all -o "s3://$bucket/ccm-\$(date +%s%N)" >/dev/null
EOF
cat >"$work/mcput.sh" <<EOF
#!/usr/bin/env bash
set -e
tar --zstd -cf "$work/up.tar.zst" -C "$CLAUDE_CONFIG_DIR" projects
"$CCM_MC" cp --quiet "$work/up.tar.zst" "bench/$bucket/tar-\$(date +%s%N).tar.zst" >/dev/null
rm -f "$work/up.tar.zst"
EOF
chmod +x "$work/s3export.sh" "$work/mcput.sh"
fb --vs "$work/mcput.sh" -- "$work/s3export.sh"

echo "== import from MinIO into a fresh config dir: ccm import s3:// IDS --cwd (A) vs mc cp + tar --zstd -xf (B)"
"$ccm" export --all -o "s3://$bucket/src" >/dev/null
"$CCM_MC" cp --quiet "$work/all.tar.zst" "bench/$bucket/src.tar.zst" >/dev/null
ls "$work/bundles" | sed -n 's/\.tar\.zst$//p' >"$work/ids"
cat >"$work/s3import.sh" <<EOF
#!/usr/bin/env bash
set -e
d=\$(mktemp -d "$work/dest/i.XXXXXX"); mkdir -p "\$d/projects" "\$d/proj"
CLAUDE_CONFIG_DIR=\$d CCM_CACHE_DIR=\$d/store CCM_HOME=\$d/home "$ccm" import "s3://$bucket/src" \$(cat "$work/ids") --cwd "\$d/proj" >/dev/null
rm -rf "\$d"
EOF
cat >"$work/mcget.sh" <<EOF
#!/usr/bin/env bash
set -e
d=\$(mktemp -d "$work/dest/t.XXXXXX")
"$CCM_MC" cp --quiet "bench/$bucket/src.tar.zst" "\$d/all.tar.zst" >/dev/null
tar --zstd -xf "\$d/all.tar.zst" -C "\$d"
rm -rf "\$d"
EOF
chmod +x "$work/s3import.sh" "$work/mcget.sh"
fb --vs "$work/mcget.sh" -- "$work/s3import.sh"

echo "== search the bucket's archives, first time: ccm search --archived --from (A: lists, downloads and indexes every archive) vs ccm search --archived over the same archives in a local folder (B: indexes them)"
"$CCM_MC" cp --recursive --quiet "bench/$bucket/src/" "$work/objects/" >/dev/null
for a in "$work"/objects/*/*/*.tar.zst; do
  folder=$(basename "$(dirname "$a")"); id=$(basename "$a" | cut -d. -f1)
  mkdir -p "$work/localarc/$folder"
  mv "$a" "$work/localarc/$folder/$id.tar.zst"
  mv "$(dirname "$a")/$id.manifest.json" "$work/localarc/$folder/$id.manifest.json"
done
rm -rf "$work/objects"
cat >"$work/s3search.sh" <<EOF
#!/usr/bin/env bash
d=\$(mktemp -d "$work/dest/s.XXXXXX")
CCM_HOME=\$d "$ccm" search --archived --from "s3://$bucket/src" --limit 5 test >/dev/null
s=\$?; rm -rf "\$d"; exit \$s
EOF
cat >"$work/localsearch.sh" <<EOF
#!/usr/bin/env bash
d=\$(mktemp -d "$work/dest/l.XXXXXX")
CCM_HOME=\$d CCM_ARCHIVE_DIR="$work/localarc" "$ccm" search --archived --limit 5 test >/dev/null
s=\$?; rm -rf "\$d"; exit \$s
EOF
chmod +x "$work/s3search.sh" "$work/localsearch.sh"
fb --vs "$work/localsearch.sh" -- "$work/s3search.sh"
echo "== search the bucket's archives again: ccm search --archived --from (A) vs the listing alone, ccm sessions --archived --from (B)"
CCM_HOME=$work/searchhome "$ccm" search --archived --from "s3://$bucket/src" --limit 5 test >/dev/null
farm-bench -n 20 --warmup 2 --vs "$ccm sessions --archived --from s3://$bucket/src" -- \
  env CCM_HOME="$work/searchhome" "$ccm" search --archived --from "s3://$bucket/src" --limit 5 test 2>&1 |
  grep -E 'wall s|A/B wall'
echo

echo "== the idle hook's start-up: this tree (A) vs $base (B); ccm links no network stack (ccm-s3 does)"
mkdir -p "$work/base"
(cd "$repo" && git archive "$base" | tar -x -C "$work/base")
(cd "$work/base" && CGO_ENABLED=0 go build -o "$work/ccm-base" ./cmd/ccm)
for b in ccm ccm-base; do
  printf '%s: %.1f MB\n' "$b" "$(python3 -c "print($(stat -c %s "$work/$b")/1e6)")"
done
CCM_HOOKS_DISABLED=1 farm-bench -n 100 --warmup 5 --vs "$work/ccm-base hook PreToolUse" -- "$work/ccm" hook PreToolUse 2>&1 |
  grep -E '^(A|B) = |wall s|cpu s|A/B (wall|cpu)'
