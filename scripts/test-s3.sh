#!/usr/bin/env bash
# Runs ccm's object storage tests against a real S3-compatible server:
# scripts/minio.sh builds MinIO once into the user's cache (about 10
# minutes on 2 cores the first time), starts it on 127.0.0.1 with a fresh
# bucket and generated credentials, and stops it afterwards; a server
# already running is used instead when CCM_TEST_S3_ENDPOINT (with
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and CCM_TEST_S3_BUCKET) is set.
#
#   scripts/test-s3.sh              # the S3 tests and 30 kill -9 trials
#   TRIALS=100 scripts/test-s3.sh
#
# The tests: the client's uploads, downloads, listings and refusals
# (internal/objstore); the layout's commit marker, listings and checked
# downloads (sessions/remote); export -o s3://, import s3://, archive --to s3://,
# sessions --archived --from, unarchive --from across three machines; wrong
# credentials, a missing bucket and a server that goes away mid-upload
# (one line, non-zero exit, nothing removed, nothing listed); and ccm
# archive/export killed with SIGKILL at random points of their upload
# (cmd/ccm TestS3*).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCM_S3_KILL_TRIALS=${TRIALS:-30}
log=$(mktemp "${TMPDIR:-/tmp}/ccm-test-s3.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
scripts/minio.sh -- bash -c 'go test -count=1 -v ./internal/objstore/... ./sessions/remote &&
  go test -count=1 -v ./cmd/ccm -run TestS3' >"$log" 2>&1 || status=$?
# Each test's verdict and the trials' summary; the whole log on failure.
if [ "$status" -ne 0 ]; then
  cat "$log"
else
  grep -E '^(--- |ok|FAIL)|[0-9]+ trials \(' "$log"
fi
exit "$status"
