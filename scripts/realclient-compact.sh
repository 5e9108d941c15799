#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, mock API) that ccm's
# context monitor and compaction hooks work end to end, over one session
# resumed run after run (each run is a `claude -p`, so each ends with Stop):
#   A  a new session, fill ~63 %          no warning
#   B  resumed, fill ~74 %                Stop warns once (systemMessage, 70 %)
#   C  resumed, fill ~84 %                the model gets the 70 % warning with
#                                         the prompt; Stop warns once (80 %)
#   D  resumed, fill ~86 %                the model gets the 80 % warning; silent
#   E  resumed with the prompt "/compact keep the cache notes": PreCompact
#      saves the preservation block (systemMessage), SessionStart(compact)
#      injects it
#   F  resumed, "continue": the first request carries the preservation block
#   G  resumed: TaskCreate, TaskUpdate to completed, 32 Bash turns: the
#      cold task's summary is written (ccm tasks lists it)
#   H  resumed, "/compact": the new block carries that summary
# and across all runs: every hook exits 0, no hook output is rejected, each
# warning appears exactly once in the transcript.
#
# The mock reports input tokens as the size of the request's messages / 4,
# so the fill is steered with the size of a Bash output in each run, against
# CONTEXT_MAX_TOKENS=20000 (set in ccm's config.env, with BASH_THRESHOLD=0:
# the capture would otherwise replace those outputs by a stub). Each run's Bash output
# is computed from the fill the previous run left.
#
#   scripts/realclient-compact.sh          (KEEP=1 keeps the work folder)
#
# Needs python3 and go; installs the pinned client once (no network later).
# If the client truly cannot be installed, prints SKIP and exits 0. Any
# failed check exits 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/realclient.sh" realclient-compact
home=$work/ccmhome
max=20000

# The hooks ccm install registers, with CCM_HOME in the settings' env so
# every run of the session shares ccm's state (each run gets a new config
# dir from the harness).
mkdir -p "$work/stage" # a config dir Claude Code has made: ccm refuses one that does not exist
CLAUDE_CONFIG_DIR=$work/stage CCM_HOME=$work/stage/ccm "$ccm" install --ccm "$ccm" >"$work/install.txt"
python3 - "$work/stage/settings.json" "$work/settings.json" "$home" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s.setdefault("env", {})["CCM_HOME"] = sys.argv[3]
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF
mkdir -p "$home"
cat >"$home/config.env" <<EOF
CONTEXT_MAX_TOKENS=$max
CONTEXT_REFRESH_ENABLED=false
BASH_THRESHOLD=0
EOF

fail=0
not() { ! "$@"; }
check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok    $1"; else echo "FAIL  $1"; fail=1; fi
}

# fill FILE: the fill of the last main-chain usage in a transcript.
fill() {
  python3 - "$1" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1], errors="replace"):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
        n = 0
    m = r.get("message") if isinstance(r.get("message"), dict) else {}
    u = m.get("usage")
    if r.get("type") == "assistant" and u and not r.get("isSidechain") and m.get("model") != "<synthetic>":
        n = u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
print(n)
EOF
}

# first_request_has DIR TEXT: the first main request of a run contains TEXT.
first_request_has() {
  python3 - "$1" "$2" <<'EOF'
import glob, json, sys
for p in sorted(glob.glob(sys.argv[1] + "/requests/*.json")):
    r = json.load(open(p))
    body = r.get("body", r)
    if isinstance(body, dict) and "tools" in body:
        sys.exit(0 if sys.argv[2] in json.dumps(body["messages"], ensure_ascii=False) else 1)
sys.exit(1)
EOF
}

# shown FILE REGEX: how many systemMessages matching REGEX the client
# recorded for the user (attachment hook_system_message) in a transcript.
shown() {
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
n = 0
for line in open(sys.argv[1], errors="replace"):
    try:
        a = json.loads(line).get("attachment") or {}
    except ValueError:
        continue
    if a.get("type") == "hook_system_message" and re.search(sys.argv[2], a.get("content", "")):
        n += 1
print(n)
EOF
}

# run NAME PROMPT BYTES [RESUME]: one -p run whose Bash calls print BYTES
# bytes in all, at most 20,000 a call (the client moves a larger output to
# a file and sends the model only a preview).
run() {
  local name=$1 prompt=$2 bytes=$3 resume=${4:-}
  python3 - "$bytes" "$name" >"$work/$name.json" <<'EOF'
import json, sys
left, name, steps = int(sys.argv[1]), sys.argv[2], []
while left > 0:
    n = min(left, 20000)
    left -= n
    # Ids unique across runs: the mock numbers from 01 in every run, and
    # a resumed history must not hold two tool_use blocks with one id.
    steps.append({"content": [{"type": "tool_use", "id": "toolu_%s_%02d" % (name, len(steps)), "name": "Bash", "input": {
        "command": "head -c %d /dev/zero | tr '\\0' x; echo" % n, "description": "print output"}}]})
steps.append({"content": [{"type": "text", "text":
    "Run %s done. I decided to keep the cache because the working set is small." % name}]})
print(json.dumps(steps))
EOF
  drive "$name" "$prompt" "$resume" Bash
}

# drive NAME PROMPT RESUME TOOLS: one -p run of the script $work/NAME.json.
drive() {
  local name=$1 prompt=$2 resume=$3 tools=$4
  local args=(--settings "$work/settings.json" --script "$work/$name.json" --prompt "$prompt"
    --allowed-tools "$tools" --out "$work/$name")
  [ -n "$resume" ] && args+=(--resume "$resume")
  if ! $session "${args[@]}" >"$work/$name.out" 2>&1; then
    echo "FAIL  run $name: the harness reported a hook error or a rejected output:"
    tail -15 "$work/$name.out"
    fail=1
  fi
}

