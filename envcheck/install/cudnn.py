"""`envcheck install-cudnn ARCHIVE`: copy cuDNN into a toolkit, symlinks preserved, with a
manifest so `--remove` undoes exactly what was copied (and puts back files it replaced).

Archive layouts (cudnn-torch-nccl-facts.md §1.2): old `cudnn-10.0-linux-x64-v7.6.5.32.tgz`
(cuda/include, cuda/lib64); new `cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz`
(<stem>/include, <stem>/lib — copied to $CUDA_HOME/lib64, where the toolkit's libraries are).
Shape as everywhere: inspect_archive (controller, pure on the member list) + the probe's sections
(probe_request) -> plan_cudnn (pure) -> one node-side script.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import tarfile
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from envcheck.errors import UsageError
from envcheck.install import staging
from envcheck.facts import views
from envcheck.facts.schema import Facts
from envcheck.install.common import NodeOutcome, Privilege, ProbeRequest, privilege_from_fact, read_node, run_priv
from envcheck.remote import Remote, fan_out
from envcheck.versions import vkey

q = shlex.quote
MANIFEST = ".envcheck-cudnn-manifest"
BACKUP = ".envcheck-cudnn-backup"


@dataclass
class ArchiveInfo:
    path: str
    name: str
    version: str          # 8.9.7.29
    cuda: str             # "10.0" or "12" (the name carries X.Y before 8.5, only X after)
    layout: str           # old | new
    include: str          # member dir holding the headers
    lib: str              # member dir holding the libraries
    sha256: str = ""

    @property
    def cuda_major(self) -> int:
        return vkey(self.cuda)[0]

    @property
    def short_version(self) -> str:
        return ".".join(self.version.split(".")[:3])


_OLD = re.compile(r"^cudnn-(\d+\.\d+)-linux-x64-v(\d+(?:\.\d+)+)\.(?:tgz|tar\.gz)$")
_NEW = re.compile(r"^(cudnn-linux-[a-z0-9_]+-(\d+(?:\.\d+)+)_cuda(\d+(?:\.\d+)?)-archive)\.tar\.(?:xz|gz)$")


def inspect_archive(name: str, members: Sequence[str]) -> ArchiveInfo:
    """File name + member list -> layout, versions and the dirs to copy. Pure."""
    tops = {m.split("/", 1)[0] for m in members if m.strip("./")}
    m = _OLD.match(name)
    if m:
        inc, lib = "cuda/include", "cuda/lib64"
        info = ArchiveInfo("", name, m.group(2), m.group(1), "old", inc, lib)
    else:
        m = _NEW.match(name)
        if not m:
            raise UsageError(f"{name}: not a cuDNN archive name this tool knows "
                             "(cudnn-X.Y-linux-x64-vV.tgz or cudnn-linux-x86_64-V_cudaX-archive.tar.xz)",
                             "pass the archive as downloaded from NVIDIA, without renaming it")
        stem = m.group(1)
        info = ArchiveInfo("", name, m.group(2), m.group(3), "new", f"{stem}/include", f"{stem}/lib")
    norm = [x[2:] if x.startswith("./") else x for x in members]
    for d in (info.include, info.lib):
        if not any(x.startswith(d + "/") for x in norm):
            raise UsageError(f"{name}: has no {d}/ (top-level entries: {', '.join(sorted(tops)) or 'none'})",
                             "the archive is not the layout its name promises; download it again")
    return info


def unsafe_member(name: str, kind: str, link: str = "") -> Optional[str]:
    """Why a member must not be copied into a toolkit as root, or None. kind: file, dir, symlink,
    hardlink or other (device, FIFO). cuDNN's own links name a file beside them (libcudnn.so ->
    libcudnn.so.8), so a link target with any '/' is refused."""
    parts = name.split("/")
    if name.startswith("/") or ".." in parts:
        return f"member {name!r} is an absolute or '..' path"
    if kind == "other":
        return f"member {name!r} is a device, FIFO or other special file"
    if kind == "symlink" and (not link or "/" in link or link in (".", "..")):
        return f"member {name!r} is a symlink to {link!r}, outside its own directory"
    if kind == "hardlink" and (link.startswith("/") or ".." in link.split("/")):
        return f"member {name!r} is a hard link to {link!r}, outside the archive"
    return None


def _kind(t: tarfile.TarInfo) -> str:
    return ("file" if t.isreg() else "dir" if t.isdir() else "symlink" if t.issym()
            else "hardlink" if t.islnk() else "other")


def read_archive(path: str) -> ArchiveInfo:
    try:
        with tarfile.open(path) as tar:
            members = tar.getmembers()
    except (OSError, tarfile.TarError, EOFError) as e:
        # tarfile's message lists every compression it tried, one per line: keep the error one line
        why = " ".join(str(e).split())
        raise UsageError(f"{path}: cannot read as a tar archive ({why})", "download the archive again") from e
    names = [t.name for t in members]
    for t in members:
        why = unsafe_member(t.name[2:] if t.name.startswith("./") else t.name, _kind(t), t.linkname)
        if why:
            raise UsageError(f"{path}: {why}; not installing it",
                             "use the cuDNN archive as downloaded from NVIDIA")
    info = inspect_archive(os.path.basename(path), names)
    info.path = path
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    info.sha256 = h.hexdigest()
    return info


def probe_request(cuda_home: str) -> ProbeRequest:
    """What install-cudnn reads on a node: privilege, and at the toolkit: where it really is, its
    CUDA and cuDNN versions, our manifest, the package that owns it; and the pip cuDNN."""
    return ProbeRequest(("privilege", "disk", "toolkit", "manifest", "owner", "pip_cudnn"), (cuda_home,))


@dataclass
class CudnnFacts:
    uid: int
    priv: str
    cuda_home: str
    toolkit: Optional[str]
    cudnn: Optional[str]
    manifest: List[str]
    pip_cudnn: List[str]
    packaged: Optional[str] = None      # "nvidia-cuda-dev 11.8.89~11.8.0-5~deb12u1": a package owns the toolkit


def cudnn_facts(f: Facts, cuda_home: str) -> CudnnFacts:
    """The facts the plan needs, from the probe's sections (views: nothing indexed here)."""
    priv, tk, at = views.privilege(f), views.toolkit_at(f, cuda_home), views.path_at(f, cuda_home)
    owner = views.owner_at(f, cuda_home)
    return CudnnFacts(priv.uid if priv.uid is not None else -1, priv.mode, (at.real if at else None) or cuda_home,
                      tk.file_version if tk else None, tk.cudnn if tk else None,
                      views.manifest_at(f, cuda_home) or [], views.pip_cudnn(f),
                      owner.describe() if owner else None)


