# Sourced by the real-client scripts (realclient-capture, -compact, -hooks,
# -migrate), after they set repo and set -euo pipefail:
#
#   . "$repo/scripts/lib/realclient.sh" NAME
#
# makes a work folder (kept with KEEP=1), builds ccm and the project's
# harness (scripts/realclient) into it, and installs the pinned Claude Code
# client once (no network later); when the client truly cannot be
# installed it prints "NAME: SKIP: ..." and exits 0. It sets work, keep,
# ccm, rc (the harness; rcbin is the same), session (the harness's session
# command, or $CCM_RC_SESSION, another harness with the same flags) and
# exports REALCLIENT_CLAUDE.
rc_name=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/ccm-$rc_name.XXXXXX")
keep=${KEEP:-}
trap '[ -n "$keep" ] || rm -rf "$work"' EXIT
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/ccm" ./cmd/ccm && go build -o "$work/rc" ./scripts/realclient)
ccm=$work/ccm
rc=$work/rc
rcbin=$rc
session=${CCM_RC_SESSION:-"$rc session"}
if ! claude=$("$rc" install 2>"$work/install.log"); then
  echo "$rc_name: SKIP: the pinned Claude Code client could not be installed:"
  tail -5 "$work/install.log"
  exit 0
fi
export REALCLIENT_CLAUDE=$claude
