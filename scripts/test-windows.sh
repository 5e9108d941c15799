#!/usr/bin/env bash
# Windows checks, under Wine (Debian's, installed on first use by
# scripts/lib/wine.sh, as root or with sudo; cached in ~/.cache/ccm-wine):
#
# 1. go test of the packages whose Windows code paths matter, built for
#    windows/amd64 and run under Wine: fsutil (LockFileEx across processes,
#    replacing a file another process holds open, with and without
#    share-delete, the share-mode writer probe, durable writes), transcript
#    (drive-letter project folder names, records) and transcript/rewrite.
# 2. ccm.exe end to end on a config dir whose transcript names a
#    C:\Users\... working directory in some records and a /home/... one in
#    others, plus a CRLF copy: check, analyze, audit, report, sessions, du,
#    purge, restore, archive, unarchive, clean, prune, maintain,
#    install/uninstall and a hook. The same steps run with the Linux
#    binary on a twin config dir; purged and restored transcripts must be
#    byte-identical between the two, and every command's exit status the
#    same.
#
# Other packages' tests do not run under Wine: testing's t.TempDir removes
# its tree with a call Wine 8 lacks (FileDispositionInformationEx), so
# every test with a temp dir would fail at its clean-up, and many assert
# Unix modes, symlinks or /proc. Without Wine (no root or sudo to install
# it) the script says so and exits 0, except under CI, where it fails.
# SKIP_GO_TEST=1 runs only the end-to-end part; KEEP=1 keeps its folder.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/lib/wine.sh
if ! wine_setup; then
  if [ -n "${CI:-}" ]; then
    echo "test-windows: FAIL: Wine could not be set up" >&2
    exit 1
  fi
  echo "test-windows: SKIP: Wine could not be set up (needs root or sudo to install Debian's wine64)"
  exit 0
fi
wine=$(wine_bin)

start=$(date +%s)
[ -n "${SKIP_GO_TEST:-}" ] || GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -count=1 -exec "$repo/scripts/wine-exec.sh" ./internal/fsutil ./transcript ./transcript/rewrite

work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-windows.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -o "$work/ccm.exe" ./cmd/ccm
CGO_ENABLED=0 go build -o "$work/ccm" ./cmd/ccm

# winpath turns a Linux path into the Z: path Wine gives it.
winpath() { printf 'Z:%s' "${1//\//\\}"; }

sid=a95edcd2-17dc-44ec-a2bb-2f23a4bb0bac
proj=C--Users-me-proj
# The sample session, its first 60 records written in C:\Users\me\proj,
# the rest in /home/dev/projects/demo (both kept as written).
sed '1,60s#"cwd":"/home/dev/projects/demo"#"cwd":"C:\\\\Users\\\\me\\\\proj"#' testdata/sample-session.jsonl >"$work/session.jsonl"
grep -q '"cwd":"C:\\\\Users\\\\me\\\\proj"' "$work/session.jsonl"
sed 's/$/\r/' "$work/session.jsonl" >"$work/crlf.jsonl"

