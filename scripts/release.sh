#!/usr/bin/env bash
# scripts/release.sh VERSION builds ccm's release binaries into dist/:
# ccm-VERSION-OS-ARCH and its object storage helper ccm-s3-VERSION-OS-ARCH
# (.exe for Windows) for linux/amd64, linux/arm64, darwin/amd64,
# darwin/arm64, windows/amd64 and windows/arm64, and SHA256SUMS for them.
#
# The binaries are static (CGO_ENABLED=0) and reproducible: -trimpath, an
# empty build id, and the version, the commit and the commit's time (also
# SOURCE_DATE_EPOCH) set at link time, so that the same commit built with
# the same Go gives the same bytes anywhere. The script proves it: it
# builds everything a second time with an empty build cache and compares.
# Then it checks the checksums, that each binary is static, and that the
# Linux binary's --version names VERSION and the commit.
#
# The tree must be clean (a release is a commit); ALLOW_DIRTY=1 builds
# anyway, for trying the script out.
set -euo pipefail
version=${1:?usage: scripts/release.sh VERSION (e.g. v0.1.0)}
cd "$(dirname "$0")/.."
if [ -n "$(git status --porcelain)" ] && [ -z "${ALLOW_DIRTY:-}" ]; then
  echo "release: the tree has uncommitted changes (commit them, or ALLOW_DIRTY=1 to try)" >&2
  exit 2
fi
commit=$(git rev-parse HEAD)
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
ldflags="-s -w -buildid= -X main.buildVersion=$version -X main.buildCommit=$commit -X main.buildDate=$date"

# build DIR builds both programs for every target into DIR.
build() {
  local dir=$1 target os arch out prog
  mkdir -p "$dir"
  for target in $targets; do
    os=${target%/*} arch=${target#*/}
    for prog in ccm ccm-s3; do
      out=$dir/$prog-$version-$os-$arch
      [ "$os" = windows ] && out=$out.exe
      CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" ./cmd/$prog
    done
  done
}

start=$(date +%s)
rm -rf dist
build dist
(cd dist && sha256sum ccm-* >SHA256SUMS)

# Reproducible: a second build, from an empty build cache, is the same.
again=$(mktemp -d "${TMPDIR:-/tmp}/ccm-release.XXXXXX")
trap 'rm -rf "$again"' EXIT
GOCACHE=$again/cache build "$again/dist"
(cd "$again/dist" && sha256sum ccm-*) | diff - dist/SHA256SUMS >/dev/null || {
  echo "release: the second build differs:" >&2
  (cd "$again/dist" && sha256sum ccm-*) | diff - dist/SHA256SUMS >&2
  exit 1
}
(cd dist && sha256sum --quiet -c SHA256SUMS)

# Static: no interpreter, no shared libraries (ELF); built without cgo.
for f in dist/ccm-*; do
  [ "$f" = dist/SHA256SUMS ] && continue
  go version -m "$f" | grep -q 'CGO_ENABLED=0' || { echo "release: $f was built with cgo" >&2; exit 1; }
  case $f in
  *-linux-*)
    if file "$f" | grep -q 'dynamically linked'; then
      echo "release: $f is dynamically linked" >&2
      exit 1
    fi
    ;;
  esac
done

native=dist/ccm-$version-$(go env GOOS)-$(go env GOARCH)
if [ -x "$native" ]; then
  got=$("$native" --version)
  want="ccm version $version (commit ${commit:0:12}, built $date)"
  [ "$got" = "$want" ] || { echo "release: $native --version: $got, want $want" >&2; exit 1; }
fi
# The helper starts and says it is not run by hand (it reads its
# configuration from ccm on stdin).
helper=dist/ccm-s3-$version-$(go env GOOS)-$(go env GOARCH)
if [ -x "$helper" ]; then
  if "$helper" </dev/null 2>/dev/null; then
    echo "release: $helper ran without a configuration" >&2
    exit 1
  fi
  case $("$helper" </dev/null 2>&1 || true) in
  *"not run by hand"*) ;;
  *) echo "release: $helper does not start" >&2; exit 1 ;;
  esac
fi
echo "release: $(($(wc -l <dist/SHA256SUMS))) binaries of $version ($commit, $date) in dist/, reproducible and static, in $(($(date +%s) - start)) s"
cat dist/SHA256SUMS
