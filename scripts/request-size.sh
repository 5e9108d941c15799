#!/usr/bin/env bash
# Measures what a purge saves where it counts: the size of the request the
# real Claude Code client sends when it resumes a session. For every main
# session of ../shared/corpus that resumes (subagent files and files the
# client cannot resume are skipped, and listed), it resumes the original and
# the purged copy offline against the mock API and prints, per file, the
# request's bytes before and after and their ratio, then the median ratio.
#
#   scripts/request-size.sh                    # ccm purge with its defaults
#   scripts/request-size.sh --recent-turns 4   # any purge flags
#
# The purge runs on a copy with --backup none; the corpus is only read.
# Needs python3 and npm (the pinned client is installed once).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${CCM_SHARED:-$repo/../shared}
corpus=$shared/corpus/claude-config/projects
# $REQUEST_SIZE_OUT keeps every request for a look at what they carry.
if [ -n "${REQUEST_SIZE_OUT:-}" ]; then
  work=$REQUEST_SIZE_OUT; rm -rf "$work"; mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-request-size.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi

(cd "$repo" && go build -o "$work/rc" ./scripts/realclient)
# The project's harness resumes a file and writes DIR/request.json and
# DIR/report.json.
resume_cmd=("$work/rc" resume)
if ! claude=$("$work/rc" install 2>"$work/install.log"); then
  echo "request-size: the pinned Claude Code client could not be installed:" >&2
  tail -5 "$work/install.log" >&2
  exit 1
fi
export REALCLIENT_CLAUDE=$claude
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm)
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/ccmhome
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist

# sizes DIR: the size of the first main request the client sent and of its
# messages array: report.json's stats.request_bytes and messages_bytes
# where the harness gives them, else the size of request.json (the exact
# body) and its "chars" (the serialised messages).
sizes() {
  python3 - "$1" <<'EOF'
import json, os, sys
d = sys.argv[1]
st = json.load(open(os.path.join(d, "report.json"))).get("stats", {})
req = st.get("request_bytes") or os.path.getsize(os.path.join(d, "request.json"))
msgs = st.get("messages_bytes") or st["chars"]
print(req, msgs)
EOF
}

# resume FILE OUT: resumes FILE; fails unless the client sent a valid request.
# The purge flags are the script's arguments.
resume() {
  local f=$1 out=$2 extra=()
  # 1.0.x sessions get an empty system turn on the client's default model
  # whatever ccm does (docs/transcript-format.md, the empty system turn):
  # pin a 4.x model for them.
  if grep -q '"version":"1\.' "$f"; then extra=(--model claude-opus-4-6); fi
  "${resume_cmd[@]}" "$f" --out "$out" --quiet ${extra[@]+"${extra[@]}"} >"$out.txt" 2>&1
}

fail=0
ratios=()
mratios=()
skipped=()
printf '%-30s %9s %9s %6s   %9s %9s %6s\n' "file" "request" "after" "ratio" "messages" "after" "ratio"
while IFS= read -r f; do
  case $f in */subagents/*|*/agent-*.jsonl) continue ;; esac
  name=$(basename "$(dirname "$f")" | cut -c1-21)/$(basename "$f" .jsonl | cut -c1-8)
  id=$(basename "$f" .jsonl)
  # -p keeps the modification time: a file written in the last 2 minutes
  # would be purged as a live session.
  cp -p "$f" "$work/$id.jsonl"; chmod 600 "$work/$id.jsonl"
  if ! resume "$work/$id.jsonl" "$work/$id.before"; then
    skipped+=("$name ($(head -1 "$work/$id.before.txt" | cut -c1-60))")
    continue
  fi
  read -r before mbefore < <(sizes "$work/$id.before")
  "$work/ccm" purge --backup none --no-tokens "$@" "$work/$id.jsonl" >/dev/null
  if ! resume "$work/$id.jsonl" "$work/$id.after"; then
    echo "FAIL $name: the purged file does not resume: $(head -1 "$work/$id.after.txt" | cut -c1-160)"
    exit 1
  fi
  read -r after mafter < <(sizes "$work/$id.after")
  # What the purge must keep: check passes, a second purge changes nothing,
  # and the request after it has at least the messages and tool pairs of
  # the one before, every prompt, and every tool output as it was or as a
  # stub that ccm cache get turns back into the same value.
  if ! "$work/ccm" check -q "$work/$id.jsonl" >"$work/$id.check" 2>&1; then
    echo "FAIL $name: the purged file does not pass ccm check: $(head -3 "$work/$id.check")"; fail=1
  fi
  cp -p "$work/$id.jsonl" "$work/$id.once"
  "$work/ccm" purge --backup none --no-tokens "$@" "$work/$id.jsonl" >/dev/null
  if ! cmp -s "$work/$id.once" "$work/$id.jsonl"; then
    echo "FAIL $name: a second purge changed the file"; fail=1
  fi
  if ! python3 - "$work/$id.before" "$work/$id.after" "$work/ccm" >"$work/$id.keep" 2>&1 <<'EOF'
