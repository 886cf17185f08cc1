"""The node-side shell scripts of install-cuda, generated as text (pure functions). What the plan
needs to know about a node is read by the probe (install/cuda.py: probe_request), not here.

install_script()  verify the runfile, run the installer, judge the RESULT (version file + nvcc -V,
                  never the exit status: the new installer exits 0 after "Incomplete
                  installation"), and on any failure put the node back as it was: the partial tree
                  removed, a previous toolkit moved back, the /usr/local/cuda symlink restored.
                  It runs as ONE command so a dropped SSH connection cannot stop it half-way
                  between installing and rolling back; the result is read by the probe too (its
                  toolkit section, from the copy staged beside the runfile, in --lines form).
Every value reaching the shell is shlex-quoted.
"""
from __future__ import annotations

import shlex
from typing import List, Optional

from envcheck.install.cuda_spec import ToolkitSpec
from envcheck.versions import compare

q = shlex.quote


def fetch_command(url: str, dest: str, timeout: float) -> str:
    """The node downloads the runfile itself (curl, else wget), bounded in time, into a .part
    file renamed only when complete."""
    part = dest + ".part"
    t = int(timeout)
    return (f"mkdir -p -m 700 {q(dest.rsplit('/', 1)[0])} && "
            f"if command -v curl >/dev/null 2>&1; then curl -fsSL --connect-timeout 30 --max-time {t} -o {q(part)} {q(url)}; "
            f"else wget -q -T 30 -O {q(part)} {q(url)} & p=$!; (sleep {t}; kill $p 2>/dev/null) & w=$!; wait $p; r=$?; kill $w 2>/dev/null; [ $r = 0 ]; fi "
            f"&& mv -f {q(part)} {q(dest)}")


def version_check(spec: ToolkitSpec, tree: str, probe: str) -> str:
    """Shell that succeeds when the tree's version file and its nvcc both say spec.version, as the
    probe reads them (`probe`: its command line, the staged script on stdin, --lines output);
    `why` says what is wrong otherwise, `vf` and `nv` what was found."""
    major, minor = spec.version.split(".")[:2]
    full = spec.version

    def value(key: str) -> str:
        return f'$(printf "%s\\n" "$tk" | sed -n {q("s/^toolkit[.]0[.]" + key + "=//p")} | head -n1)'
    # the version file says X.Y.Z, or (version.json from 11.1 on) X.Y.YYYYMMDD (cuda-driver-facts §3.5)
    want = q(full) if compare(full, "11.1") < 0 else f"{q(full)}|{major}.{minor}.[0-9][0-9][0-9][0-9]*"
    return (f'why=""; tk=$({probe} 2>&1) || why="the probe could not read {tree}: $(printf "%s" "$tk" | tail -n1)"; '
            f'vf={value("version_file[.]version")}; nv={value("nvcc[.]release")}; '
            f'case "$vf" in {want}) ;; *) why="${{why:+$why; }}its version file says \'$vf\', want {full}" ;; esac; '
            f'[ "$nv" = {q(major + "." + minor)} ] || why="${{why:+$why; }}nvcc -V says \'release ${{nv:-nothing}}\', '
            f'want release {major}.{minor}"; [ -z "$why" ]')


def install_script(spec: ToolkitSpec, *, runfile: str, target: str, link: Optional[str], tmpdir: str,
                   expect_sha256: Optional[str], override: bool, replace_existing: bool, probe: str,
                   expect_md5: Optional[str] = None) -> str:
    """The node-side install-or-roll-back script. `link` None: leave /usr/local/cuda alone
    (restored if the installer touched it); else point it at `target` atomically at the end.
    `probe`: the command line that runs the staged probe on the installed tree (version_check)."""
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
    check = version_check(spec, target, probe)
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
[ -d "$D" ] || fail "the staging directory $D is gone"
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
echo "envcheck-installed: $T (installer exit status $rc; version file $vf; nvcc release $nv)"
restore_link
{relink}
[ -n "$PREV" ] && rm -rf "$PREV"
exit 0
"""


def link_command(target: str, link: str) -> str:
    """Point `link` at `target` atomically (a temp link renamed over it: never a moment without)."""
    return (f"ln -sfn {q(target)} {q(link + '.envcheck-tmp')} && mv -T {q(link + '.envcheck-tmp')} {q(link)} "
            f"&& echo {q('envcheck-linked: ' + link + ' -> ' + target)}")
