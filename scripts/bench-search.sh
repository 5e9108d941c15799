#!/usr/bin/env bash
# Measures ccm search on a generated config dir, side by side with
# rg -F -l (Debian's ripgrep) over the same transcripts, with farm-bench:
#
#   scripts/bench-search.sh            # 1,000 sessions, about 2 GB, 50 archived
#   scripts/bench-search.sh --large    # 10,000 sessions, about 20 GB, 500 archived
#   SESSIONS=N SIZE_MB=M ARCHIVES=K scripts/bench-search.sh
#
# The tree is laid out as scripts/bench-batch.sh lays it: DISTINCT (50)
# transcripts from scripts/gen, sizes spread from 2% to 198% of the mean,
# hard-linked into every session path (one in ten with a subagent), so the
# tree takes the distinct transcripts' space on disk while ccm and rg read
# every path's bytes. One session is a copy with a phrase planted at its
# end; ARCHIVES sessions of another project, one of them with a second
# planted phrase, are archived with ccm archive.
#
# It reports: the first index build (wall, CPU, bytes read per CPU second,
# peak RSS); the index's size against the text it indexes and against the
# transcripts; a warm search against rg -F -l for the planted phrase
# (farm-bench medians and the pair-by-pair ratio); the update after one
# session grows by 1 MB (ccm's own update time and the whole command);
# a search of an archived session's phrase. Everything is removed at the
# end. Check free space first: the index takes about a tenth of the tree.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sessions=${SESSIONS:-1000}
size_mb=${SIZE_MB:-2000}
archives=${ARCHIVES:-}
if [ "${1:-}" = "--large" ]; then sessions=10000; size_mb=20000; archives=${archives:-500}; fi
archives=${archives:-50}
distinct=${DISTINCT:-50}
runs=${RUNS:-10}
command -v rg >/dev/null || { echo "bench-search: needs rg (apt-get install ripgrep)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-bench-search.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/gen" ./scripts/gen)
export CLAUDE_CONFIG_DIR=$work/claude CCM_HOME=$work/home CCM_CACHE_DIR=$work/cache
cfg=$CLAUDE_CONFIG_DIR
ccm=$work/ccm

per=$(( size_mb * 1024 / sessions )) # KB per session on average
for i in $(seq 0 $(( distinct - 1 ))); do
  kb=$(( per * (2 * i + 1) / distinct + 4 ))
  "$work/gen" -o "$work/t$i.jsonl" -size "${kb}KB" -seed "$i" >/dev/null 2>&1
done
touch -d '40 days ago' "$work"/t*.jsonl

# tree PREFIX FIRST N: N sessions hard-linked from the distinct transcripts.
tree() {
  local prefix=$1 first=$2 n=$3 projects=$(( $3 / 50 + 1 )) i p id
  for i in $(seq "$first" $(( first + n - 1 ))); do
    p=$cfg/projects/$prefix$(( i % projects ))
    id=$(printf '%08x-0000-4000-8000-%012x' "$i" "$i")
    [ -d "$p" ] || mkdir -p "$p"
    ln "$work/t$(( i % distinct )).jsonl" "$p/$id.jsonl"
    if [ $(( i % 10 )) = 0 ]; then
      mkdir -p "$p/$id/subagents"
      ln "$work/t$(( (i / 10) % 8 )).jsonl" "$p/$id/subagents/agent-a$i.jsonl"
    fi
  done
}
# plant FILE PHRASE: make FILE a copy of itself and append a prompt.
plant() {
  cp "$1" "$1.tmp" && mv "$1.tmp" "$1"
  printf '{"type":"user","uuid":"planted","sessionId":"x","cwd":"/home/u/planted","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please find %s again"}}\n' "$2" >>"$1"
}
tree -home-u-proj 1 "$sessions"
live=$(printf '%08x-0000-4000-8000-%012x' 7 7)
plant "$cfg/projects/-home-u-proj$(( 7 % (sessions / 50 + 1) ))/$live.jsonl" "ultramarine bassoon quokka"
if [ "$archives" -gt 0 ]; then
  tree -home-u-old $(( sessions + 1 )) "$archives"
  arc=$(printf '%08x-0000-4000-8000-%012x' $(( sessions + 1 )) $(( sessions + 1 )))
  plant "$(ls "$cfg"/projects/-home-u-old*/"$arc.jsonl")" "vermilion oboe wombat"
  find "$cfg/projects" -path '*-home-u-old*' -type f -exec touch -d '40 days ago' {} +
  for p in "$cfg"/projects/-home-u-old*; do
    "$ccm" archive --older-than 30d --project "$(basename "$p")" >/dev/null
  done
