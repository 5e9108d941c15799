#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against the mock API of
# the project's harness, scripts/realclient) that ccm's hooks work end to end:
#   - the settings ccm install writes are accepted, and every hook run exits 0;
#   - the client accepts every hook output (no validation error, no rejected
#     event name);
#   - the context refresh text reaches the model (a rule marker inside the
#     "UserPromptSubmit hook additional context" of a request), and so do
#     the SessionStart effort text and the PreToolUse note for an opus
#     subagent;
#   - SessionEnd removes the session's state.
#
#   scripts/realclient-hooks.sh
#
# Needs go, python3 (to read the reports) and npm; installs the pinned client
# from npm into ~/.cache/ccm-realclient once (later runs need no network). If
# the client truly cannot be installed, prints SKIP and exits 0. Any failed
# check exits 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/realclient.sh" realclient-hooks

# The settings file is the one `ccm install` writes (into a staging config
# dir; the harness then places it as the session's user settings).
mkdir -p "$work/stage" # a config dir Claude Code has made: ccm refuses one that does not exist
CLAUDE_CONFIG_DIR=$work/stage CCM_HOME=$work/stage/ccm "$ccm" install --ccm "$ccm" >"$work/install.txt"
settings=$work/stage/settings.json

# The session's config dir is out/config (the harness keeps what is there).
# Rules live outside it, so the client does not load them itself: the
# marker can only reach the model through the hook.
out=$work/session
mkdir -p "$out/config/ccm" "$work/rules"
cat >"$work/rules/ccm-check.md" <<'EOF'
---
priority: 1
---
CCM-REFRESH-MARKER: never push to the main branch without a green build.
EOF
cat >"$out/config/ccm/config.env" <<EOF
CONTEXT_REFRESH_RULES_DIR=$work/rules
CONTEXT_REFRESH_INTERVAL=1
CONTEXT_REFRESH_CLAUDE_MD_INTERVAL=0
DEFAULT_EFFORT=low
EOF
# The mock model runs a Bash command, then starts an opus subagent (whose
# own requests get plain text replies), then ends the turn.
cat >"$work/script.json" <<'EOF'
[
  {"content": [{"type": "text", "text": "Running a command."},
               {"type": "tool_use", "name": "Bash", "input": {"command": "echo hello", "description": "Say hello"}}]},
  {"content": [{"type": "tool_use", "name": "Agent", "input": {"description": "Look around", "prompt": "Say hi.", "subagent_type": "general-purpose", "model": "opus"}}]},
  {"text": "Subagent says hi."},
  {"content": [{"type": "text", "text": "Done."}]}
]
EOF

set +e
"$rc" session --settings "$settings" --script "$work/script.json" --out "$out" \
  --allowed-tools "Bash Read Agent Task" --marker 'CCM-REFRESH-MARKER' --timeout 120 >"$work/summary.txt" 2>&1
status=$?
set -e
cat "$work/summary.txt"
if [ "$status" -eq 2 ]; then
  echo "realclient-hooks: FAIL: the client was not driven (see above)"
  exit 1
fi

python3 - "$out" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
rep = json.load(open(os.path.join(out, "report.json")))
fails = []
def check(ok, what):
    print("  %s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        fails.append(what)

check(rep["claude_rc"] == 0, "client exited 0 (rc=%s)" % rep["claude_rc"])
check(not rep["hook_errors"], "no hook output rejected, no hook error: %s" % (rep["hook_errors"][:3] or "none"))
runs = rep["hook_runs"]
for ev in ("SessionStart", "UserPromptSubmit", "PreToolUse", "SessionEnd"):
    check(ev in runs, "%s hook ran" % ev)
bad = {ev: st for ev, st in runs.items() for s in st if s != "exit 0"}
check(not bad, "every hook run exited 0 %s" % (bad or ""))
acc = rep["context_accepted"]
for ev in ("SessionStart", "UserPromptSubmit", "PreToolUse"):
    check(acc.get(ev, 0) >= 1, "client accepted %s additionalContext (%d)" % (ev, acc.get(ev, 0)))

# What the model saw: the texts of every main request.
def texts(body):
    for m in body.get("messages", []):
        c = m.get("content")
        for b in ([{"type": "text", "text": c}] if isinstance(c, str) else c or []):
            if b.get("type") == "text":
                yield b.get("text", "")
            elif b.get("type") == "tool_result":
                rc = b.get("content")
                yield rc if isinstance(rc, str) else json.dumps(rc)
seen = []
for p in sorted(glob.glob(os.path.join(out, "requests", "*.json"))):
    r = json.load(open(p))
    if r.get("kind") == "main":
        seen.extend(texts(r.get("body") or {}))
def delivered(*needles):
    return any(all(n in t for n in needles) for t in seen)
check(delivered("UserPromptSubmit hook additional context", "Re-injecting active rules", "CCM-REFRESH-MARKER"),
      "refresh rules reached the model as UserPromptSubmit additional context")
check(delivered("SessionStart", "hook additional context", "Default effort: low"),
      "effort policy reached the model as SessionStart additional context")
check(delivered("PreToolUse", "hook additional context", "about to start with model=opus"),
      "opus subagent note reached the model as PreToolUse additional context")
state = glob.glob(os.path.join(out, "config", "ccm", "state", "*.json"))
check(not state, "SessionEnd removed the session state %s" % (state or ""))
log = os.path.join(out, "config", "ccm", "logs", "hooks.log")
print("  hooks.log:", (open(log).read().strip().replace("\n", "\n             ") if os.path.exists(log) else "(none)"))
sys.exit(1 if fails else 0)
EOF
# The slash commands ccm install wrote: /pin-last must put its directive in
# front of the model, and /ccm must expand (its dynamic `ccm cache stats`
# line must not fail the command when there is no store yet).
slash() { # NAME: runs a session whose prompt is /NAME with ccm's commands installed
  local o=$work/slash-$1
  mkdir -p "$o/config/commands"
  cp "$work"/stage/commands/*.md "$o/config/commands/"
  echo '[{"text": "Noted."}]' >"$work/slash-script.json"
  "$rc" session --settings "$settings" --script "$work/slash-script.json" --out "$o" \
    --prompt "/$1" --marker "$2" --timeout 120 >"$o.txt" 2>&1 || true
  python3 - "$o" "$2" "/$1" <<'PY'
import json, sys
out, marker, name = sys.argv[1:]
rep = json.load(open(out + "/report.json"))
ok = rep["main_requests"] > 0 and ("marker:" + marker) in rep["delivered"] and not rep["hook_errors"]
print("  %s %s reached the model (%s)" % ("ok  " if ok else "FAIL", name, marker))
if not ok:
    print("      result: %r" % ((rep.get("result") or {}).get("result") or "")[:300])
sys.exit(0 if ok else 1)
PY
}
slash pin-last 'ccm:pin last level=soft'
slash ccm 'Current cache statistics'
echo "realclient-hooks: PASS"
