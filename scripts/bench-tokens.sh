#!/usr/bin/env bash
# Times the cl100k estimate on text that splits into few words, with
# farm-bench (A and B in turn, medians and the A/B ratio pair by pair):
# a transcript whose one tool output is SIZE of one repeated character,
# and one whose tool output is SIZE of base64. For each, ccm analyze and
# ccm purge --dry-run against the same command with --no-tokens, and
# ccm report against ccm analyze --no-tokens (the page has no
# --no-tokens; it reads the file the same way). The estimate's time a
# byte must not depend on how the bytes split into words: A/B stays near
# 1 whatever the text.
#
# With BASE (a git revision), the estimate of every corpus session is then
# compared, ccm analyze --json built from BASE against this tree: token
# counts side by side and the largest difference.
#
#   scripts/bench-tokens.sh [SIZE_MB] [RUNS]   # default 60 3
#   BASE=main scripts/bench-tokens.sh 60 3
#
# Needs farm-bench on PATH and python3. The work dir is removed.
set -euo pipefail
size=${1:-60}
runs=${2:-3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-tokens.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm)
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
ccm=$work/ccm

# One prompt, a Bash call, its SIZE-MB output (in the result and in
# toolUseResult, as Claude Code writes it), and a reply.
python3 - "$work" "$size" <<'PY'
import base64, json, os, random, sys
work, mb = sys.argv[1], int(sys.argv[2])
n = mb << 20
rnd = random.Random(1)
outputs = {
    "one": "x" * n,
    "base64": base64.b64encode(rnd.randbytes(n * 3 // 4)).decode()[:n],
}
for name, out in outputs.items():
    recs = [
        {"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u1", "sessionId": "s",
         "message": {"role": "user", "content": "print the file"}},
        {"parentUuid": "u1", "isSidechain": False, "type": "assistant", "uuid": "a1", "sessionId": "s",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat f"}}],
                     "usage": {"input_tokens": 3, "output_tokens": 5}}},
        {"parentUuid": "a1", "isSidechain": False, "type": "user", "uuid": "u2", "sessionId": "s",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": out}]},
         "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False}},
        {"parentUuid": "u2", "isSidechain": False, "type": "assistant", "uuid": "a2", "sessionId": "s",
         "message": {"id": "m2", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "text", "text": "done"}],
                     "usage": {"input_tokens": 3, "output_tokens": 5}}},
    ]
    with open(os.path.join(work, name + ".jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
PY

for name in one base64; do
  f=$work/$name.jsonl
  echo "== $name: a ${size} MB tool output ($(du -h "$f" | cut -f1) transcript)"
  echo "-- ccm analyze vs ccm analyze --no-tokens"
  farm-bench -n "$runs" --timeout 900 --vs "$ccm analyze --no-tokens $f" -- "$ccm" analyze "$f"
  echo "-- ccm purge --dry-run vs ccm purge --dry-run --no-tokens"
  farm-bench -n "$runs" --timeout 900 --vs "$ccm purge --dry-run --no-tokens $f" -- "$ccm" purge --dry-run "$f"
  echo "-- ccm report vs ccm analyze --no-tokens"
  farm-bench -n "$runs" --timeout 900 --vs "$ccm analyze --no-tokens $f" -- "$ccm" report -o "$work/$name.html" "$f"
done

[ -n "${BASE:-}" ] || exit 0
corpus=${SHARED:-$repo/../shared}/corpus/claude-config/projects
if [ ! -d "$corpus" ]; then
  echo "no corpus at $corpus: no comparison"
  exit 0
fi
mkdir -p "$work/base"
git -C "$repo" archive "$BASE" | tar -x -C "$work/base"
(cd "$work/base" && go build -o "$work/ccm-base" ./cmd/ccm)
echo "== the estimate on the corpus: $BASE vs this tree"
python3 - "$work/ccm-base" "$ccm" "$corpus" <<'PY'
import glob, json, os, subprocess, sys
base, new, corpus = sys.argv[1:4]
def est(ccm, p):
    """analyze's estimate, and purge --dry-run's of what the purge leaves."""
    a = json.loads(subprocess.run([ccm, "analyze", "--json", p], check=True, capture_output=True).stdout)[0]
    e = a.get("context_estimate") or {"tokens": 0}  # none without an active chain
    d = json.loads(subprocess.run([ccm, "purge", "--dry-run", "--json", p], check=True, capture_output=True).stdout)[0]
    return e["tokens"], (d.get("tokens_after") or {"tokens": 0})["tokens"]
for i, what in enumerate(["analyze", "purge --dry-run (after)"]):
    tb = tn = worst = rows = 0
    for p in sorted(glob.glob(os.path.join(corpus, "*", "*.jsonl"))):
        b, n = est(base, p)[i], est(new, p)[i]
        tb, tn, rows = tb + b, tn + n, rows + 1
        worst = max(worst, 100 * abs(n - b) / max(1, b))
        if n != b:
            print("  %-60s %9d -> %9d  %+.3f %%" % (os.path.relpath(p, corpus)[-60:], b, n, 100 * (n - b) / max(1, b)))
    print("%s, %d sessions: %d tokens before, %d after (%+.4f %%); largest difference on one session %.3f %%" % (what, rows, tb, tn, 100 * (tn - tb) / max(1, tb), worst))
PY