# setup DIR makes a config dir with the two sessions, 40 days old.
setup() {
  local d=$1/claude/projects/$proj
  mkdir -p "$d"
  cp "$work/session.jsonl" "$d/$sid.jsonl"
  cp "$work/crlf.jsonl" "$d/0b6c1c2e-1111-2222-3333-444455556666.jsonl"
  touch -d '40 days ago' "$d"/*.jsonl
}
setup "$work/lin"
setup "$work/win"

# step NAME ARGS...: runs ccm ARGS on both, compares exit statuses, keeps
# each side's output in $work/{lin,win}/NAME.out. {T} in ARGS is the main
# transcript, {C} the CRLF one, {D} a folder for the side's own files.
fails=0
steps=0
step() {
  steps=$((steps + 1))
  local name=$1
  shift
  local side rc_lin rc_win
  for side in lin win; do
    local base=$work/$side
    local t=$base/claude/projects/$proj/$sid.jsonl
    local c=$base/claude/projects/$proj/0b6c1c2e-1111-2222-3333-444455556666.jsonl
    local d=$base/files
    local -a args=()
    local a
    for a in "$@"; do
      if [ $side = win ]; then
        a=${a//\{T\}/$(winpath "$t")}
        a=${a//\{C\}/$(winpath "$c")}
        a=${a//\{D\}/$(winpath "$d")}
      else
        a=${a//\{T\}/$t}
        a=${a//\{C\}/$c}
        a=${a//\{D\}/$d}
      fi
      args+=("$a")
    done
    mkdir -p "$d"
    set +e
    if [ $side = win ]; then
      CLAUDE_CONFIG_DIR=$(winpath "$base/claude") CCM_HOME=$(winpath "$base/home") HOME=$(winpath "$base") \
        "$wine" "$work/ccm.exe" "${args[@]}" <"${STDIN:-/dev/null}" >"$base/$name.out" 2>&1
      rc_win=$?
    else
      CLAUDE_CONFIG_DIR=$base/claude CCM_HOME=$base/home HOME=$base \
        "$work/ccm" "${args[@]}" <"${STDIN:-/dev/null}" >"$base/$name.out" 2>&1
      rc_lin=$?
    fi
    set -e
  done
  if [ "$rc_lin" != "$rc_win" ]; then
    echo "test-windows: $name: exit $rc_win on Windows, $rc_lin on Linux"
    sed 's/^/  windows: /' "$work/win/$name.out" | head -5
    fails=$((fails + 1))
  fi
}

# same FILE...: fails unless the two sides' FILE (under claude/projects/$proj)
# are byte-identical.
same() {
  local f
  for f in "$@"; do
    if ! cmp -s "$work/lin/claude/projects/$proj/$f" "$work/win/claude/projects/$proj/$f"; then
      echo "test-windows: $f differs between Windows and Linux"
      fails=$((fails + 1))
    fi
  done
}

step check check {T} {C}
step analyze analyze {T}
step audit audit {T}
step report report {T} -o {D}/report.html
step sessions sessions
step du du
step purge purge {T}
step purge-crlf purge {C}
same "$sid.jsonl" 0b6c1c2e-1111-2222-3333-444455556666.jsonl
step check-after check {T} {C}
grep -q '"cwd":"C:\\\\Users\\\\me\\\\proj"' "$work/win/claude/projects/$proj/$sid.jsonl"
grep -q '"cwd":"/home/dev/projects/demo"' "$work/win/claude/projects/$proj/$sid.jsonl"
step restore restore {T}
step restore-crlf restore --backup {C}
same "$sid.jsonl" 0b6c1c2e-1111-2222-3333-444455556666.jsonl
cmp -s "$work/crlf.jsonl" "$work/win/claude/projects/$proj/0b6c1c2e-1111-2222-3333-444455556666.jsonl" ||
  { echo "test-windows: restore --backup of the CRLF session is not the original"; fails=$((fails + 1)); }
step clean clean --temp --keep-backups 1
step archive archive --older-than 30d
for side in lin win; do
  if ls "$work/$side/claude/projects/$proj/$sid.jsonl" >/dev/null 2>&1; then
    echo "test-windows: $side: archive left the session in place"
    fails=$((fails + 1))
  fi
done
step sessions-archived sessions --archived
step unarchive unarchive --project "$proj"
same "$sid.jsonl"
step prune prune --gc-unreferenced
step maintain maintain
step install install
step install-again install
grep -q 'ccm.exe hook ' "$work/win/claude/settings.json"
if grep -q 'ccm\.exe' "$work/win/claude/settings.json" && grep -q '\\\\' "$work/win/claude/settings.json"; then
  echo "test-windows: settings.json names ccm.exe with backslashes (Git Bash needs C:/...)"
  fails=$((fails + 1))
fi
echo '{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"C:\\Users\\me\\proj\\a.go"}}' >"$work/hook.json"
STDIN=$work/hook.json step hook hook PreToolUse
if [ -s "$work/win/hook.out" ]; then
  echo "test-windows: the hook printed something:"
  head -3 "$work/win/hook.out"
  fails=$((fails + 1))
fi
step uninstall uninstall

echo "test-windows: Wine tests and $steps commands compared in $(($(date +%s) - start)) s"
if [ "$fails" -gt 0 ]; then
  echo "test-windows: $fails failed"
  exit 1
fi
echo "test-windows: 1 passed, 0 failed"
