#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against a mock API) that
# ccm's PostToolUse capture and its tool memory work end to end:
#   session 1: a 200 KB Bash output and a 100 KB Read reach the model as the
#     preview and stub (the client accepts the replacement: no hook output
#     rejected, "replaced tool output" in its debug log), and `ccm cache get`
#     gives back the exact bytes (seq's output; the file); Glob and Grep
#     outputs are replaced in their own shapes; a failing command becomes a
#     lesson; a subagent's large output passes through (subagents get full
#     content); an MCP tool's 80 KB result (a local stdio MCP server) is
#     captured the same way, and its failing call becomes one lesson;
#   session 2 (same project, a new session): the lesson reaches the model's
#     request before Bash runs again.
#
#   scripts/realclient-capture.sh          KEEP=1 keeps the work folder
#
# Needs python3 and go; installs the pinned client once (no network later).
# If the client truly cannot be installed, prints SKIP and exits 0. Any
# failed check exits 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/realclient.sh" realclient-capture

# The settings are the ones `ccm install` writes (into a staging dir).
mkdir -p "$work/stage" # a config dir Claude Code has made: ccm refuses one that does not exist
CLAUDE_CONFIG_DIR=$work/stage CCM_HOME=$work/stage/ccm "$ccm" install --ccm "$ccm" >"$work/install.txt"
settings=$work/stage/settings.json

out=$work/s
mkdir -p "$out/project"
# 100 KB of text: more than Read's token cap lets through, so the client
# cuts it and ccm stores the whole file.
python3 - "$out/project/big.txt" <<'EOF'
import sys
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
lines, size, i = [], 0, 0
while size < 100_000:
    l = "%05d %s" % (i, " ".join(words[(i + j) % 12] for j in range(8)))
    lines.append(l); size += len(l) + 1; i += 1
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF
seq 1 36000 >"$work/seq.txt"   # 204,894 bytes

# A local MCP server (stdio, newline-delimited JSON-RPC): "big" returns
# 3000 lines of text, "fail" an error result.
cat >"$work/mcp-server.py" <<'PYEOF'
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    if not line.strip():
        continue
    m = json.loads(line)
    mid, meth = m.get("id"), m.get("method")
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"),
              "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "big", "description": "returns n lines", "inputSchema": {"type": "object", "properties": {"n": {"type": "number"}}}},
            {"name": "fail", "description": "always fails", "inputSchema": {"type": "object", "properties": {"host": {"type": "string"}}}}]}})
    elif meth == "tools/call":
        if m["params"]["name"] == "big":
            n = int(m["params"].get("arguments", {}).get("n", 3000))
            text = "\n".join("row %d of the MCP result" % i for i in range(1, n + 1))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}], "isError": False}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "Connection refused: host unreachable"}], "isError": True}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
PYEOF
printf '{"mcpServers":{"t":{"command":"python3","args":["%s"]}}}\n' "$work/mcp-server.py" >"$work/mcp.json"
python3 -c 'import sys; open(sys.argv[1], "w").write("\n".join("row %d of the MCP result" % i for i in range(1, 3001)))' "$work/mcp-big.txt"

cat >"$work/script1.json" <<'EOF'
[
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "seq 1 36000", "description": "count"}}]},
  {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "{{PROJECT}}/big.txt"}}]},
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "for i in $(seq 1 150); do touch {{PROJECT}}/a_file_with_a_rather_long_name_$i.txt; done", "description": "files"}}]},
  {"content": [{"type": "tool_use", "name": "Glob", "input": {"pattern": "**/*.txt"}}]},
  {"content": [{"type": "tool_use", "name": "Grep", "input": {"pattern": "alpha", "path": "{{PROJECT}}", "output_mode": "content"}}]},
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls /nonexistent-ccm-lesson-dir", "description": "fail"}}]},
  {"content": [{"type": "tool_use", "name": "mcp__t__big", "input": {"n": 3000}}]},
  {"content": [{"type": "tool_use", "name": "mcp__t__fail", "input": {"host": "10.0.0.1"}}]},
  {"content": [{"type": "tool_use", "name": "Agent", "input": {"description": "Count", "prompt": "Count to 3000.", "subagent_type": "general-purpose", "run_in_background": false}}]},
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "seq 1 3000", "description": "subagent count"}}]},
  {"text": "Subagent counted."},
  {"content": [{"type": "text", "text": "Done."}]}
]
EOF
cat >"$work/script2.json" <<'EOF'
[
  {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo second session", "description": "again"}}]},
  {"content": [{"type": "text", "text": "Done."}]}
]
EOF

run_session() { # name script
  set +e
  $session --settings "$settings" --script "$2" --out "$out" \
    --allowed-tools "Bash Read Glob Grep Agent Task mcp__t__big mcp__t__fail" --timeout 150 \
    -- --mcp-config "$work/mcp.json" >"$work/$1.txt" 2>&1
  local status=$?
  set -e
  cat "$work/$1.txt"
  if [ "$status" -eq 2 ]; then
    echo "realclient-capture: FAIL: the client was not driven in $1"
    exit 1
  fi
  # The harness reuses the folder: keep this session's evidence apart.
  mkdir -p "$work/$1"
  cp -r "$out/requests" "$out/report.json" "$out/debug.log" "$work/$1/"
  rm -rf "$out/requests"
}
run_session session1 "$work/script1.json"
run_session session2 "$work/script2.json"

python3 - "$work" "$ccm" <<'EOF'
import glob, json, os, re, subprocess, sys
work, ccm = sys.argv[1], sys.argv[2]
cfg = os.path.join(work, "s", "config")
env = dict(os.environ, CLAUDE_CONFIG_DIR=cfg)
env.pop("CCM_HOME", None); env.pop("CCM_CACHE_DIR", None)
fails = []
def check(ok, what):
    print("  %s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        fails.append(what)

def results(sess):
    """tool_result texts of the last main request of a session."""
    reqs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(work, sess, "requests", "*.json")))]
    out = []
    for r in reqs:
        for m in (r.get("body") or {}).get("messages", []):
            c = m.get("content")
            for b in ([] if isinstance(c, str) else c or []):
                if b.get("type") == "tool_result":
                    t = b.get("content")
                    out.append(t if isinstance(t, str) else "\n".join(x.get("text", "") for x in t if isinstance(x, dict)))
                elif b.get("type") == "text":
                    out.append(b.get("text", ""))
    return out