@dataclass
class CudnnPlan:
    host: str
    problems: List[str] = field(default_factory=list)
    in_place: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    upload: Optional[str] = None          # node path to upload the archive to
    command: Optional[str] = None
    text: List[str] = field(default_factory=list)
    priv: Optional[Privilege] = None


def plan_cudnn(host: str, f: CudnnFacts, info: Optional[ArchiveInfo], *, tmpdir: str = "/var/tmp",
               remove: bool = False, force: bool = False, use_sudo: bool = False) -> CudnnPlan:
    p = CudnnPlan(host)
    ch = f.cuda_home
    if f.priv == "root" or (use_sudo and f.priv.startswith("sudo")):
        p.priv = Privilege(f.priv)
    else:
        p.problems.append(f"writing into {ch} needs root and this login is not root (fix: pass --sudo, or log in as root)")
    files = [m for m in f.manifest if not m.startswith("#")]
    if remove:
        if not f.manifest:
            p.problems.clear()
            p.in_place.append(f"no envcheck cuDNN manifest in {ch}: nothing to remove")
            return p
        p.text.append(f"remove the {len(files)} files listed in {ch}/{MANIFEST}, put back what they replaced, ldconfig if {ch}/lib64 is in the loader config")
        p.command = remove_script(ch)
        return p
    assert info is not None
    if f.packaged:
        # its directories (/usr/include, /usr/lib/<arch>) belong to the package manager: files
        # copied there would be overwritten or orphaned by the next upgrade, unknown to dpkg/rpm
        p.problems.append(f"{ch} is a distribution's CUDA toolkit (package {f.packaged}); envcheck does not copy "
                          f"cuDNN into the system's directories (fix: install cuDNN with the distribution's "
                          f"package manager or pip (nvidia-cudnn-cu{info.cuda_major}, which torch wheels use), or "
                          f"install a toolkit of its own with `envcheck install-cuda` and pass its --cuda-home)")
        return p
    if not f.toolkit:
        p.problems.append(f"no CUDA toolkit at {ch} (no CUDA version file) (fix: install-cuda first, or pass --cuda-home)")
    elif vkey(f.toolkit)[0] != info.cuda_major:
        p.problems.append(f"{info.name} is built for CUDA {info.cuda}, but {ch} is CUDA {f.toolkit} (majors differ; "
                          f"libraries would fail to load) (fix: use the cuDNN {info.short_version} archive for CUDA {vkey(f.toolkit)[0]})")
    if f.cudnn and f.cudnn == info.short_version and f.manifest and info.name in f.manifest[0]:
        p.problems.clear()
        p.in_place.append(f"cuDNN {f.cudnn} in {ch} (from {info.name}, manifest {ch}/{MANIFEST})")
        return p
    if f.cudnn and not f.manifest and not force:
        p.problems.append(f"{ch} already holds cuDNN {f.cudnn} not installed by envcheck (fix: pass --force; the files it "
                          f"replaces are kept in {ch}/{BACKUP} and put back by --remove)")
    if f.cudnn and f.manifest:
        p.notes.append(f"replacing cuDNN {f.cudnn} (installed by envcheck) with {info.short_version}")
    for g in f.pip_cudnn:
        p.notes.append(f"warning: a pip cuDNN is installed ({g}); with {ch}/lib64 on LD_LIBRARY_PATH this cuDNN "
                       f"{info.short_version} is loaded first and shadows it for torch (fix: keep {ch}/lib64 off "
                       "LD_LIBRARY_PATH for torch jobs, or use matching versions)")
    # the run's own staging directory (staging.py): no other run or host shares it
    node_a = f"{staging.SENTINEL}/{info.name}"
    p.upload = node_a
    p.text.append(f"upload {info.path} to {staging.shown(node_a, tmpdir, host)}")
    p.text.append(f"extract, copy {info.include}/* -> {ch}/include and {info.lib}/* -> {ch}/lib64 with cp -P "
                  f"(symlinks kept), chmod a+r, write {ch}/{MANIFEST}, check the installed header says {info.short_version}")
    p.command = install_script(info, ch, node_a, staging.SENTINEL)
    return p


