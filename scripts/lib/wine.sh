# Wine for running ccm's Windows tests on Linux (go test -exec), sourced by
# scripts/test-windows.sh and used by scripts/wine-exec.sh.
#
# wine_setup installs Debian's wine64 on first use (as root or with sudo)
# and prepares a Wine prefix under ~/.cache/ccm-wine. Go 1.24 and later
# need bcryptprimitives.dll (ProcessPrng), which Debian 12's Wine 8 lacks:
# the prefix gets a stand-in whose only export forwards ProcessPrng to
# advapi32's SystemFunction036 (RtlGenRandom: the same contract, fill a
# buffer with random bytes), linked from a .def file with the MinGW linker
# (Debian's binutils-mingw-w64-x86-64, no C compiler). Both are cached:
# later runs cost nothing.

wine_cache=${CCM_WINE_CACHE:-$HOME/.cache/ccm-wine}
export WINEPREFIX=$wine_cache/prefix
export WINEDEBUG=-all

# wine_bin prints the wine64 loader's path ("" when not installed).
wine_bin() {
  local w
  for w in /usr/lib/wine/wine64 "$(command -v wine64 2>/dev/null)" "$(command -v wine 2>/dev/null)"; do
    if [ -n "$w" ] && [ -x "$w" ]; then
      echo "$w"
      return
    fi
  done
}

wine_setup() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  if [ -z "$(wine_bin)" ] || ! command -v x86_64-w64-mingw32-ld >/dev/null; then
    if [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
      echo "wine: not installed, and no root or sudo to install it" >&2
      return 1
    fi
    echo "wine: installing Debian's wine64 and binutils-mingw-w64-x86-64" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends wine64 binutils-mingw-w64-x86-64 >/dev/null
  fi
  local sys32=$WINEPREFIX/drive_c/windows/system32
  if [ ! -d "$sys32" ]; then
    mkdir -p "$wine_cache"
    "$(wine_bin)" wineboot -i >/dev/null 2>&1
  fi
  if [ ! -f "$sys32/bcryptprimitives.dll" ]; then
    local tmp
    tmp=$(mktemp -d)
    printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng = advapi32.SystemFunction036\n' >"$tmp/bcp.def"
    x86_64-w64-mingw32-ld -shared --no-insert-timestamp -e 0 -o "$tmp/bcryptprimitives.dll" "$tmp/bcp.def"
    cp "$tmp/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll"
    rm -rf "$tmp"
  fi
}