for sess in ("session1", "session2"):
    rep = json.load(open(os.path.join(work, sess, "report.json")))
    check(rep["claude_rc"] == 0, "%s: client exited 0 (rc=%s)" % (sess, rep["claude_rc"]))
    check(not rep["hook_errors"], "%s: no hook output rejected, no hook error: %s" % (sess, rep["hook_errors"][:3] or "none"))
    bad = {ev: st for ev, st in rep["hook_runs"].items() for s in st if s != "exit 0"}
    check(not bad, "%s: every hook run exited 0 %s" % (sess, bad or ""))
    dbg = open(os.path.join(work, sess, "debug.log"), errors="replace").read()
    check("does not match" not in dbg and "schema_invalid" not in dbg, "%s: no updatedToolOutput rejected (debug log)" % sess)

dbg = open(os.path.join(work, "session1", "debug.log"), errors="replace").read()
check(dbg.count("replaced tool output") >= 5, "session1: the client replaced 5+ tool outputs (%d)" % dbg.count("replaced tool output"))
seen = results("session1")

def captured(tool, source):
    for t in seen:
        if ("[ccm captured this %s" % tool) in t and ("source: %s" % source) in t:
            m = re.search(r"key: (sha256:[0-9a-f]{64})", t)
            return t, m.group(1) if m else None
    return None, None

def cache_get(key, *args):
    return subprocess.run([ccm, "cache", "get", key, *args], env=env, capture_output=True).stdout

text, key = captured("Bash", "Bash seq 1 36000")
check(key is not None, "200 KB Bash output reached the model as preview and stub")
if key:
    check("[CCM_CACHED]" in text and "\n36000" in text and "\n1\n2\n" in text, "  ... with the head, the tail and the stub")
    check(len(text) < 4000, "  ... and the model read %d characters, not 204,894" % len(text))
    check(cache_get(key) == open(os.path.join(work, "seq.txt"), "rb").read(), "ccm cache get gives back the 204,894 bytes exactly")
    check(cache_get(key, "--lines", "35999:36000") == b"35999\n36000\n", "ccm cache get --lines 35999:36000")
text, key = captured("Read", "Read " + os.path.join(os.path.realpath(os.path.join(work, "s")), "project", "big.txt"))
check(key is not None, "100 KB Read reached the model as preview and stub")
if key:
    check(cache_get(key) == open(os.path.join(work, "s", "project", "big.txt"), "rb").read(), "ccm cache get gives back the file's bytes exactly")
for tool, src in (("Glob", "Glob **/*.txt"), ("Grep", "Grep alpha")):
    text, key = captured(tool, src)
    check(key is not None, "%s result replaced in its own shape and reached the model" % tool)
    if key:
        check(len(cache_get(key)) > 2000, "  ... ccm cache get gives back its %d bytes" % len(cache_get(key)))

text, key = captured("mcp__t__big", "mcp__t__big")
check(key is not None, "the MCP tool's 80 KB result reached the model as preview and stub (one text block)")
if key:
    check(cache_get(key) == open(os.path.join(work, "mcp-big.txt"), "rb").read(), "  ... ccm cache get gives back its bytes exactly")

mem = subprocess.run([ccm, "memory", "list", "--json"], env=env, capture_output=True, text=True).stdout
lessons = json.loads(mem) if mem.strip() else []  # one array
check(any(e["tool"] == "Bash" and "nonexistent-ccm-lesson-dir" in e["input"] and "No such file" in e["error"] for e in lessons),
      "the failing command became a lesson: %s" % [e["input"] for e in lessons])
mcp = [e for e in lessons if e["tool"] == "mcp__t__fail"]
check(len(mcp) == 1 and "Connection refused" in mcp[0]["error"] and mcp[0]["input"] == "host=10.0.0.1",
      "the failing MCP call became one lesson (PostToolUseFailure; the Stop scan found the same one): %s" % mcp)
log = open(os.path.join(cfg, "ccm", "logs", "hooks.log")).read() if os.path.exists(os.path.join(cfg, "ccm", "logs", "hooks.log")) else ""
check("capture: Bash passed through: subagent call" in log, "the subagent's 13,893-byte Bash output passed through uncaptured")
check(not any("source: Bash seq 1 3000\n" in t for t in seen), "  ... no stub for it reached any request")

seen2 = results("session2")
check(any("Tool memory: earlier calls of Bash" in t and "nonexistent-ccm-lesson-dir" in t for t in seen2),
      "session 2: the lesson reached the model's request before Bash ran again")
stats = subprocess.run([ccm, "capture", "stats", "--json"], env=env, capture_output=True, text=True).stdout
total = json.loads(stats)["total"] if stats.strip() else {}
check(total.get("captures", 0) >= 5, "ccm capture stats counts the captures: %s" % total)
print("realclient-capture: %s" % ("FAIL: %d check(s)" % len(fails) if fails else "PASS"))
sys.exit(1 if fails else 0)
EOF