def install_script(info: ArchiveInfo, ch: str, archive: str, tmpdir: str) -> str:
    return f"""
set -u; umask 022
CH={q(ch)}; A={q(archive)}; M="$CH/{MANIFEST}"; B="$CH/{BACKUP}"; WANT={q(info.short_version)}
got=$(sha256sum < "$A" | cut -d' ' -f1); [ "$got" = {q(info.sha256)} ] || {{ echo "envcheck-failed: $A changed on the node (sha256 $got)"; exit 1; }}
W=$(mktemp -d {q(tmpdir.rstrip('/') + '/envcheck-cudnn.XXXXXX')}) || exit 1
NEW="$W/manifest"; DONE="$W/done"; : > "$DONE"
fail() {{
  echo "envcheck-failed: $1"
  # undo: remove what we copied, put back what it replaced
  while read -r rel; do
    rm -f "$CH/$rel"
    if [ -e "$W/prev/$rel" ] || [ -L "$W/prev/$rel" ]; then mv -f "$W/prev/$rel" "$CH/$rel"; fi
  done < "$DONE"
  rm -rf "$W"; exit 1
}}
tar -xf "$A" -C "$W" || fail "cannot extract $A"
mkdir -p "$CH/include" "$CH/lib64" || fail "cannot create $CH/include or $CH/lib64"
echo "# envcheck cudnn $WANT from {info.name} sha256 {info.sha256}" > "$NEW"
for pair in "include:$W/{info.include}" "lib64:$W/{info.lib}"; do
  dst=${{pair%%:*}}; src=${{pair#*:}}
  for s in "$src"/* ; do
    [ -e "$s" ] || [ -L "$s" ] || continue
    rel="$dst/$(basename "$s")"
    if [ -e "$CH/$rel" ] || [ -L "$CH/$rel" ]; then
      # $W/prev: undo of this run; $B: files not ours, put back by --remove
      mkdir -p "$W/prev/$dst" && cp -P -p "$CH/$rel" "$W/prev/$rel" || fail "cannot back up $CH/$rel"
      if ! grep -qxF "$rel" "$M" 2>/dev/null && [ ! -e "$B/$rel" ] && [ ! -L "$B/$rel" ]; then
        mkdir -p "$B/$dst" && cp -P -p "$CH/$rel" "$B/$rel" || fail "cannot back up $CH/$rel"
      fi
    fi
    rm -f "$CH/$rel" && cp -P "$s" "$CH/$rel" || fail "cannot copy $rel"
    echo "$rel" >> "$DONE"; echo "$rel" >> "$NEW"
    [ -L "$CH/$rel" ] || chmod a+r "$CH/$rel"
  done
done
h="$CH/include/cudnn_version.h"; [ -f "$h" ] || h="$CH/include/cudnn.h"
have=$(awk '/define CUDNN_MAJOR/{{a=$3}} /define CUDNN_MINOR/{{b=$3}} /define CUDNN_PATCHLEVEL/{{c=$3}} END{{print a"."b"."c}}' "$h" 2>/dev/null)
[ "$have" = "$WANT" ] || fail "installed header says cuDNN $have, expected $WANT"
# files of a previous envcheck cuDNN that the new one does not have
[ -f "$M" ] && grep -v '^#' "$M" | while read -r rel; do grep -qxF "$rel" "$NEW" || rm -f "$CH/$rel"; done
cp "$NEW" "$M.tmp" && chmod 644 "$M.tmp" && mv -f "$M.tmp" "$M" || fail "cannot write $M"
if grep -rqsF "$CH/lib64" /etc/ld.so.conf /etc/ld.so.conf.d/ || grep -rqsF "$(readlink -f "$CH")/lib64" /etc/ld.so.conf /etc/ld.so.conf.d/; then
  ldconfig && echo "envcheck-ldconfig: ran ldconfig ($CH/lib64 is in the loader config)"
fi
rm -rf "$W"
echo "envcheck-installed: cuDNN $have into $CH ($(grep -vc '^#' "$M") files, manifest $M)"
"""