# bytes_for PCT PREV: Bash output that takes the fill from PREV tokens to
# about PCT % of the window (4 bytes a token; 700 tokens of prompt, tool
# call and hook text around it).
bytes_for() { echo $(( ($1 * max / 100 - $2 - 700) * 4 )); }

run A "make some output" 40000
fa=$(fill "$work/A/transcript.jsonl")
run B "more output" "$(bytes_for 74 "$fa")" "$work/A/transcript.jsonl"
fb=$(fill "$work/B/transcript.jsonl")
run C "more output" "$(bytes_for 84 "$fb")" "$work/B/transcript.jsonl"
fc=$(fill "$work/C/transcript.jsonl")
run D "a little more" "$(bytes_for 86 "$fc")" "$work/C/transcript.jsonl"
fd=$(fill "$work/D/transcript.jsonl")
echo "fill after A..D: $fa $fb $fc $fd tokens of $max"

tx=$work/D/transcript.jsonl
check "A stays below 70 % and is silent" test "$(shown "$work/A/transcript.jsonl" 'Context')" = 0
check "the 70 % warning reaches the user once (B)" test "$(shown "$tx" '^ccm: Context at 7[0-9]%')" = 1
check "the 80 % warning reaches the user once (C)" test "$(shown "$tx" '^ccm: Context at 8[0-9]%')" = 1
check "no 90 % warning" test "$(shown "$tx" 'nearly full')" = 0
check "B's first request has no warning yet" not first_request_has "$work/B" "ccm context monitor"
check "C's first request gives the model the 70 % warning" first_request_has "$work/C" "threshold 70% crossed"
check "D's first request gives the model the 80 % warning" first_request_has "$work/D" "threshold 80% crossed"

run E "/compact keep the cache notes" 0 "$tx"
check "PreCompact ran and told the user the state was saved" grep -q "saved the working state" "$work/E/transcript.jsonl"
check "SessionStart(compact) injected the preservation block" grep -q "WORKING STATE PRESERVED" "$work/E/transcript.jsonl"
check "the block carries the /compact focus" grep -q "keep the cache notes" "$work/E/transcript.jsonl"
check "the block carries the assistant's decision" grep -q "decided to keep the cache" "$work/E/transcript.jsonl"

run F "continue" 0 "$work/E/transcript.jsonl"
check "the first request after the compaction carries the preservation block" first_request_has "$work/F" "WORKING STATE PRESERVED"
check "no warning after the compaction lowered the fill" test "$(shown "$work/F/transcript.jsonl" '^ccm: Context')" = 2

# G: a task created and completed by id (TaskCreate, TaskUpdate), then 32
# short Bash calls, each its own assistant turn. The fill is low after the
# compaction, so CONTEXT_THRESHOLD=1 here (the threshold rule itself is in
# the Go tests); the check runs every CHECK_FREQUENCY=10 turns and writes
# the task's summary once it is 20 turns cold. H: /compact again carries it.
echo "CONTEXT_THRESHOLD=1" >>"$home/config.env"
python3 - >"$work/G.json" <<'EOF'
import json
steps = [{"content": [{"type": "tool_use", "id": "toolu_G_tc", "name": "TaskCreate",
          "input": {"subject": "Write the parser", "description": "the expression parser"}}]},
         {"content": [{"type": "tool_use", "id": "toolu_G_ed", "name": "Bash",
          "input": {"command": "echo parser > parser.txt", "description": "write the parser"}}]},
         {"content": [{"type": "tool_use", "id": "toolu_G_tu", "name": "TaskUpdate",
          "input": {"taskId": "1", "status": "completed"}}]}]
for i in range(32):
    steps.append({"content": [{"type": "tool_use", "id": "toolu_G_%02d" % i, "name": "Bash",
                  "input": {"command": "true", "description": "step"}}]})
steps.append({"content": [{"type": "text", "text": "All steps done."}]})
print(json.dumps(steps))
EOF
drive G "build the parser" "$work/F/transcript.jsonl" "Bash TaskCreate TaskUpdate"
CCM_HOME=$home "$ccm" --json tasks >"$work/tasks.json" 2>&1 || true
one_summary() {
  python3 - "$work/tasks.json" <<'EOF'
import json, sys
l = json.load(open(sys.argv[1]))
ok = len(l) == 1 and l[0]["subject"] == "Write the parser" and l[0]["task_id"] == "1" \
    and "echo parser > parser.txt" in l[0]["commands_run"] and l[0]["end_turn"] > l[0]["start_turn"]
sys.exit(0 if ok else 1)
EOF
}
check "the cold task's summary was written once, in claude-agentic-framework's shape (ccm tasks)" one_summary
run H "/compact" 0 "$work/G/transcript.jsonl"
check "the next preservation block carries the cold-task summary" grep -q "Task: Write the parser" "$work/H/transcript.jsonl"

for r in A B C D E F G H; do
  if grep -qiE "validation failed|incorrect event name" "$work/$r/debug.log" 2>/dev/null; then
    echo "FAIL  run $r: the client rejected a hook output:"
    grep -iE "validation failed|incorrect event name" "$work/$r/debug.log" | head -3
    fail=1
  fi
done
check "every hook run logged nothing unexpected" bash -c "! grep -E 'internal error|bad input' '$home/logs/hooks.log' 2>/dev/null"
if [ "$fail" = 0 ]; then
  echo "realclient-compact: PASS"
else
  echo "realclient-compact: FAIL (work folder: $work; rerun with KEEP=1 to keep it)"
  keep=1
fi
exit $fail
