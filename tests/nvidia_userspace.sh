#!/usr/bin/env bash
# Make NVIDIA's real userspace available for the tests: the distribution's packaged NVML library,
# nvidia-smi and CUDA toolkit (Debian: libnvidia-ml1, nvidia-smi, nvidia-cuda-toolkit from
# contrib/non-free; Ubuntu: nvidia-utils-535, nvidia-cuda-toolkit from restricted/multiverse).
# They install and run without a GPU: NVML answers "Driver Not Loaded", nvidia-smi exits 9 — a
# node whose driver packages are installed but whose kernel module is not loaded.
#
# Idempotent and quick on a re-run: when the packages are installed it only asks dpkg. When the
# machine's sources lack the component, it adds ONE sources file of its own
# (/etc/apt/sources.list.d/envcheck-nonfree.sources) on the machine's own mirror, and leaves the
# machine's other sources as they were. --no-install-recommends: no DKMS kernel module build.
#
# Usage: bash tests/nvidia_userspace.sh [--check]
#   exit 0: installed (now or before); 1: not installed and could not be (not root, no apt, not
#   Debian/Ubuntu, mirror unreachable) — the reason on stderr. --check only asks, installs nothing.
set -euo pipefail

SOURCES=/etc/apt/sources.list.d/envcheck-nonfree.sources
ID=""; VERSION_CODENAME=""
[ -r /etc/os-release ] && . /etc/os-release
case "$ID" in
  debian) PKGS=(libnvidia-ml1 nvidia-smi nvidia-cuda-toolkit); COMPONENTS="contrib non-free"
          KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg ;;
  ubuntu) PKGS=(nvidia-utils-535 nvidia-cuda-toolkit); COMPONENTS="restricted multiverse"
          KEYRING=/usr/share/keyrings/ubuntu-archive-keyring.gpg ;;
  *) PKGS=() ;;
esac

installed() {
  local p
  for p in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
  done
}

fail() { echo "tests/nvidia_userspace.sh: $*" >&2; exit 1; }

[ ${#PKGS[@]} -gt 0 ] || fail "not Debian or Ubuntu (ID=${ID:-unknown}); install NVIDIA's userspace by hand"
command -v dpkg-query >/dev/null 2>&1 || fail "no dpkg on this machine"
installed "${PKGS[@]}" && exit 0
[ "${1:-}" = "--check" ] && fail "${PKGS[*]} not installed; run: bash tests/nvidia_userspace.sh (as root)"
[ "$(id -u)" = 0 ] || fail "${PKGS[*]} not installed and not root; run: sudo bash tests/nvidia_userspace.sh"
command -v apt-get >/dev/null 2>&1 || fail "no apt-get on this machine"

# The machine's own mirror for its release, from its deb822 sources or its one-line sources.list.
mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk -v rel="$VERSION_CODENAME" 'BEGIN { RS = "" }
      $0 ~ "(^|\n)Types:[^\n]*deb( |\n|$)" && $0 ~ "(^|\n)Suites:[^\n]*[ \t]" rel "([ \t]|\n|$)" {
        if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) { u = substr($0, RSTART, RLENGTH)
          sub(/^\n?URIs:[ \t]*/, "", u); print u; exit } }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk -v rel="$VERSION_CODENAME" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++
      if ($2 ~ /^\[/) i++; if ($(i + 1) == rel) { print $i; exit } }' "$f"
  done
}

candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2; exit }'; }

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || fail "apt-get update failed"
if [ -z "$(candidate "${PKGS[0]}")" ] || [ "$(candidate "${PKGS[0]}")" = "(none)" ]; then
  uri=$(mirror | head -n 1)
  [ -n "$uri" ] && [ -n "$VERSION_CODENAME" ] || fail "cannot tell this machine's $ID mirror for '$VERSION_CODENAME' from /etc/apt"
  suites="$VERSION_CODENAME $VERSION_CODENAME-updates"
  cat > "$SOURCES" <<EOF
# Added by envcheck's tests/nvidia_userspace.sh: the $COMPONENTS components, for NVIDIA's
# packaged userspace (${PKGS[*]}). Delete this file to undo; other sources are untouched.
Types: deb
URIs: $uri
Suites: $suites
Components: $COMPONENTS
Signed-By: $KEYRING
EOF
  apt-get update -qq || fail "apt-get update failed after adding $SOURCES"
fi
echo "tests/nvidia_userspace.sh: installing ${PKGS[*]} (about 1.6 GB download on Debian 12)" >&2
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null \
  || fail "apt-get install ${PKGS[*]} failed"
installed "${PKGS[@]}" || fail "${PKGS[*]} still not installed after apt-get"
