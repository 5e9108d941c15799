#!/usr/bin/env bash
# Kills `ccm migrate --yes` with kill -9 after a random delay, TRIALS times
# (default 60), on fresh copies of the three fixtures of
# cmd/ccm/testdata/migrate in turn, and finishes each with
# `ccm migrate --undo` or `ccm migrate --yes`, alternately. The state
# after --undo must be the state before, byte for byte and mode for mode;
# after --yes, the state an uninterrupted migration leaves (which --undo
# must then turn back into the state before). A temp file left anywhere
# counts as a difference. The delay is uniform over the first 70 % of the
# time a whole run takes. Prints the counts; exits 1 when any trial
# failed. Then runs the Go test of 50 more (TestMigrateRandomKills,
# CCM_KILL_TRIALS=1).
#
#   scripts/trials-migrate.sh [TRIALS]
#   CCM=/path/to/ccm scripts/trials-migrate.sh   # another binary (e.g. main's), no Go test
#
# Needs python3. The work dir is removed.
set -euo pipefail
trials=${1:-60}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-trials-migrate.XXXXXX")
trap 'rm -rf "$work"' EXIT
ccm=${CCM:-}
if [ -z "$ccm" ]; then
  (cd "$repo" && go build -o "$work/ccm" ./cmd/ccm)
  ccm=$work/ccm
fi
fixtures=(claude-context-manager agentihooks claude-agentic-framework)

# fresh ROOT TOOL: a copy of a fixture (home folder ROOT/home, project ROOT/proj).
fresh() {
  rm -rf "$1"
  cp -r "$repo/cmd/ccm/testdata/migrate/$2" "$1"
  mkdir -p "$1/proj"
}
# mig ROOT ARGS...: ccm migrate in ROOT's project with ROOT's home.
mig() {
  local root=$1; shift
  (cd "$root/proj" && env -u CCM_HOME -u CCM_CACHE_DIR -u CLAUDE_PROJECT_DIR HOME="$root/home" \
    CLAUDE_CONFIG_DIR="$root/home/.claude" "$ccm" migrate "$@")
}
# snap ROOT: one line per file (backups and lock files aside): path, mode,
# sha256 of the content with ROOT written as $ROOT.
snap() {
  python3 - "$1" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
for d, dirs, files in sorted(os.walk(root)):
    dirs.sort()
    for f in sorted(files):
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        if "/ccm/backups/" in "/" + rel or f.endswith(".lock"):
            continue
        st = os.lstat(p)
        data = open(p, "rb").read() if stat.S_ISREG(st.st_mode) else os.readlink(p).encode()
        data = data.replace(root.encode(), b"$ROOT")
        print(rel, oct(st.st_mode), hashlib.sha256(data).hexdigest())
PY
}

declare -A before after span
for t in "${fixtures[@]}"; do
  r=$work/ref-$t
  fresh "$r" "$t"
  before[$t]=$(snap "$r")
  start=$(date +%s%N)
  mig "$r" --yes >/dev/null
  span[$t]=$(( ($(date +%s%N) - start) / 1000 ))
  after[$t]=$(snap "$r")
done

killed=0 finished=0 undo_ok=0 undo_bad=0 redo_ok=0 redo_bad=0
for i in $(seq 1 "$trials"); do
  t=${fixtures[$(( (i - 1) % 3 ))]}
  r=$work/trial
  fresh "$r" "$t"
  delay=$(python3 -c "import random; print('%.6f' % (random.random() * 0.7 * ${span[$t]} / 1e6))")
  mig "$r" --yes >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  # The subshell runs ccm as its child: kill that.
  pkill -9 -P "$pid" ccm 2>/dev/null || true
  if wait "$pid"; then finished=$((finished + 1)); else killed=$((killed + 1)); fi
  if (( i % 2 )); then
    mig "$r" --undo >"$work/out" 2>&1 || grep -q "no migration to undo" "$work/out" || true
    if [ "$(snap "$r")" == "${before[$t]}" ]; then undo_ok=$((undo_ok + 1)); else
      undo_bad=$((undo_bad + 1)); echo "trial $i ($t, ${delay}s): --undo did not give the state before"
      diff <(echo "${before[$t]}") <(snap "$r") | sed 's/^/    /' | head -6 || true; fi
  else
    mig "$r" --yes >"$work/out" 2>&1 || true
    s1=$(snap "$r")
    mig "$r" --undo >/dev/null 2>&1 || true
    if [ "$s1" == "${after[$t]}" ] && [ "$(snap "$r")" == "${before[$t]}" ]; then redo_ok=$((redo_ok + 1)); else
      redo_bad=$((redo_bad + 1)); echo "trial $i ($t, ${delay}s): --yes did not give the migrated state (or --undo after it not the state before)"
      diff <(echo "${after[$t]}") <(echo "$s1") | sed 's/^/    /' | head -6 || true; fi
  fi
done
echo "migrate: $trials kill -9 trials ($killed killed mid-way, $finished finished first)"
echo "  recovered by --undo: $undo_ok state before, $undo_bad not"
echo "  recovered by --yes:  $redo_ok migrated state (and --undo after it the state before), $redo_bad not"
status=0
(( undo_bad + redo_bad == 0 )) || status=1
if [ -z "${CCM:-}" ]; then
  echo "== go test -run TestMigrateRandomKills (50 more)"
  (cd "$repo" && CCM_KILL_TRIALS=1 go test -count=1 -run 'TestMigrateRandomKills' -v ./cmd/ccm | grep -E 'trials|^(ok|FAIL|---)') || status=1
fi
exit $status
