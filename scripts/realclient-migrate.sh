#!/usr/bin/env bash
# Proves with the real Claude Code client (offline, against the mock API of
# the project's harness, scripts/realclient) that a home folder laid out as
# agentihooks installs itself (cmd/ccm/testdata/migrate/agentihooks: its
# `python -m hooks` on seven events, ~/.agentihooks/.env, its tool memory)
# works with ccm after `ccm migrate --yes`:
#   - the migrated settings are accepted and every hook run exits 0, with
#     no hook output rejected;
#   - each event runs one handler, not agentihooks' and ccm's side by side:
#     SessionStart and UserPromptSubmit ran once, and the rule refresh and
#     the effort text reach the model's first request exactly once;
#   - the settings imported into config.env apply (the effort level from
#     ~/.agentihooks/.env);
#   - `ccm migrate --undo` gives the settings file back byte for byte;
# and, for claude-context-manager and claude-agentic-framework as they
# install themselves, that their handlers are gone after the migration,
# ccm's run once per event with every output accepted, and undo is exact.
#
#   scripts/realclient-migrate.sh          KEEP=1 keeps the work folder
#
# Needs go, python3 and npm; installs the pinned client once (no network
# later). If the client truly cannot be installed, prints SKIP and exits 0.
# Any failed check exits 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib/realclient.sh" realclient-migrate

# agentihooks' installation, with a rule to refresh on every prompt.
cp -r "$repo/cmd/ccm/testdata/migrate/agentihooks/home" "$work/home"
mkdir -p "$work/rules"
cat >"$work/rules/ccm-check.md" <<'EOF'
---
priority: 1
---
CCM-REFRESH-MARKER: never push to the main branch without a green build.
EOF
cat >>"$work/home/.agentihooks/.env" <<EOF
CONTEXT_REFRESH_RULES_DIR=$work/rules
EOF
sed -i 's/^CONTEXT_REFRESH_INTERVAL=10$/CONTEXT_REFRESH_INTERVAL=1/' "$work/home/.agentihooks/.env"
cp "$work/home/.claude/settings.json" "$work/settings.orig.json"

(cd "$work" && env -u CCM_HOME -u CCM_CACHE_DIR HOME="$work/home" CLAUDE_CONFIG_DIR="$work/home/.claude" \
  "$ccm" migrate --yes >"$work/migrate.txt")
cat "$work/migrate.txt"

# The session runs in its own config dir (out/config) with the migrated
# settings and the config.env migrate wrote; agentihooks' .env is not
# there, so what applies came through the import.
out=$work/session
mkdir -p "$out/config/ccm"
cp "$work/home/.claude/ccm/config.env" "$out/config/ccm/config.env"
cat >"$work/script.json" <<'EOF'
[
  {"content": [{"type": "text", "text": "Running a command."},
               {"type": "tool_use", "name": "Bash", "input": {"command": "echo hello", "description": "Say hello"}}]},
  {"content": [{"type": "text", "text": "Done."}]}
]
EOF
set +e
$session --settings "$work/home/.claude/settings.json" --script "$work/script.json" --out "$out" \
  --allowed-tools "Bash Read" --marker 'CCM-REFRESH-MARKER' --timeout 120 >"$work/summary.txt" 2>&1
status=$?
set -e
cat "$work/summary.txt"
if [ "$status" -eq 2 ]; then
  echo "realclient-migrate: FAIL: the client was not driven (see above)"
  exit 1
fi

python3 - "$out" "$work" <<'EOF'
import glob, json, os, sys
out, work = sys.argv[1], sys.argv[2]
rep = json.load(open(os.path.join(out, "report.json")))
fails = []
def check(ok, what):
    print("  %s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        fails.append(what)
settings = open(os.path.join(work, "home", ".claude", "settings.json")).read()
check("python -m hooks\"" not in settings, "no agentihooks handler left in the migrated settings")
check(rep["claude_rc"] == 0, "client exited 0 (rc=%s)" % rep["claude_rc"])
check(not rep["hook_errors"], "no hook output rejected, no hook error: %s" % (rep["hook_errors"][:3] or "none"))
runs = rep["hook_runs"]
bad = {ev: st for ev, st in runs.items() for s in st if s != "exit 0"}
check(not bad, "every hook run exited 0 %s" % (bad or ""))
for ev in ("SessionStart", "UserPromptSubmit"):
    n = sum(runs.get(ev, {}).values())
    check(n == 1, "%s ran one handler once (%d runs)" % (ev, n))
def texts(body):
    for m in body.get("messages", []):
        c = m.get("content")
        for b in ([{"type": "text", "text": c}] if isinstance(c, str) else c or []):
            if b.get("type") == "text":
                yield b.get("text", "")
mains = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "requests", "*.json")))]
mains = [r for r in mains if r.get("kind") == "main"]
check(len(mains) >= 1, "the model was called (%d main requests)" % len(mains))
first = "\n".join(texts(mains[0].get("body") or {})) if mains else ""
n = first.count("CCM-REFRESH-MARKER")
check(n == 1, "the rule refresh reached the first request exactly once (%d)" % n)
n = first.count("Default effort: low")
check(n == 1, "the effort text, with agentihooks' DEFAULT_EFFORT=low imported, reached it exactly once (%d)" % n)
sys.exit(1 if fails else 0)
EOF

