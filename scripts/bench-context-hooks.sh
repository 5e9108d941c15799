#!/usr/bin/env bash
# Speed of the context hooks on a 1 MB and a 1 GB transcript
# (docs/benchmarks.md, "Start-up"): Stop (context monitor and audit),
# PreCompact (preservation block) and SessionStart(compact) (injection), each
# timed with farm-bench as a whole process, big file against small file and
# big file against an empty static Go program started the same way.
#
#   scripts/bench-context-hooks.sh          RUNS=20 by default
#
# Files (generated, deleted on exit): small = `gen -size 1MB -seed 1`
# (1.03 MB, no compaction: the hooks read all of it); big = `gen -size 1GB
# -compactions 1000` (1.0 GB; about 1 MB after its last compact boundary,
# which is what a hook needs). farm-bench gives its commands an empty
# stdin, so every command, the empty program included, is
# `sh -c 'PROGRAM < payload.json'`. Scenarios:
#   stop-first   Stop with no state for the session: the audit reads from
#                the last compact boundary (the first Stop of a session)
#   stop-next    Stop with the state of the previous run: the audit reads
#                only what was appended (nothing), the fill from the end
#   precompact   PreCompact: the block from after the last boundary, git
#                diff --stat of a directory that is not a repository
#   sessionstart SessionStart with source compact: injects the saved block
#                (the saved block is copied back before each run, for the
#                empty program too)
# Stop's payload carries no last_assistant_message, so the monitor does
# not wait for the response to land (with the client it is there already).
set -euo pipefail
runs=${RUNS:-20}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-context.XXXXXX")
trap 'rm -rf "$work"' EXIT
command -v farm-bench >/dev/null || { echo "bench-context-hooks: farm-bench is not installed" >&2; exit 2; }

cd "$repo"
CGO_ENABLED=0 go build -o "$work/ccm" ./cmd/ccm
mkdir -p "$work/empty"
printf 'package main\n\nfunc main() {}\n' >"$work/empty/main.go"
(cd "$work/empty" && printf 'module empty\n\ngo 1.26\n' >go.mod && CGO_ENABLED=0 go build -o "$work/nothing" .)
go run ./scripts/gen -size 1MB -seed 1 -o "$work/small.jsonl" >/dev/null
go run ./scripts/gen -size 1GB -compactions 1000 -o "$work/big.jsonl" >/dev/null
for f in small big; do
  size=$(stat -c %s "$work/$f.jsonl")
  last=$(grep -b '"compact_boundary"' "$work/$f.jsonl" | tail -1 | cut -d: -f1 || true)
  echo "$f: $size bytes, $(( size - ${last:-0} )) after the last compact boundary"
done

export CCM_HOME=$work/home CLAUDE_CONFIG_DIR=$work/claude
mkdir -p "$CCM_HOME" "$CLAUDE_CONFIG_DIR" "$work/cwd"
for f in small big; do
  printf '{"session_id":"%s","hook_event_name":"Stop","transcript_path":"%s","cwd":"%s","stop_hook_active":false}' \
    "$f" "$work/$f.jsonl" "$work/cwd" >"$work/stop-$f.json"
  printf '{"session_id":"%s","hook_event_name":"PreCompact","transcript_path":"%s","cwd":"%s","trigger":"auto","custom_instructions":""}' \
    "$f" "$work/$f.jsonl" "$work/cwd" >"$work/precompact-$f.json"
  printf '{"session_id":"%s","hook_event_name":"SessionStart","transcript_path":"%s","cwd":"%s","source":"compact"}' \
    "$f" "$work/$f.jsonl" "$work/cwd" >"$work/sessionstart-$f.json"
  # One PreCompact saves the block SessionStart injects; keep a copy.
  "$work/ccm" hook PreCompact <"$work/precompact-$f.json" >/dev/null
  cp "$CCM_HOME/preserve/$f.md" "$work/block-$f.md"
  echo "$f: preservation block $(stat -c %s "$work/block-$f.md") bytes"
done

# cmd SCENARIO FILE PROGRAM: the shell command of one run.
cmd() {
  local s=$1 f=$2 p=$3 pre=""
  case $s in
    stop-first) pre="rm -f $CCM_HOME/state/$f.json; "; s=stop ;;
    stop-next) s=stop ;;
    sessionstart) pre="cp $work/block-$f.md $CCM_HOME/preserve/$f.md; " ;;
  esac
  echo "${pre}$p < $work/$s-$f.json > /dev/null"
}

ccm="$work/ccm hook"
summary=()
for s in stop-first stop-next precompact sessionstart; do
  ev=$s; case $s in stop-*) ev=Stop ;; precompact) ev=PreCompact ;; sessionstart) ev=SessionStart ;; esac
  echo
  echo "== $s: big vs small"
  out1=$(farm-bench -n "$runs" --vs "sh -c '$(cmd $s small "$ccm $ev")'" -- sh -c "$(cmd $s big "$ccm $ev")" 2>&1)
  echo "$out1" | grep -E '^(A|B) wall|^A/B wall'
  echo "== $s: big vs the empty program"
  out2=$(farm-bench -n "$runs" --vs "sh -c '$(cmd $s big "$work/nothing")'" -- sh -c "$(cmd $s big "$ccm $ev")" 2>&1)
  echo "$out2" | grep -E '^(A|B) wall|^A/B wall'
  summary+=("$(printf '%-13s big/small %s   big/empty %s' "$s" \
    "$(echo "$out1" | awk '/^A\/B wall/ {print $4}')" "$(echo "$out2" | awk '/^A\/B wall/ {print $4}')")")
done
echo
echo "median wall-time ratios (targets: big/small <= 1.5, big/empty < 3):"
printf '%s\n' "${summary[@]}"
