#!/usr/bin/env bash
# Builds every package for each release target with CGO_ENABLED=0 and runs
# go vet for it (tests included, so Linux-only tests must carry build
# constraints): linux/amd64, linux/arm64, darwin/amd64, darwin/arm64,
# windows/amd64, windows/arm64; cmd/ccm-s3, the object storage helper,
# among them. Prints the time it took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  export GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0
  go build ./...
  go vet ./...
  echo "cross-build: $target builds and vets"
done
echo "cross-build: 6 targets in $(($(date +%s) - start)) s"
