#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against a mock API) that
# `ccm install --mcp` registers ccm's MCP server where the client reads
# user-scope servers, and that the model gets its tools' results: the mock
# model calls search_sessions (a phrase of a past session's prompt, and one
# that only the stored content of a purge stub holds), read_output (two
# lines of that stored content by key) and read_session (a page of the past
# session); each result must reach the model in the next captured request.
# The hooks ccm install registered run as before: every run exits 0, no
# hook output is rejected.
#
#   scripts/realclient-mcp.sh          KEEP=1 keeps the work folder
#
# Needs python3 and go; installs the pinned client once (no network later).
# If the client truly cannot be installed, prints SKIP and exits 0. Any
# failed check exits 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/realclient.sh" realclient-mcp

mkdir -p "$work/stage" # a config dir Claude Code has made: ccm refuses one that does not exist
CLAUDE_CONFIG_DIR=$work/stage CCM_HOME=$work/stage/ccm "$ccm" install --ccm "$ccm" >"$work/install.txt"
settings=$work/stage/settings.json

# A past session of another project, in the sandbox's config dir (the
# harness keeps what is there and writes only .claude.json): a prompt, and
# a Bash output that a purge moved to the store, leaving a stub.
out=$work/s
cfg=$out/config
mkdir -p "$cfg"
python3 -c 'import sys; sys.stdout.write("".join("line %d of the stored build log\n" % i if i != 3 else "line 3: ZEBRA-CERULEAN-42 failed in parser.go\n" for i in range(1, 51)))' >"$work/stored.txt"
key=$(CLAUDE_CONFIG_DIR=$cfg "$ccm" cache put --tool Bash "$work/stored.txt")
sid=5eed5eed-0000-4000-8000-000000000042
python3 - "$cfg/projects/-home-u-past-project/$sid.jsonl" "$sid" "$key" "$(wc -c <"$work/stored.txt")" <<'EOF'
import json, os, sys
path, sid, key, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.makedirs(os.path.dirname(path), exist_ok=True)
stub = ("[CCM_CACHED]\nkey: %s\nsource: Bash make build\nbytes: %d\nlines: 50\npinned: none\nget: ccm cache get %s\n[/CCM_CACHED]" % (key, n, key))
def rec(i, typ, content):
    return {"type": typ, "uuid": "u%d" % i, "parentUuid": ("u%d" % (i - 1)) if i > 1 else None, "sessionId": sid,
            "cwd": "/home/u/past-project", "timestamp": "2026-01-0%dT10:00:00.000Z" % i,
            "message": {"role": typ, "content": content}}
lines = [
    rec(1, "user", "the quasar tangerine bug is back in the parser, please look"),
    rec(2, "assistant", [{"type": "tool_use", "id": "toolu_past1", "name": "Bash", "input": {"command": "make build"}}]),
    rec(3, "user", [{"type": "tool_result", "tool_use_id": "toolu_past1", "content": stub}]),
    rec(4, "assistant", [{"type": "text", "text": "The build fails in parser.go; fixed the quasar tangerine bug."}]),
]
open(path, "w").write("".join(json.dumps(l) + "\n" for l in lines))
EOF
touch -d '3 days ago' "$cfg/projects/-home-u-past-project/$sid.jsonl"

cat >"$work/script.json" <<EOF
[
  {"content": [{"type": "tool_use", "name": "mcp__ccm__search_sessions", "input": {"query": "quasar tangerine", "in": "prompts"}}]},
  {"content": [{"type": "tool_use", "name": "mcp__ccm__search_sessions", "input": {"query": "ZEBRA-CERULEAN-42"}}]},
  {"content": [{"type": "tool_use", "name": "mcp__ccm__read_output", "input": {"key": "$key", "lines": "3:4"}}]},
  {"content": [{"type": "tool_use", "name": "mcp__ccm__read_session", "input": {"session": "${sid:0:8}", "line": 1, "count": 4}}]},
  {"content": [{"type": "text", "text": "Found the past session."}]}
]
EOF

set +e
$session --settings "$settings" --script "$work/script.json" --out "$out" --timeout 150 \
  --prompt "When did we fix the quasar tangerine bug?" \
  --allowed-tools "Bash Read mcp__ccm__search_sessions mcp__ccm__read_output mcp__ccm__read_session" \
  --prepare "'$ccm' install --mcp --ccm '$ccm' >'$work/install-mcp.txt' 2>&1 && cp \"\$CLAUDE_CONFIG_DIR/.claude.json\" '$work/claude.json.installed'" \
  >"$work/session.txt" 2>&1
