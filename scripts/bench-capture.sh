#!/usr/bin/env bash
# Speed of the live hooks, each measured with farm-bench beside a yardstick
# in the same run (A and B alternate; the ratio is taken pair by pair):
#
#   1. a hook with nothing to do (PreToolUse on Read, empty tool memory)
#      beside an empty static Go program, both started with the same stdin
#      through `sh -c 'exec ... < file'` (farm-bench gives no stdin);
#   2. PostToolUse capturing a 1 MB Bash output (stored durably: zstd,
#      four fsyncs) beside the same hook on a 1 KB output (nothing to do);
#   3. the PreToolUse lesson lookup with a full tool memory (100 lessons,
#      one for the tool) and a 200 MB transcript, beside the same call
#      with an empty memory and no transcript: the lookup reads the bounded
#      store only.
#
#   scripts/bench-capture.sh            RUNS=100 by default
#
# Needs farm-bench (on PATH) and go. Everything happens in a temp dir.
set -euo pipefail
runs=${RUNS:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v farm-bench >/dev/null || { echo "bench-capture: needs farm-bench on PATH"; exit 2; }

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/ccm" ./cmd/ccm)
mkdir -p "$tmp/empty"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
(cd "$tmp/empty" && printf 'module empty\n\ngo 1.26\n' >go.mod && CGO_ENABLED=0 go build -o "$tmp/emptyprog" .)
ls -l "$tmp/ccm" "$tmp/emptyprog" | awk '{print "binary", $NF, $5, "bytes"}'

export CLAUDE_CONFIG_DIR=$tmp/claude CCM_HOME=$tmp/claude/ccm CCM_CACHE_DIR=$tmp/claude/cache/ccm
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist
python3 - "$tmp" <<'EOF'
import json, os, sys
t = sys.argv[1]
def call(path, stdout, cmd):
    json.dump({"session_id": "bench", "transcript_path": t + "/tx.jsonl", "cwd": t + "/proj", "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": cmd},
               "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}},
              open(path, "w"))
line = "ok  \tccm/some/package\t0.123s coverage: 81.2% of statements\n"
call(t + "/post-1mb.json", (line * (1_000_000 // len(line) + 1))[:1_000_000], "go test ./...")
call(t + "/post-1kb.json", line * 15, "go test ./...")
pre = {"session_id": "bench", "transcript_path": t + "/tx.jsonl", "cwd": t + "/proj", "hook_event_name": "PreToolUse",
       "tool_name": "Read", "tool_use_id": "toolu_2", "tool_input": {"file_path": t + "/proj/x.go"}}
json.dump(pre, open(t + "/pre-read.json", "w"))
pre["tool_name"], pre["tool_input"] = "Bash", {"command": "make"}
json.dump(pre, open(t + "/pre-bash.json", "w"))
os.makedirs(t + "/claude/ccm", exist_ok=True)
with open(t + "/memory-full.ndjson", "w") as f:
    for i in range(100):
        tool = "Bash" if i == 50 else "mcp__db__query"
        f.write(json.dumps({"ts": "2026-11-24T10:00:00Z", "tool": tool, "error": "failure %d" % i, "input": "input %d" % i,
                            "project": t + "/proj"}) + "\n")
EOF
# A 200 MB transcript beside the hook's session: PreToolUse must not read it.
(cd "$root" && go run ./scripts/gen -o "$tmp/tx.jsonl" -size 200MB >/dev/null)
printf 'CCM_TOOL_MEMORY_ENABLED=true\n' >"$CCM_HOME/config.env"

fb() { farm-bench -n "$runs" --warmup 5 "$@" 2>&1 | grep -E '^(A|B) = |wall s|cpu s|A/B (wall|cpu)'; }

echo "== 1. a hook with nothing to do beside an empty static Go program"
fb --vs "sh -c 'exec $tmp/emptyprog < $tmp/pre-read.json'" -- sh -c "exec $tmp/ccm hook PreToolUse < $tmp/pre-read.json"

echo "== 2. capturing a new 1 MB Bash output each run (A) beside a 1 KB output passed through (B), same pipeline"
# The output must be new each run (a stored one is only verified): the
# pipeline puts the shell's pid in front of it. Both sides pay for the
# shell and the two cats.
for n in 1mb 1kb; do
  python3 - "$tmp/post-$n.json" <<'EOF2'
import sys
s = open(sys.argv[1]).read()
i = s.index('"stdout": "') + len('"stdout": "')
open(sys.argv[1] + ".head", "w").write(s[:i]); open(sys.argv[1] + ".tail", "w").write(s[i:])
EOF2
  cat >"$tmp/post-$n.sh" <<EOF2
#!/bin/sh
{ cat $tmp/post-$n.json.head; printf 'run %s ' \$\$; cat $tmp/post-$n.json.tail; } | exec $tmp/ccm hook PostToolUse >/dev/null
EOF2
  chmod +x "$tmp/post-$n.sh"
done
fb --vs "$tmp/post-1kb.sh" -- "$tmp/post-1mb.sh"
echo "   blobs stored: $(ls "$CCM_CACHE_DIR/blobs" | wc -l)"

echo "== 3. lesson lookup: full memory, 200 MB transcript (A) beside empty memory, no transcript (B)"
# Each run of A sees a new session (the lesson is shown once per session).
cat >"$tmp/pre-full.sh" <<EOF
#!/bin/sh
sed "s/\"bench\"/\"s\$\$\"/" $tmp/pre-bash.json | AGENTICORE_TOOL_MEMORY_PATH=$tmp/memory-full.ndjson exec $tmp/ccm hook PreToolUse
EOF
cat >"$tmp/pre-empty.sh" <<EOF
#!/bin/sh
sed "s/\"bench\"/\"s\$\$\"/;s#$tmp/tx.jsonl#/nonexistent.jsonl#" $tmp/pre-bash.json | AGENTICORE_TOOL_MEMORY_PATH=$tmp/memory-empty.ndjson exec $tmp/ccm hook PreToolUse
EOF
chmod +x "$tmp/pre-full.sh" "$tmp/pre-empty.sh"
"$tmp/pre-full.sh" | grep -q 'failure 50' || { echo "bench-capture: the lesson was not shown"; exit 1; }
fb --vs "$tmp/pre-empty.sh" -- "$tmp/pre-full.sh"
