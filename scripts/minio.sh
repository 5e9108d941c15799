#!/usr/bin/env bash
# Runs a command against a real S3-compatible server (MinIO) on 127.0.0.1.
#
#   scripts/minio.sh --install          build the server (and, with --mc, the
#                                       MinIO client) into the cache; nothing runs
#   scripts/minio.sh [--mc] -- CMD ...  start a server, create a bucket, run
#                                       CMD, stop the server; exit with CMD's status
#
# The server is built once from its Go module with `go install` into
# ${XDG_CACHE_HOME:-~/.cache}/ccm-minio/<version>/ (about 10 minutes on 2
# cores the first time) and reused after; --mc builds the MinIO client `mc`
# the same way (the benchmark uses it). CCM_MINIO_VERSION and
# CCM_MC_VERSION pin other module versions.
#
# CMD runs with:
#   CCM_TEST_S3_ENDPOINT  http://127.0.0.1:PORT
#   CCM_TEST_S3_BUCKET    a bucket created for the run
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION  generated credentials
#   CCM_MINIO_BIN         the server binary (a test may stop and restart it)
#   CCM_MINIO_DATA        its data folder, CCM_MINIO_ADDR its host:port
#   CCM_MC                the client binary, when built
#
# A server already running is used instead when CCM_TEST_S3_ENDPOINT is set
# on entry (with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and
# CCM_TEST_S3_BUCKET naming an existing bucket, "ccm-test" by default);
# nothing is started or stopped then.
set -euo pipefail

minio_version=${CCM_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
mc_version=${CCM_MC_VERSION:-v0.0.0-20250313080218-cf909e1063a9}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/ccm-minio

want_mc=
install_only=
while [ $# -gt 0 ]; do
  case $1 in
    --install) install_only=1; shift ;;
    --mc) want_mc=1; shift ;;
    --) shift; break ;;
    *) echo "minio.sh: unknown argument $1 (usage: minio.sh [--install] [--mc] [-- CMD ...])" >&2; exit 2 ;;
  esac
done

# build_once MODULE VERSION NAME: prints the path of NAME built from
# MODULE@VERSION, building it into the cache the first time. A build that
# was interrupted leaves no binary at the final path (it is built into a
# temporary folder and renamed), so the next run builds again.
build_once() {
  local module=$1 version=$2 name=$3
  local dir=$cache/$name-$version
  if [ -x "$dir/$name" ]; then
    echo "$dir/$name"
    return
  fi
  mkdir -p "$cache"
  local tmp
  tmp=$(mktemp -d "$cache/.build-$name.XXXXXX")
  echo "minio.sh: building $module@$version into $dir (once; about 10 minutes on 2 cores)" >&2
  local start=$SECONDS
  if ! (cd "$tmp" && GOBIN="$tmp/bin" CGO_ENABLED=0 GOFLAGS= go install "$module@$version") >"$tmp/build.log" 2>&1; then
    echo "minio.sh: building $module@$version failed:" >&2
    tail -20 "$tmp/build.log" >&2
    rm -rf "$tmp"
    return 1
  fi
  echo "minio.sh: built $name in $((SECONDS - start)) s" >&2
  mkdir -p "$dir"
  mv "$tmp/bin/$name" "$dir/$name.tmp"
  mv "$dir/$name.tmp" "$dir/$name"
  rm -rf "$tmp"
  echo "$dir/$name"
}

minio=$(build_once github.com/minio/minio "$minio_version" minio)
if [ -n "$want_mc" ]; then
  CCM_MC=$(build_once github.com/minio/mc "$mc_version" mc)
  export CCM_MC
fi
if [ -n "$install_only" ]; then
  echo "$minio"
  exit 0
fi
if [ $# -eq 0 ]; then
  echo "minio.sh: no command given (usage: minio.sh [--install] [--mc] [-- CMD ...])" >&2
  exit 2
fi
export CCM_MINIO_BIN=$minio

# make_bucket ENDPOINT BUCKET: creates BUCKET through the S3 API (a signed
# PUT), so no client needs building for the tests.
# A server that has just started answers 503 until it is ready: retried
# for up to 30 s.
make_bucket() {
  local code
  for _ in $(seq 1 300); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
      --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      "$1/$2")
    case $code in
      200|409) return 0 ;;
      503) sleep 0.1 ;;
      *) break ;;
    esac
  done
  echo "minio.sh: creating bucket $2 at $1 failed (HTTP $code)" >&2
  return 1
}

if [ -n "${CCM_TEST_S3_ENDPOINT:-}" ]; then
  export CCM_TEST_S3_BUCKET=${CCM_TEST_S3_BUCKET:-ccm-test}
  export AWS_REGION=${AWS_REGION:-us-east-1}
  echo "minio.sh: using the server at $CCM_TEST_S3_ENDPOINT, bucket $CCM_TEST_S3_BUCKET" >&2
  "$@"
  exit
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-minio.XXXXXX")
pid=
stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap stop EXIT

# free_port: a port nothing listens on now (asked of the kernel).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

export AWS_ACCESS_KEY_ID=ccm$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
export AWS_SECRET_ACCESS_KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
export AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE
export CCM_MINIO_DATA=$work/data
mkdir -p "$CCM_MINIO_DATA"
for attempt in 1 2 3; do
  port=$(free_port)
  console=$(free_port)
  export CCM_MINIO_ADDR=127.0.0.1:$port
  MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY \
    MINIO_BROWSER=off MINIO_UPDATE=off \
    "$minio" server --quiet --address "$CCM_MINIO_ADDR" --console-address "127.0.0.1:$console" \
    "$CCM_MINIO_DATA" >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    if curl -sf "http://$CCM_MINIO_ADDR/minio/health/live" >/dev/null 2>&1; then
      break 2
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
done
if [ -z "$pid" ]; then
  echo "minio.sh: the server did not start:" >&2
  tail -20 "$work/server.log" >&2
  exit 1
fi
export CCM_TEST_S3_ENDPOINT=http://$CCM_MINIO_ADDR
export CCM_TEST_S3_BUCKET=ccm-test
make_bucket "$CCM_TEST_S3_ENDPOINT" "$CCM_TEST_S3_BUCKET"
set +e
"$@"
status=$?
set -e
exit $status
