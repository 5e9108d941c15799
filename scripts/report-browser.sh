#!/usr/bin/env bash
# Renders ccm report pages in headless Chromium and checks that they are
# self-contained: no console message (a script error or a blocked load is
# one), no request the page makes (Chromium's NetLog, filtered to requests
# with the page as initiator; the browser's own update and account checks
# are not the page's), and no element or style in the HTML that refers to
# an address (src=, href=, url(), @import). Writes
# a PNG screenshot of each page.
#
#   scripts/report-browser.sh [SESSION.jsonl] [OUT_DIR]
#
# Pages: the session (default: the 2.1.39 corpus session with a compaction),
# ccm report --all over the corpus config dir, and a hostile transcript
# (</script>, <img onerror>, a whole HTML page as the prompt), which must
# render as text. Chromium is Debian's package; it is installed when
# missing (as root, or with sudo). Takes about 10 s.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$repo/../shared}
corpus=$shared/corpus/claude-config
session=${1:-$corpus/projects/-home-USER-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569.jsonl}
out=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ccm-report-browser.XXXXXX")}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-report-work.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -z "${1:-}" ] && [ ! -d "$corpus/projects" ]; then
  # A plain clone: the shipped sample session, and a config dir holding it.
  echo "report-browser: no ../shared/corpus: the pages of testdata/sample-session.jsonl instead" >&2
  session=$repo/testdata/sample-session.jsonl
  corpus=$work/sample-config
  mkdir -p "$corpus/projects/-home-dev-projects-demo"
  cp "$session" "$corpus/projects/-home-dev-projects-demo/sample-session.jsonl"
fi
if [ ! -f "$session" ]; then
  echo "report-browser: no session at $session" >&2
  exit 2
fi
if ! command -v chromium >/dev/null; then
  echo "report-browser: installing chromium (Debian package)" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

(cd "$repo" && go build -o "$work/ccm" ./cmd/ccm)
export CLAUDE_CONFIG_DIR=$work/claude CCM_CACHE_DIR=$work/cache CCM_HOME=$work/home
mkdir -p "$CLAUDE_CONFIG_DIR" # ccm refuses a config dir that does not exist

# The hostile transcript.
cat >"$work/hostile.jsonl" <<'EOF'
{"type":"user","uuid":"u1","parentUuid":null,"cwd":"/tmp/<img src=x onerror=alert(1)>","message":{"role":"user","content":"see: <!DOCTYPE html><html><head><script src=\"https://evil.example/x.js\"></script></head><body onload=\"alert(2)\"><iframe src=\"https://evil.example/\"></iframe></body></html>"}}
{"type":"custom-title","customTitle":"</script><script>alert(3)</script>"}
{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","model":"<img src=x onerror=alert(4)>","usage":{"input_tokens":3,"cache_read_input_tokens":1000,"output_tokens":9},"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"</script><img src=x onerror=alert(5)>"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"<script>alert(6)</script>"}]}}
{"type":"assistant","uuid":"a3","parentUuid":"r1","message":{"id":"m3","role":"assistant","usage":{"input_tokens":3,"cache_read_input_tokens":1200,"output_tokens":9},"content":[{"type":"tool_use","id":"t2","name":"</script><script>alert(7)</script>","input":{}}]}}
{"type":"user","uuid":"r2","parentUuid":"a3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"</script><script>alert(8)</script>"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"r2","message":{"id":"m2","role":"assistant","usage":{"input_tokens":3,"cache_read_input_tokens":1500,"output_tokens":9},"content":[{"type":"text","text":"<style>body{display:none}</style>"}]}}
EOF

"$work/ccm" report -o "$out/session.html" "$session" >/dev/null
"$work/ccm" --claude-dir "$corpus" report --all -o "$out/all.html" >/dev/null
"$work/ccm" report -o "$out/hostile.html" "$work/hostile.jsonl" >/dev/null

fail=0
for page in session all hostile; do
  before=$fail
  html=$out/$page.html
  # No element or style refers to an address. (Transcripts hold addresses
  # as text, in titles and prompts: those are inert, escaped text.)
  if grep -Eoi '(src|href|action|srcset|poster|data)[[:space:]]*=[[:space:]]*["'"'"']?[a-z]+:|url\(|@import' "$html" | head -3 | grep -q .; then
    echo "FAIL $page: the HTML refers to an address:"; grep -Eoi '(src|href|action|srcset|poster|data)[[:space:]]*=[[:space:]]*["'"'"']?[a-z]+:|url\(|@import' "$html" | head -3
    fail=1
  fi
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --log-net-log="$work/$page.netlog.json" \
    --window-size=1280,2400 --hide-scrollbars --screenshot="$out/$page.png" "file://$html" \
    >"$work/$page.stdout" 2>"$work/$page.stderr" || {
      echo "FAIL $page: chromium exited $?"; tail -5 "$work/$page.stderr"; fail=1; continue; }
  if grep -q 'CONSOLE' "$work/$page.stderr"; then
    echo "FAIL $page: console messages:"; grep 'CONSOLE' "$work/$page.stderr" | head -5
    fail=1
  fi
  # Requests the page started: the page (a file:// document) is their
  # initiator; Chromium's own background requests have none.
  requests=$(python3 - "$work/$page.netlog.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:  # Chromium may leave the last event unterminated
    text = open(sys.argv[1]).read().rstrip().rstrip(',')
    d = json.loads(text + ']}' if not text.endswith('}') else text)
names = {v: k for k, v in d['constants']['logEventTypes'].items()}
for e in d['events']:
    p = e.get('params') or {}
    url = p.get('url') or ''
    if names.get(e['type']) == 'URL_REQUEST_START_JOB' and url and p.get('initiator') != 'not an origin' and not url.startswith('file:'):
        print(p.get('url'), 'initiator', p.get('initiator'))
PY
)
  if [ -n "$requests" ]; then
    echo "FAIL $page: the page made network requests:"; echo "$requests" | head -5
    fail=1
  fi
  if [ ! -s "$out/$page.png" ]; then
    echo "FAIL $page: no screenshot"; fail=1
  elif [ "$fail" = "$before" ]; then
    echo "ok   $page: no console messages, no requests; $out/$page.png"
  fi
done
# The hostile strings are on the page as text, not markup.
if grep -qi '<img\|<iframe\|<style>body' "$out/hostile.html"; then
  echo "FAIL hostile: a transcript's markup reached the page"; fail=1
fi
exit $fail
