#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against the mock API of
# the project's harness, scripts/realclient) that purged transcripts resume,
# that the request the client would send is valid, and that no history is
# lost: for inputs that resume cleanly before the purge, the purged file
# yields the same number of messages and tool pairs.
#
#   scripts/realclient-resume.sh            # build ccm, install the pinned client if needed, run all cases
#
# Needs go, npm (the client is installed from the npm registry into
# ~/.cache/ccm-realclient once) and python3 (to read the reports). The
# corpus cases run when ../shared/corpus is there ($CCM_SHARED to point
# elsewhere); without it they are reported as not run and the rest runs.
# Exits non-zero if any case fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${CCM_SHARED:-$repo/../shared}
corpus=$shared/corpus/claude-config/projects
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-realclient.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen &&
  go build -o "$work/rc" ./scripts/realclient)
rc=$work/rc
if ! claude=$("$rc" install 2>"$work/install.log"); then
  echo "realclient: the pinned Claude Code client could not be installed:" >&2
  tail -5 "$work/install.log" >&2
  exit 1
fi
export REALCLIENT_CLAUDE=$claude
ccm=$work/ccm
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/ccmhome
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist

fail=0
# resume FILE [resume_check args...]: resumes FILE in the client; sets
# $report to the report's path and $verdict to its verdict line. (Not to be
# called in a command substitution: the variables would not survive it.)
resume() {
  local f=$1; shift
  local out=$work/out-$(basename "$f" .jsonl)-$RANDOM
  "$rc" resume "$f" --out "$out" --quiet "$@" >"$out.txt" 2>&1 || true
  report=$out/report.json
  verdict=$(head -1 "$out.txt" | cut -c1-200)
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$1" "$2"; }

# case NAME INPUT SAME PURGE-FLAGS [-- resume_check args]: purge a copy of
# INPUT, check it, resume it. SAME=same means the purged file must give
# the same messages and tool pairs as the original.
case_() {
  local name=$1 input=$2 same=$3; shift 3
  local flags=() extra=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
    flags+=("$1"); shift
  done
  local f=$work/$name.jsonl
  cp "$input" "$f"; chmod 600 "$f"
  local before_msgs before_pairs
  if [ "$same" = same ]; then
    resume "$f" ${extra[@]+"${extra[@]}"}
    before_msgs=$(field "$report" "stats['messages']"); before_pairs=$(field "$report" "stats['tool_pairs']")
  fi
  "$ccm" purge --backup none --no-tokens ${flags[@]+"${flags[@]}"} "$f" >/dev/null
  if ! "$ccm" check -q "$f" >"$work/check.txt"; then
    echo "FAIL $name: the purged file does not pass ccm check:"; cat "$work/check.txt"; fail=1; return
  fi
  resume "$f" ${extra[@]+"${extra[@]}"}
  echo "$name: $verdict"
  if [ "$(field "$report" "verdict")" != VALID ]; then
    echo "FAIL $name: the client's request is not valid: $(field "$report" "problems[:3]")"; fail=1; return
  fi
  if [ "$same" = same ]; then
    local m p
    m=$(field "$report" "stats['messages']"); p=$(field "$report" "stats['tool_pairs']")
    if [ "$m" != "$before_msgs" ] || [ "$p" != "$before_pairs" ]; then
      echo "FAIL $name: history changed: messages $before_msgs -> $m, tool pairs $before_pairs -> $p"; fail=1; return
    fi
  fi
}

spotter=$corpus/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl
demo=$corpus/-path-to-Demo/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl
"$work/gen" -o "$work/g-defects.in" -turns 30 -seed 3 -thinking -progress -images -defects all 2>/dev/null
"$work/gen" -o "$work/g-330.in" -turns 12 -seed 5 -version 2.1.330 -thinking -progress 2>/dev/null
"$work/gen" -o "$work/g-big.in" -turns 40 -seed 7 -thinking -progress -images 2>/dev/null

# A session the real 2.1.330 client writes itself: two turns (the second a
# resume), with thinking, a large tool output and every per-turn record
# (prompt_snapshot, api-request-*) of that version.
for turn in 1 2; do
  resume_arg=()
  [ $turn -eq 2 ] && resume_arg=(--resume "$work/live1/transcript.jsonl")
  "$rc" session --settings "$repo/scripts/realclient/no-hooks.json" \
    --script "$repo/scripts/realclient/turn$turn.json" --prompt "Count to 3000, turn $turn." \
    --allowed-tools Bash ${resume_arg[@]+"${resume_arg[@]}"} --out "$work/live$turn" >"$work/live$turn.txt" 2>&1 || {
      echo "FAIL: the client did not write a session:"; tail -3 "$work/live$turn.txt"; exit 1; }
done

case_ real-2.1.330-session "$work/live2/transcript.jsonl" same
if [ -d "$corpus" ]; then
  case_ spotter "$spotter" same
  case_ spotter-archive "$spotter" same --archive-compacted
  # 1.0.x files get an empty system turn from the client on its default
  # model whatever ccm does (docs/transcript-format.md, the empty system
  # turn); pin a 4.x model.
  case_ demo "$demo" same -- --model claude-opus-4-6
else
  echo "realclient-resume: corpus cases not run: no ../shared/corpus"
fi
case_ gen-2.1.330-bookkeeping "$work/g-330.in" same
case_ gen-all-defects "$work/g-defects.in" repaired
case_ gen-inject-compaction "$work/g-big.in" shorter --inject-compaction --keep-turns 3

# Shapes the client writes: parallel calls as a chain of tool_use lines with
# their results beside the walk (the first one with the user's typed text),
# a session that starts mid-way, a complete last record without its newline.
# The purged file resumes with the same history, and the request carries
# the fork's real output (or its stub, which ccm cache get turns back into
# it) and the user's text, never a synthesised result.
"$work/gen" -o "$work/g-shapes.in" -turns 12 -seed 9 -version 2.1.330 -progress -defects shapes \
  -manifest "$work/g-shapes.json" 2>/dev/null
case_ gen-client-shapes "$work/g-shapes.in" same
if ! python3 - "$work/g-shapes.json" "$work/g-shapes.in" "$(dirname "$report")/request.json" <<'PY'
import json, sys
m, orig, req = json.load(open(sys.argv[1])), sys.argv[2], json.load(open(sys.argv[3]))
fork = [d for d in m["defects"] if d["kind"] == "parallel-fork"][0]
tid, line = fork["toolUseId"], fork["line"]
rec = json.loads(open(orig, encoding="utf-8").read().split("\n")[line - 1])
want = [b for b in rec["message"]["content"] if b.get("tool_use_id") == tid][0]["content"]
text = [b["text"] for b in rec["message"]["content"] if b.get("type") == "text"][0]
sent = [b for msg in req["messages"] if isinstance(msg["content"], list)
        for b in msg["content"] if b.get("tool_use_id") == tid]
body = json.dumps(req)
got = sent[0]["content"] if len(sent) == 1 else None
stub = isinstance(got, str) and got.startswith("[CCM_CACHED]")
if got is None or (got != want and not stub) or text not in body:
    sys.exit("the fork's real result (or its stub) or the user's text is not in the request")
PY
then
  echo "FAIL gen-client-shapes: the request after the purge lacks the fork's real output"; fail=1
fi

if [ $fail -ne 0 ]; then echo "realclient: some purged transcripts do not resume cleanly"; exit 1; fi
echo "realclient: every purged transcript resumes in Claude Code $("$claude" --version | cut -d' ' -f1) with a valid request"
