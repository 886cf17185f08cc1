"""The two node-side shell scripts of install-cuda, generated as text (pure functions):

facts_script()    one command gathering everything the plan needs (printed as key=value lines)
install_script()  verify the runfile, run the installer, judge the RESULT (version file + nvcc -V,
                  never the exit status: the new installer exits 0 after "Incomplete
                  installation"), and on any failure put the node back as it was: the partial tree
                  removed, a previous toolkit moved back, the /usr/local/cuda symlink restored.
                  It runs as ONE command so a dropped SSH connection cannot stop it half-way
                  between installing and rolling back.
Every value reaching the shell is shlex-quoted.
"""
from __future__ import annotations

import shlex
from typing import List, Optional

from envcheck.install.cuda_spec import ToolkitSpec

q = shlex.quote


def facts_script(target: str, link: str, tmpdir: str, runfile_name: str, force: bool = False) -> str:
    """key=value lines. No runfile is looked for: each run stages its own in a fresh directory
    (staging.py), so nothing left by another run or host is ever trusted or reused."""
    return f"""
T={q(target)}; L={q(link)}; D={q(tmpdir)}
echo "uid=$(id -u)"
if [ "$(id -u)" = 0 ]; then echo priv=root
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then echo priv=sudo-nopasswd
elif command -v sudo >/dev/null 2>&1; then echo priv=sudo-password
else echo priv=none; fi
echo "machine=$(uname -m)"
free() {{ p=$1; while [ ! -d "$p" ]; do p=$(dirname "$p"); done; df -Pk "$p" | awk 'NR==2 {{print $4}}'; }}
echo "tmp_free_kb=$(free "$D")"
echo "target_free_kb=$(free "$(dirname "$T")")"
if [ -e "$T" ] || [ -L "$T" ]; then echo target_exists=1; else echo target_exists=0; fi
[ -f "$T/version.txt" ] && echo "version_txt=$(head -n1 "$T/version.txt")"
[ -f "$T/version.json" ] && echo "version_json=$(sed -n 's/.*"version" *: *"\\([^"]*\\)".*/\\1/p' "$T/version.json" | head -n1)"
[ -x "$T/bin/nvcc" ] && echo "nvcc=$("$T/bin/nvcc" -V 2>/dev/null | grep -o 'release [0-9.]*' | head -n1)"
if [ -L "$L" ]; then echo "link=$(readlink "$L")"; elif [ -e "$L" ]; then echo link_kind=notlink; else echo link_kind=absent; fi
n=$(command -v nvcc 2>/dev/null) && echo "path_nvcc=$n" && echo "path_nvcc_release=$("$n" -V 2>/dev/null | grep -o 'release [0-9.]*' | head -n1)"
g=$(command -v gcc 2>/dev/null) && echo "gcc=$(gcc -dumpfullversion -dumpversion 2>/dev/null | head -n1)"
if command -v nvidia-smi >/dev/null 2>&1; then
  # compute_cap is unknown to old drivers: fall back to names (matched against the matrix)
  g=$(timeout 20 nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null) \\
    || g=$(timeout 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)
  [ -n "$g" ] && echo "$g" | sed 's/^/gpu=/'
fi
[ -e /tmp/cuda-installer.log ] && echo "installer_log_uid=$(stat -c %u /tmp/cuda-installer.log)"
if [ -w /var/log ]; then echo varlog_writable=1; else echo varlog_writable=0; fi
command -v curl >/dev/null 2>&1 && echo fetch=curl
command -v wget >/dev/null 2>&1 && echo fetch=wget
echo end=1
"""


def fetch_command(url: str, dest: str, timeout: float) -> str:
    """The node downloads the runfile itself (curl, else wget), bounded in time, into a .part
    file renamed only when complete."""
    part = dest + ".part"
    t = int(timeout)
    return (f"mkdir -p -m 700 {q(dest.rsplit('/', 1)[0])} && "
            f"if command -v curl >/dev/null 2>&1; then curl -fsSL --connect-timeout 30 --max-time {t} -o {q(part)} {q(url)}; "
            f"else wget -q -T 30 -O {q(part)} {q(url)} & p=$!; (sleep {t}; kill $p 2>/dev/null) & w=$!; wait $p; r=$?; kill $w 2>/dev/null; [ $r = 0 ]; fi "
            f"&& mv -f {q(part)} {q(dest)}")


def version_check(spec: ToolkitSpec, tree: str) -> str:
    """Shell that sets ok=1 when the tree's version file and nvcc both say spec.version."""
    major, minor = spec.version.split(".")[:2]
    full = spec.version
    if spec.version_file == "version.txt":
        vf = (f'vf=$(head -n1 {q(tree)}/version.txt 2>/dev/null); '
              f'[ "$vf" = {q("CUDA Version " + full)} ] || why="version.txt says \'$vf\', want CUDA Version {full}"')
    else:
        # version.json's cuda.version is X.Y.Z or date-stamped X.Y.YYYYMMDD (cuda-driver-facts §3.5)
        vf = (f'vf=$(sed -n \'s/.*"version" *: *"\\([^"]*\\)".*/\\1/p\' {q(tree)}/version.json 2>/dev/null | head -n1); '
              f'case "$vf" in {q(full)}|{major}.{minor}.[0-9][0-9][0-9][0-9]*) ;; '
              f'*) why="version.json says \'$vf\', want {full}" ;; esac')
    nv = (f'nv=$({q(tree)}/bin/nvcc -V 2>/dev/null | grep -o "release [0-9.]*" | head -n1); '
          f'[ "$nv" = "release {major}.{minor}" ] || why="${{why:+$why; }}nvcc -V says \'${{nv:-nothing}}\', want release {major}.{minor}"')
    return f'why=""; {vf}; {nv}; [ -z "$why" ]'


