#!/usr/bin/env bash
# Proves with the real Claude Code client that a session ccm archives and
# unarchives comes back byte for byte, with its mtimes, where
# `claude --resume` finds it: a small session is generated into a temp config
# dir whose records' cwd is a temp project dir, archived, unarchived, compared,
# and resumed from that config dir in that working dir.
#
#   scripts/realclient-archive.sh
#
# The resume goes through the project's harness (scripts/realclient:
# `rc resume --config-dir D --cwd C --session ID`); RC runs another with the
# same flags. Exits non-zero if any step fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-archive-rc.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/rc" ./scripts/realclient)
RC=${RC:-"$work/rc"}
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
ccm=$work/ccm
project=$work/my\ project/café
mkdir -p "$project"
export CLAUDE_CONFIG_DIR=$work/claude CCM_HOME=$work/ccmhome CCM_CACHE_DIR=$work/cache
sid=5f0c2a8e-7d1b-4c3e-9a6f-0123456789ab
folder=$(printf '%s' "$project" | sed 's/[^A-Za-z0-9]/-/g')
dir=$CLAUDE_CONFIG_DIR/projects/$folder
mkdir -p "$dir"
# A small, valid session whose records name the project as cwd.
"$work/gen" -o "$work/gen.jsonl" -turns 3 -seed 7 >/dev/null
python3 - "$work/gen.jsonl" "$dir/$sid.jsonl" "$project" "$sid" <<'PY'
import json, sys
src, dst, cwd, sid = sys.argv[1:]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        line = line.rstrip("\n")
        if not line:
            continue
        r = json.loads(line)
        if "cwd" in r: r["cwd"] = cwd
        if "sessionId" in r: r["sessionId"] = sid
        out.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
touch -d '40 days ago' "$dir/$sid.jsonl"
cp -p "$dir/$sid.jsonl" "$work/orig.jsonl"
before=$(stat -c %Y.%y "$dir/$sid.jsonl")

"$ccm" archive --older-than 30d
test ! -e "$dir/$sid.jsonl" || { echo "FAIL: the transcript is still there after archive" >&2; exit 1; }
"$ccm" sessions --archived | grep -q "$sid" || { echo "FAIL: not listed by sessions --archived" >&2; exit 1; }
"$ccm" unarchive "$sid"
cmp "$dir/$sid.jsonl" "$work/orig.jsonl" || { echo "FAIL: not restored byte for byte" >&2; exit 1; }
after=$(stat -c %Y.%y "$dir/$sid.jsonl")
[ "$before" = "$after" ] || { echo "FAIL: mtime $after, was $before" >&2; exit 1; }

# Resume it where it lives. Its mtime is 40 days old, beyond the default
# cleanupPeriodDays: the client's sweep would delete it at start, so the
# config dir keeps sessions for this run (what `unarchive --touch` avoids).
printf '{"cleanupPeriodDays": 99999}\n' >"$CLAUDE_CONFIG_DIR/settings.json"
if $RC resume --config-dir "$CLAUDE_CONFIG_DIR" --cwd "$project" --session "$sid" --out "$work/out" --quiet; then
  echo "PASS: archived, unarchived byte for byte with its mtime, and resumed by the real client"
else
  echo "FAIL: the real client did not resume the unarchived session (see $work/out)" >&2
  trap - EXIT
  exit 1
fi
