#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against the mock API of
# the project's harness) that a session moved by ccm resumes on "another
# machine" at another path with the same history, and that every stub of
# it restores there:
#
#   1. a session (of ../shared/corpus when it is there, else generated) is
#      purged in config dir A (so it holds stubs) and resumed from a copy:
#      its messages and tool pairs are the reference;
#   2. ccm export from A, ccm import into config dir B with --cwd a
#      different absolute path (with a space and an "é"), resumed from that
#      path (cd PATH && claude --resume ID);
#   3. the same through MinIO: export -o s3://..., import s3://... into C;
#   4. an archived session: archive --to s3://... in a copy of A, then
#      unarchive --from s3://... into D, resumed there.
#
# Each resume must give a valid request with the reference's messages and
# tool pairs, the client must use the transcript where ccm put it, and
# `ccm restore` there must expand every stub from that config dir's own
# store. MinIO is started by scripts/minio.sh (built once into
# ~/.cache/ccm-minio).
#
#   scripts/realclient-move.sh
#   KEEP=1 scripts/realclient-move.sh     # keep the work folder
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CCM_TEST_S3_ENDPOINT:-}" ]; then
  exec "$repo/scripts/minio.sh" -- "$0" "$@"
fi
. "$repo/scripts/lib/realclient.sh" realclient-move
(cd "$repo" && go build -o "$work/gen" ./scripts/gen && go build -o "$work/ccm-s3" ./cmd/ccm-s3)
shared=${CCM_SHARED:-$repo/../shared}
corpus=$shared/corpus/claude-config/projects
export CCM_S3_ENDPOINT=$CCM_TEST_S3_ENDPOINT
bucket=s3://$CCM_TEST_S3_BUCKET/move-$RANDOM

A=$work/A
if [ -d "$corpus" ]; then
  folder=-home-USER-projects-spotter-worktrees-spotter-dov
  id=4d5611e5-241a-462a-8d15-5122611a9569
  mkdir -p "$A/projects/$folder"
  cp -r "$corpus/$folder/$id.jsonl" "$corpus/$folder/$id" "$A/projects/$folder/"
  kind="corpus session $id"
else
  echo "realclient-move: no ../shared/corpus: a generated session stands in for it"
  root=/home/dev/gen-project
  folder=-home-dev-gen-project
  id=5f0c2a8e-7d1b-4c3e-9a6f-0123456789ab
  mkdir -p "$A/projects/$folder"
  "$work/gen" -o "$A/projects/$folder/$id.jsonl" -turns 6 -seed 11 -cwd "$root" -session "$id" >/dev/null
  kind="generated session $id"
fi
chmod -R u+w "$A"
find "$A" -type f -exec touch -d '3 days ago' {} +