import json, re, subprocess, sys
b, a, ccm = sys.argv[1], sys.argv[2], sys.argv[3]
rb, ra = (json.load(open(d + "/report.json"))["stats"] for d in (b, a))
qb, qa = (json.load(open(d + "/request.json")) for d in (b, a))
bad = []
if ra["messages"] < rb["messages"] or ra["tool_pairs"] < rb["tool_pairs"]:
    bad.append("messages %d -> %d, tool pairs %d -> %d" % (rb["messages"], ra["messages"], rb["tool_pairs"], ra["tool_pairs"]))
def blocks(q, role):
    for m in q["messages"]:
        if m["role"] == role:
            c = m["content"]
            yield from ([{"type": "text", "text": c}] if isinstance(c, str) else c)
body = json.dumps(qa, ensure_ascii=False)
for blk in blocks(qb, "user"):
    t = blk.get("text", "")
    if blk.get("type") == "text" and t.strip() and not t.startswith("<") and json.dumps(t, ensure_ascii=False)[1:-1] not in body:
        bad.append("prompt lost: %.60r" % t)
after = {blk["tool_use_id"]: blk.get("content") for blk in blocks(qa, "user") if blk.get("type") == "tool_result"}
def values(v):
    yield v
    if isinstance(v, list):
        for x in v: yield from values(x)
    elif isinstance(v, dict):
        for x in v.values(): yield from values(x)
for blk in blocks(qb, "user"):
    if blk.get("type") != "tool_result":
        continue
    tid, want = blk["tool_use_id"], blk.get("content")
    got = after.get(tid, "missing")
    if got == want:
        continue
    if isinstance(want, str) and want.startswith("[Tool call interrupted"):
        continue  # the client's own stand-in for a call the file never answered, not an output
    keys = re.findall(r"key: (sha256:[0-9a-f]{64})", json.dumps(got))
    if not keys:
        bad.append("tool output %s changed without a stub: %.80r" % (tid, got))
        continue
    originals = list(values(want))
    for k in keys:
        r = subprocess.run([ccm, "cache", "get", "--raw", k], capture_output=True)
        if r.returncode != 0 or json.loads(r.stdout) not in originals:
            bad.append("stub %s of %s does not give back the original" % (k[:19], tid))
for x in bad:
    print(x)
sys.exit(1 if bad else 0)
EOF
  then
    echo "FAIL $name: $(head -3 "$work/$id.keep")"; fail=1
  fi
  ratio=$(python3 -c "print(f'{$after/$before:.3f}')")
  mratio=$(python3 -c "print(f'{$mafter/$mbefore:.3f}')")
  ratios+=("$ratio")
  mratios+=("$mratio")
  printf '%-30s %9d %9d %6s   %9d %9d %6s\n' "$name" "$before" "$after" "$ratio" "$mbefore" "$mafter" "$mratio"
done < <(find "$corpus" -name '*.jsonl' | sort)

for s in ${skipped[@]+"${skipped[@]}"}; do echo "skipped (does not resume before the purge): $s"; done
python3 -c "
import statistics, sys
n = (len(sys.argv) - 1) // 2
r = [float(x) for x in sys.argv[1:1 + n]]
m = [float(x) for x in sys.argv[1 + n:]]
print(f'{n} sessions; median after/before: request {statistics.median(r):.3f}, messages {statistics.median(m):.3f}')
" "${ratios[@]}" "${mratios[@]}"
exit $fail
