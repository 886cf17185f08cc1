#!/usr/bin/env bash
# Register one file entry for a held-out round collected from files (tools/heldout/README.md), so
# that no two collectors take it, no file gives more than 3 entries, and no file the project already
# holds (at any commit) is taken again.
#   ROUND_DIR=/work/collectNN bash tools/heldout/take.sh PART https://github.com/OWNER/REPO/blob/COMMIT/PATH#LN
# exit 0: registered now; 1: another part took it; 2: the file is held in the project; 3: that file
# gave 3 entries already; 64: usage
set -euo pipefail
[ $# -eq 2 ] && [ -n "${ROUND_DIR:-}" ] || { echo "usage: ROUND_DIR=DIR take.sh PART URL" >&2; exit 64; }
part=$1; url=$2
case "$url" in https://github.com/*/*/blob/*/*) ;; *) echo "not a blob URL: $url" >&2; exit 64;; esac
REPO=$(cd "$(dirname "$0")/../.." && pwd)
owner_repo=$(printf '%s' "$url" | sed -E 's#https://github.com/([^/]+)/([^/]+)/blob/.*#\1/\2#')
path=$(printf '%s' "$url" | sed -E 's#https://github.com/[^/]+/[^/]+/blob/[^/]+/([^#]+).*#\1#')
line=$(printf '%s' "$url" | sed -nE 's#.*(\#L[0-9]+)$#\1#p')
key=$(printf '%s/%s%s' "$owner_repo" "$path" "$line" | tr 'A-Z' 'a-z')
base=${key%%#*}
mkdir -p "$ROUND_DIR"; touch "$ROUND_DIR/taken.txt"
exec 9>>"$ROUND_DIR/taken.lock"
flock 9
if grep -qiF -- "$key " "$ROUND_DIR/taken.txt"; then echo "taken already: $(grep -iF -- "$key " "$ROUND_DIR/taken.txt")"; exit 1; fi
n=$(grep -ciF -- "$base#" "$ROUND_DIR/taken.txt" || true)
if [ "${n:-0}" -ge 3 ]; then echo "file already gave 3 entries: $base"; exit 3; fi
held=("$REPO/tests/fixtures" "$REPO/tests/cases" "$REPO/docs" "$REPO/tools/explain_catalogue" "$REPO/envcheck/explain")
# the same repository and path at any commit (blob URLs), or owner/repo/path written out
if grep -rhoiE -- "github\.com/${owner_repo//./\\.}/blob/[^/ ]+/[^ #\"']+" "${held[@]}" 2>/dev/null \
     | sed -E 's#.*/blob/[^/]+/##' | grep -qixF -- "$path" \
   || grep -rqiF -- "$owner_repo/$path" "${held[@]}" 2>/dev/null; then
  echo "held in the project: $owner_repo/$path"; exit 2
fi
printf '%s %s %s\n' "$key" "$part" "$(date -u +%FT%TZ)" >> "$ROUND_DIR/taken.txt"
echo "registered: $key"