fi
files=$(find "$cfg/projects" -name '*.jsonl' | wc -l)
bytes=$(find "$cfg/projects" -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s}')
abytes=$(du -sb "$CCM_HOME/archive" 2>/dev/null | cut -f1 || echo 0)
printf 'config dir: %d sessions, %d transcripts, %.2f GB; %d archived sessions, %.2f GB of archives; %s on disk\n' \
  "$sessions" "$files" "$(python3 -c "print($bytes/1e9)")" "$archives" "$(python3 -c "print(${abytes:-0}/1e9)")" "$(du -sh "$work" | cut -f1)"
cat "$work"/t*.jsonl >/dev/null # the page cache holds the distinct transcripts

echo
echo "== first index build: ccm search --reindex --stats"
/usr/bin/time -f '%e %U %S %M' -o "$work/build.time" "$ccm" search --reindex --stats --json >"$work/build.json"
read -r wall usr sys rss <"$work/build.time"
python3 - "$work/build.json" "$wall" "$usr" "$sys" "$rss" "$bytes" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); wall, usr, sys_, rss, tbytes = map(float, sys.argv[2:7])
ix, up = j["index"], j["update"]
cpu = usr + sys_
print("read %.2f GB in %.1f s wall, %.1f s CPU: %.0f MB/s wall, %.0f MB/s per CPU second; peak RSS %.0f MB"
      % (up["bytes"]/1e9, wall, cpu, up["bytes"]/1e6/wall, up["bytes"]/1e6/cpu, rss/1024))
print("index: %d messages, %d segments, %.1f MB; text indexed %.2f GB: index = %.1f%% of the text, %.1f%% of the transcripts; archive parts %.1f MB"
      % (ix["messages"], ix["segments"], ix["index_bytes"]/1e6, ix["text_bytes"]/1e9,
         100*ix["index_bytes"]/max(ix["text_bytes"],1), 100*ix["index_bytes"]/max(tbytes,1), ix["part_bytes"]/1e6))
PY

echo
echo "== warm search for a phrase in one session, against rg -F -l over the same transcripts"
"$ccm" search "ultramarine bassoon quokka" | grep -q "$live" || { echo "bench-search: the planted phrase was not found" >&2; exit 1; }
farm-bench -n "$runs" --timeout 3000 --vs "rg -F -l 'ultramarine bassoon quokka' $cfg/projects" -- "$ccm" search "ultramarine bassoon quokka"

if [ "$archives" -gt 0 ]; then
  echo
  echo "== warm search for a phrase in an archived session"
  "$ccm" search "vermilion oboe wombat" | grep -q "$arc" || { echo "bench-search: the archived phrase was not found" >&2; exit 1; }
  farm-bench -n "$runs" -- "$ccm" search "vermilion oboe wombat"
fi

echo
echo "== update after one session grows by 1 MB (5 times)"
grow=$cfg/projects/-home-u-proj$(( 7 % (sessions / 50 + 1) ))/$live.jsonl
for r in 1 2 3 4 5; do
  head -c 1100000 "$work/t49.jsonl" | head -n -1 >>"$grow"
  /usr/bin/time -f '%e %M' -o "$work/grow.time" "$ccm" search --stats --json >"$work/grow.json"
  read -r gwall grss <"$work/grow.time"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); u=j['update']; print('grown: read %.2f MB; update %.1f ms: finding it among the transcripts %.1f ms, indexing it and saving %.1f ms (the whole command %.0f ms, peak RSS %.0f MB)' % (u['bytes']/1e6, 1000*j['update_seconds'], 1000*u['list_seconds'], 1000*u['index_seconds'], 1000*float(sys.argv[2]), float(sys.argv[3])/1024))" "$work/grow.json" "$gwall" "$grss"
done
echo
echo "== peak memory of a search for a common word"
/usr/bin/time -f '%e s, peak RSS %M KB' "$ccm" search --limit 20 error handler >/dev/null