status=$?
set -e
cat "$work/session.txt"
if [ "$status" -eq 2 ]; then
  echo "realclient-mcp: FAIL: the client was not driven"
  exit 1
fi

python3 - "$work" "$ccm" "$sid" "$key" <<'EOF'
import glob, json, os, subprocess, sys
work, ccm, sid, key = sys.argv[1:5]
out = os.path.join(work, "s")
cfg = os.path.join(out, "config")
fails = []
def check(ok, what):
    print("  %s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        fails.append(what)

rep = json.load(open(os.path.join(out, "report.json")))
check(rep["claude_rc"] == 0, "client exited 0 (rc=%s)" % rep["claude_rc"])
check(not rep["hook_errors"], "no hook output rejected, no hook error: %s" % (rep["hook_errors"][:3] or "none"))
bad = {ev: st for ev, st in rep["hook_runs"].items() for s in st if s != "exit 0"}
check(not bad, "every hook run exited 0 %s" % (bad or ""))
check(rep["hook_runs"].get("PostToolUse") and rep["hook_runs"].get("PreToolUse"), "the hooks ran around the MCP calls: %s" % sorted(rep["hook_runs"]))

installed = json.load(open(os.path.join(work, "claude.json.installed")))
srv = installed.get("mcpServers", {}).get("ccm", {})
check(srv.get("command") == ccm and srv.get("args") == ["mcp"], "ccm install --mcp registered the server in the client's .claude.json: %s" % srv)
check(installed.get("hasCompletedOnboarding") is True, "  ... keeping the client's own keys")

# The tool results, as the model received them, in request order.
results = []
for p in sorted(glob.glob(os.path.join(out, "requests", "*.json"))):
    body = json.load(open(p)).get("body") or {}
    for m in body.get("messages", []):
        c = m.get("content")
        for b in ([] if isinstance(c, str) else c or []):
            if b.get("type") == "tool_result":
                t = b.get("content")
                t = t if isinstance(t, str) else "\n".join(x.get("text", "") for x in t if isinstance(x, dict))
                if t not in results:
                    results.append(t)
print("  (%d distinct tool results reached the model)" % len(results))
def find(pred):
    return next((t for t in results if pred(t)), None)
s1 = find(lambda t: '"hits"' in t and "quasar tangerine" in t)
check(s1 is not None and sid in s1 and '"line": 1' in s1 and '"kind": "prompt"' in s1,
      "search_sessions found the past prompt (session, line 1) and the result reached the model")
s2 = find(lambda t: '"hits"' in t and "ZEBRA-CERULEAN-42" in t)
check(s2 is not None and sid in s2 and '"tool output"' in s2 and '"line": 3' in s2,
      "search_sessions found the phrase only the stub's stored content holds (line 3, tool output)")
r = find(lambda t: t.startswith("line 3: ZEBRA"))
check(r == "line 3: ZEBRA-CERULEAN-42 failed in parser.go\nline 4 of the stored build log\n", "read_output gave lines 3-4 of the stored content: %r" % r)
pg = find(lambda t: '"messages"' in t and sid in t)
check(pg is not None and "fixed the quasar tangerine bug" in pg and "make build" in pg, "read_session gave the past session's page")
# The client lists MCP tools among its deferred tools (by name, in the
# first request) when it connected to the server and listed them.
first = open(sorted(glob.glob(os.path.join(out, "requests", "*.json")))[0]).read()
check(all("mcp__ccm__" + n in first for n in ("search_sessions", "read_session", "read_output")),
      "the client connected to the server and named its three tools to the model")

env = dict(os.environ, CLAUDE_CONFIG_DIR=cfg, HOME=os.path.join(out, "home"))
env.pop("CCM_HOME", None); env.pop("CCM_CACHE_DIR", None)
u = subprocess.run([ccm, "uninstall"], env=env, capture_output=True, text=True)
after = json.load(open(os.path.join(cfg, ".claude.json")))
check(u.returncode == 0 and "ccm" not in after.get("mcpServers", {}), "ccm uninstall removed the server: %s" % u.stdout.strip().splitlines()[-1:])
print("realclient-mcp: %s" % ("FAIL: %d check(s)" % len(fails) if fails else "PASS"))
sys.exit(1 if fails else 0)
EOF