(cd "$work" && env -u CCM_HOME -u CCM_CACHE_DIR HOME="$work/home" CLAUDE_CONFIG_DIR="$work/home/.claude" \
  "$ccm" migrate --undo >"$work/undo.txt")
if cmp -s "$work/settings.orig.json" "$work/home/.claude/settings.json"; then
  echo "  ok   ccm migrate --undo gave the settings back byte for byte"
else
  echo "  FAIL ccm migrate --undo did not give the settings back"
  exit 1
fi
# The two other earlier tools, as they install themselves: after
# `ccm migrate --yes` their hooks are gone from the settings, ccm's run
# once per event and are accepted (the user's own hook, kept, runs too),
# and `ccm migrate --undo` gives the settings back byte for byte.
for tool in claude-context-manager claude-agentic-framework; do
  home=$work/$tool/home
  mkdir -p "$work/$tool"
  cp -r "$repo/cmd/ccm/testdata/migrate/$tool/home" "$home"
  cp "$home/.claude/settings.json" "$work/$tool/settings.orig.json"
  (cd "$work/$tool" && env -u CCM_HOME -u CCM_CACHE_DIR HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude" \
    "$ccm" migrate --yes >"$work/$tool/migrate.txt")
  out=$work/$tool/session
  mkdir -p "$out/config/ccm" "$out/home/bin"
  printf '#!/bin/sh\nexit 0\n' >"$out/home/bin/my-own-guard.sh"
  chmod +x "$out/home/bin/my-own-guard.sh"
  set +e
  $session --settings "$home/.claude/settings.json" --script "$work/script.json" --out "$out" \
    --allowed-tools "Bash Read" --timeout 120 >"$work/$tool/summary.txt" 2>&1
  status=$?
  set -e
  if [ "$status" -eq 2 ]; then
    cat "$work/$tool/summary.txt"
    echo "realclient-migrate: FAIL: $tool: the client was not driven"
    exit 1
  fi
  python3 - "$out" "$home/.claude/settings.json" "$tool" <<'PY'
import json, os, sys
out, settings, tool = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
rep = json.load(open(os.path.join(out, "report.json")))
fails = []
def check(ok, what):
    print("  %s %s: %s" % ("ok  " if ok else "FAIL", tool, what))
    if not ok:
        fails.append(what)
old = ["context-monitor.py", "intercept-bash.py", "pre_compact_preserve.py", "auto_context_manager.py"]
check(not any(o in settings for o in old), "none of its handlers left in the migrated settings")
check(" hook " in settings, "ccm's hooks registered")
check(rep["claude_rc"] == 0, "client exited 0 (rc=%s)" % rep["claude_rc"])
check(not rep["hook_errors"], "no hook output rejected, no hook error: %s" % (rep["hook_errors"][:3] or "none"))
runs = rep["hook_runs"]
bad = {ev: st for ev, st in runs.items() for s in st if s != "exit 0"}
check(not bad, "every hook run exited 0 %s" % (bad or ""))
n = sum(runs.get("SessionStart", {}).values())
check(n == 1, "SessionStart ran one handler once (%d runs)" % n)
sys.exit(1 if fails else 0)
PY
  (cd "$work/$tool" && env -u CCM_HOME -u CCM_CACHE_DIR HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude" \
    "$ccm" migrate --undo >"$work/$tool/undo.txt")
  if cmp -s "$work/$tool/settings.orig.json" "$home/.claude/settings.json"; then
    echo "  ok   $tool: ccm migrate --undo gave the settings back byte for byte"
  else
    echo "  FAIL $tool: ccm migrate --undo did not give the settings back"
    exit 1
  fi
done
echo "realclient-migrate: OK"