# as DIR CMD...: runs ccm with DIR as the config dir, its own store and home.
as() {
  local d=$1; shift
  CLAUDE_CONFIG_DIR=$d CCM_HOME=$d-home CCM_CACHE_DIR=$d-store CCM_MACHINE=$(basename "$d") "$ccm" "$@"
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$1" "$2"; }

as "$A" purge --threshold 2000 --recent-turns 0 --backup none "$A/projects/$folder/$id.jsonl" >/dev/null
stubs=$(grep -o 'CCM_CACHED' "$A/projects/$folder/$id.jsonl" | wc -l)
[ "$stubs" -gt 0 ] || { echo "FAIL: the purge left no stub to carry" >&2; exit 1; }
find "$A" -type f -exec touch -d '3 days ago' {} +
cp -a "$A" "$work/A2"; cp -a "$A-store" "$work/A2-store"

# The reference: the purged session resumed from a copy (the harness's
# sandbox), its messages and tool pairs.
"$rc" resume "$A/projects/$folder/$id.jsonl" --out "$work/ref" --quiet >"$work/ref.txt" 2>&1 || true
[ "$(field "$work/ref/report.json" verdict)" = VALID ] ||
  { echo "FAIL: the session does not resume in A: $(head -1 "$work/ref.txt")" >&2; exit 1; }
msgs=$(field "$work/ref/report.json" "stats['messages']")
pairs=$(field "$work/ref/report.json" "stats['tool_pairs']")
echo "reference: $kind, $stubs stubs, $msgs messages, $pairs tool pairs"

fail=0
# check NAME DIR CWD ID FOLDER: resumes ID from CWD with DIR as the config
# dir; the request must be valid with the reference's history, the client
# must append to DIR/projects/FOLDER/ID.jsonl, and every stub must restore
# from DIR's own store.
check() {
  local name=$1 d=$2 cwd=$3 sid=$4 fold=$5
  local t=$d/projects/$fold/$sid.jsonl out=$work/out-$name
  [ -f "$t" ] || { echo "FAIL $name: no $t"; fail=1; return; }
  local n; n=$(stat -c %s "$t")
  cp "$t" "$work/$name-before.jsonl"
  "$rc" resume --config-dir "$d" --cwd "$cwd" --session "$sid" --out "$out" --quiet >"$out.txt" 2>&1 || true
  local v m p
  v=$(field "$out/report.json" verdict 2>/dev/null || echo none)
  m=$(field "$out/report.json" "stats['messages']" 2>/dev/null || echo -)
  p=$(field "$out/report.json" "stats['tool_pairs']" 2>/dev/null || echo -)
  if [ "$v" != VALID ] || [ "$m" != "$msgs" ] || [ "$p" != "$pairs" ]; then
    echo "FAIL $name: verdict $v, $m messages, $p tool pairs (want VALID, $msgs, $pairs): $(head -1 "$out.txt")"; fail=1; return
  fi
  local found; found=$(cd "$d" && find projects -name "$sid.jsonl")
  if [ "$found" != "projects/$fold/$sid.jsonl" ] || [ "$(stat -c %s "$t")" -le "$n" ] || ! cmp -s -n "$n" "$t" "$work/$name-before.jsonl"; then
    echo "FAIL $name: the client did not resume the transcript at projects/$fold/$sid.jsonl (found '$found')"; fail=1; return
  fi
  cp "$work/$name-before.jsonl" "$work/$name-restore.jsonl"
  if ! as "$d" restore "$work/$name-restore.jsonl" >"$work/$name-restore.txt" 2>&1 ||
    grep -q CCM_CACHED "$work/$name-restore.jsonl"; then
    echo "FAIL $name: not every stub restores from its store:"; tail -3 "$work/$name-restore.txt"; fail=1; return
  fi
  echo "PASS $name: resumed from $cwd with $m messages and $p tool pairs, every stub restored from its own store"
}

# 2. A bundle file, into B at another path under the same id.
new=$work/new\ place/é-proj
mkdir -p "$new" "$work/B/projects"
as "$A" export --session "$id" -o "$work/bundle.tar.zst" >/dev/null
as "$work/B" import "$work/bundle.tar.zst" --cwd "$new" | tail -1
newreal=$(cd "$new" && pwd -P)
check file "$work/B" "$newreal" "$id" "$(python3 -c 'import re,sys; print(re.sub(r"[^a-zA-Z0-9]", "-", sys.argv[1]))' "$newreal")"

# 3. Through MinIO, into C at yet another path, under a new id.
other=$work/other/checkout
mkdir -p "$other" "$work/C/projects"
as "$A" export --session "$id" -o "$bucket/exports" >/dev/null
as "$work/C" import "$bucket/exports" "$id" --cwd "$other" --new-id >"$work/c.txt"
tail -1 "$work/c.txt"
nid=$(sed -n 's/^resume: .* --resume //p' "$work/c.txt")
check s3 "$work/C" "$other" "$nid" "$(python3 -c 'import re,sys; print(re.sub(r"[^a-zA-Z0-9]", "-", sys.argv[1]))' "$other")"

# 4. Archived to MinIO from a copy of A, unarchived into D. The client
# finds a session by its id from any working dir; where it is is asserted.
as "$work/A2" archive --older-than 1d --to "$bucket/archive" >/dev/null
[ ! -e "$work/A2/projects/$folder/$id.jsonl" ] || { echo "FAIL: archive --to s3 left the transcript" >&2; fail=1; }
mkdir -p "$work/D/projects" "$work/anywhere"
as "$work/D" unarchive --from "$bucket/archive" "$id"
check archive "$work/D" "$work/anywhere" "$id" "$folder"

# 5. A session of a Windows machine: A's session with every cwd a
# C:\ path, in the folder the client makes of it, imported here.
W=$work/W
wfolder=C--Users-dev-proj
mkdir -p "$W/projects/$wfolder" "$work/E/projects" "$work/win-import"
python3 - "$A/projects/$folder/$id.jsonl" "$W/projects/$wfolder/$id.jsonl" <<'PY'
import json, sys
src, dst = sys.argv[1:]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        r = json.loads(line)
        if "cwd" in r: r["cwd"] = "C:\\Users\\dev\\proj" + ("\\sub" if r.get("type") == "assistant" else "")
        out.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
cp -a "$A-store" "$W-store"
as "$W" export --session "$id" -o "$work/win.tar.zst" >/dev/null
as "$work/E" import "$work/win.tar.zst" --cwd "$work/win-import" | tail -1
check windows "$work/E" "$work/win-import" "$id" "$(python3 -c 'import re,sys; print(re.sub(r"[^a-zA-Z0-9]", "-", sys.argv[1]))' "$work/win-import")"
if grep -q 'C:\\\\Users' <(grep -o '"cwd":"[^"]*"' "$work/E/projects/"*/"$id.jsonl"); then
  echo "FAIL windows: a record's cwd still names C:\\Users"; fail=1
fi

if [ "$fail" != 0 ]; then
  keep=1
  echo "realclient-move: FAILED (work folder kept: $work)"
  exit 1
fi
echo "realclient-move: PASS"