def remove_script(ch: str) -> str:
    return f"""
set -u
CH={q(ch)}; M="$CH/{MANIFEST}"; B="$CH/{BACKUP}"
n=0
grep -v '^#' "$M" | while read -r rel; do
  # only what install wrote: one file name right under include/ or lib64/, never a path that
  # a tampered manifest could point outside the toolkit with
  case "$rel" in include/*/*|lib64/*/*|*..*) echo "envcheck-skipped: manifest line $rel (not a file install-cudnn writes; left alone)"; continue ;; include/?*|lib64/?*) ;; *) echo "envcheck-skipped: manifest line $rel (not a file install-cudnn writes; left alone)"; continue ;; esac
  rm -f "$CH/$rel"
  if [ -e "$B/$rel" ] || [ -L "$B/$rel" ]; then mv -f "$B/$rel" "$CH/$rel"; fi
done
n=$(grep -vc '^#' "$M"); rm -f "$M"; rm -rf "$B"
if grep -rqsF "$CH/lib64" /etc/ld.so.conf /etc/ld.so.conf.d/; then ldconfig; fi
echo "envcheck-removed: $n files listed in $M"
"""


def cudnn_node(remote: Remote, info: Optional[ArchiveInfo], cuda_home: str, *, tmpdir: str = "/var/tmp",
               remove: bool = False, force: bool = False, dry_run: bool = False, use_sudo: bool = False,
               password: Optional[Callable[[], str]] = None, timeout: float = 3600.0,
               fact_timeout: float = 120.0) -> NodeOutcome:
    """timeout: the copy (--install-timeout); fact_timeout: the fact command (--command-timeout)."""
    out = NodeOutcome(remote.name)
    read = read_node(remote, probe_request(cuda_home), fact_timeout)
    if read.facts is None:
        return out.fail("unreachable" if read.unreachable else "failed", f"facts: {read.error}")
    f = cudnn_facts(read.facts, cuda_home)
    p = plan_cudnn(remote.name, f, info, tmpdir=tmpdir, remove=remove, force=force, use_sudo=use_sudo)
    out.lines = [f"already in place: {x}" for x in p.in_place] + p.notes
    out.problems = p.problems
    if p.problems:
        return out.fail("refused", f"{len(p.problems)} problem(s); nothing was changed")
    if p.command is None:
        out.lines.append("nothing to do")
        return out
    if dry_run:
        out.status = "would-change"
        out.lines += [f"would {t}" for t in p.text]
        out.commands = [staging.shown(p.command, tmpdir, remote.name)]
        return out
    priv = privilege_from_fact(p.priv.mode, True, password)
    if not p.upload:
        return _finish(out, run_priv(remote, p.command, priv, timeout=timeout))
    r = remote.run(staging.open_command(tmpdir, remote.name), timeout=30)
    stage = staging.parse_open(r.stdout, tmpdir) if r.ok else None
    if not stage:
        return out.fail("failed", f"cannot create a private staging directory in {tmpdir}: {r.error or r.tail(2)}")
    try:
        dest = staging.bind(p.upload, stage)
        remote.put(info.path, dest)
        out.bytes_uploaded = os.path.getsize(info.path)
        out.lines.append(f"uploaded {out.bytes_uploaded} bytes to {dest}")
        return _finish(out, run_priv(remote, staging.bind(p.command, stage), priv, timeout=timeout))
    finally:
        run_priv(remote, staging.close_command(stage), priv, timeout=120)


def _finish(out: NodeOutcome, r) -> NodeOutcome:
    text = r.stdout + r.stderr
    if not r.ok:
        m = re.search(r"envcheck-failed: (.*)", text)
        return out.fail("failed", (m.group(1) if m else (r.error or r.tail(4))) + "; the toolkit was left as it was")
    out.lines += [m.group(2) for m in re.finditer(r"envcheck-(installed|removed|ldconfig|skipped): (.*)", text)]
    out.status = "changed"
    return out


def install_cudnn(remotes: Sequence[Remote], info: Optional[ArchiveInfo], cuda_home: str, *, forks: int = 32,
                  **kw) -> List[NodeOutcome]:
    return fan_out(list(remotes), lambda r: cudnn_node(r, info, cuda_home, **kw), forks=forks).values_or(
        lambda r, e: NodeOutcome(r.name).fail("failed", str(e)))
