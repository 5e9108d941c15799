#!/usr/bin/env bash
# The -exec program for Windows test binaries: go test -exec
# scripts/wine-exec.sh runs each under Wine, in the prefix that
# scripts/lib/wine.sh prepares (scripts/test-windows.sh sets it up).
set -euo pipefail
. "$(dirname "$0")/lib/wine.sh"
exec "$(wine_bin)" "$@"