def install_script(spec: ToolkitSpec, *, runfile: str, target: str, link: Optional[str], tmpdir: str,
                   expect_sha256: Optional[str], override: bool, replace_existing: bool,
                   expect_md5: Optional[str] = None) -> str:
    """The node-side install-or-roll-back script. `link` None: leave /usr/local/cuda alone
    (restored if the installer touched it); else point it at `target` atomically at the end."""
    flags: List[str] = spec.installer_flags(target, tmpdir, override)
    run = "LANG=C LC_ALL=C TMPDIR=" + q(tmpdir) + " sh " + q(runfile) + " " + " ".join(q(f) for f in flags)
    L = link or "/usr/local/cuda"
    out = f"{tmpdir}/envcheck-cuda-installer.out"
    log = "/var/log/cuda-installer.log" if spec.generation == "new" else "$(ls -t /tmp/cuda_install_*.log 2>/dev/null | head -n1)"
    sha_check = ""
    if expect_sha256:
        sha_check = (f'got=$(sha256sum < "$F" | cut -d" " -f1); [ "$got" = {q(expect_sha256)} ] || '
                     f'{{ echo "envcheck-refused: $F has sha256 $got, expected {expect_sha256}; not running it"; exit 4; }}')
    elif expect_md5:
        sha_check = (f'got=$(md5sum < "$F" | cut -d" " -f1); [ "$got" = {q(expect_md5)} ] || '
                     f'{{ echo "envcheck-refused: $F has md5 $got, expected {expect_md5} (NVIDIA\'s published md5); not running it"; exit 4; }}')
    if replace_existing:
        aside = 'PREV="$T.envcheck-prev.$$"; mv "$T" "$PREV" || fail "cannot move the existing $T aside"'
    else:
        aside = 'echo "envcheck-refused: $T exists"; exit 4'
    relink = ('ln -sfn "$T" "$L.envcheck-tmp" && mv -T "$L.envcheck-tmp" "$L" || fail "cannot point $L at $T"; '
              'echo "envcheck-linked: $L -> $T"') if link else ""
    check = version_check(spec, target)
    return f"""
set -u
umask 022
F={q(runfile)}; T={q(target)}; L={q(L)}; D={q(tmpdir)}; OUT={q(out)}
{sha_check}
sh "$F" --check >/dev/null 2>&1 || {{ echo "envcheck-refused: $F fails its own integrity check (sh $F --check): corrupt or truncated; not running it"; exit 4; }}
if [ -L "$L" ]; then OLDLINK=$(readlink "$L"); else OLDLINK=""; fi
PREV=""; CREATED=0
restore_link() {{
  if [ -n "$OLDLINK" ]; then ln -sfn "$OLDLINK" "$L.envcheck-tmp" && mv -T "$L.envcheck-tmp" "$L"
  elif [ -L "$L" ]; then rm -f "$L"; fi
}}
fail() {{
  echo "envcheck-failed: $1"
  [ "$CREATED" = 1 ] && rm -rf "$T"
  [ -n "$PREV" ] && mv "$PREV" "$T"
  restore_link
  echo "--- installer output (tail) ---"; tail -n 15 "$OUT" 2>/dev/null
  lg={log}; if [ -n "$lg" ] && [ -f "$lg" ]; then echo "--- $lg (tail) ---"; tail -n 15 "$lg"; fi
  exit 1
}}
trap 'fail "interrupted"' HUP INT TERM
mkdir -p "$D" || fail "cannot create $D"
# a stale scratch log of ours would be reused; one owned by someone else was refused in preflight
[ -O /tmp/cuda-installer.log ] && rm -f /tmp/cuda-installer.log
if [ -e "$T" ] || [ -L "$T" ]; then
  {aside}
fi
CREATED=1
{run} > "$OUT" 2>&1 < /dev/null
rc=$?
[ -O /tmp/cuda-installer.log ] && rm -f /tmp/cuda-installer.log
{check} || fail "installer exit status $rc, but the result is wrong: $why"
echo "envcheck-installed: $T (installer exit status $rc; $vf; $nv)"
restore_link
{relink}
[ -n "$PREV" ] && rm -rf "$PREV"
exit 0
"""


def link_command(target: str, link: str) -> str:
    """Point `link` at `target` atomically (a temp link renamed over it: never a moment without)."""
    return (f"ln -sfn {q(target)} {q(link + '.envcheck-tmp')} && mv -T {q(link + '.envcheck-tmp')} {q(link)} "
            f"&& echo {q('envcheck-linked: ' + link + ' -> ' + target)}")
