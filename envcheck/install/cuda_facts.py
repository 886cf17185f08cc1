"""What install-cuda knows about a node before it plans: its arguments, and the facts the probe's
sections give (probe_request: one command per node, as the login user), read through the views.
"""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import List, Optional

from envcheck.errors import VersionError
from envcheck.facts import schema as F
from envcheck.facts import views
from envcheck.facts.schema import Facts
from envcheck.install.common import ProbeRequest, read_node
from envcheck.install.cuda_spec import ToolkitSpec
from envcheck.remote import Remote
from envcheck.versions import compare, major_minor, vkey


@dataclass
class InstallArgs:
    prefix: str = "/usr/local"
    tmpdir: str = "/var/tmp"                  # where each run makes its staging dir: a disk, not tmpfs /tmp
    runfile: Optional[str] = None             # local path, uploaded
    runfile_sha256: Optional[str] = None      # of the local runfile (computed once on the controller)
    url: Optional[str] = None                 # the node fetches it
    expect_sha256: Optional[str] = None       # matrix or --sha256; None with --no-checksum
    expect_md5: Optional[str] = None          # NVIDIA's published md5, used when no sha256 is known
    symlink: bool = True
    force: bool = False
    override: bool = False
    use_sudo: bool = False
    timeout: float = 60.0
    install_timeout: float = 3600.0

    def target(self, spec: ToolkitSpec) -> str:
        return f"{self.prefix.rstrip('/')}/cuda-{spec.short}"

    def link(self) -> str:
        return f"{self.prefix.rstrip('/')}/cuda"

    def runfile_name(self, spec: ToolkitSpec) -> str:
        if self.runfile:
            return os.path.basename(self.runfile)
        if self.url:
            return self.url.rstrip("/").rsplit("/", 1)[-1] or spec.runfile
        return spec.runfile


LOG = "/tmp/cuda-installer.log"   # the new installer's scratch log: it crashes on one it cannot write
VARLOG = "/var/log"               # where the new installer writes its own log


@dataclass
class CudaFacts:
    uid: Optional[int]
    priv: str
    machine: str
    tmp_free: int
    target_free: int
    target_exists: bool
    file_version: Optional[str]     # what the target's version file says (12.4.1, 12.4.20240405, 10.0.130)
    nvcc: Optional[str]             # "release 12.4": what the target's own bin/nvcc -V says
    link: Optional[str]             # what /usr/local/cuda points at
    link_kind: str                  # symlink | notlink | absent
    gcc: Optional[str]
    gpus: List[str]                 # "name, cc" (a bare name when the driver gave no cc)
    installer_log_uid: Optional[int]
    varlog_writable: bool
    fetchers: List[str]
    path_nvcc: Optional[str] = None          # the nvcc first on a non-interactive PATH, if any
    path_nvcc_release: Optional[str] = None  # what it says: "release 11.8"


def probe_request(spec: ToolkitSpec, args: InstallArgs) -> ProbeRequest:
    """What install-cuda reads on a node: privilege, the machine, the GPUs and gcc, curl/wget,
    and per place: the target and the symlink (what is there), the prefix and the staging
    directory (free space), the installer's logs (owner, writable)."""
    target = args.target(spec)
    paths = (target, posixpath.dirname(target), args.link(), args.tmpdir.rstrip("/") or "/", LOG, VARLOG)
    return ProbeRequest(("privilege", "host", "gpus", "gcc", "tools", "disk", "toolkit", "cuda"), paths)


def cuda_facts(f: Facts, spec: ToolkitSpec, args: InstallArgs) -> CudaFacts:
    """The facts the plan needs, from the probe's sections (views: nothing indexed here)."""
    target = args.target(spec)

    def at(path: str) -> views.PathAt:
        return views.path_at(f, path) or views.PathAt(path, None, None, None, False, None)
    tk = views.toolkit_at(f, target)
    link, log = at(args.link()), at(LOG)
    return CudaFacts(
        uid=views.privilege(f).uid, priv=views.privilege(f).mode, machine=views.arch(f) or "?",
        tmp_free=at(args.tmpdir.rstrip("/") or "/").free_bytes or 0,
        target_free=at(posixpath.dirname(target)).free_bytes or 0, target_exists=at(target).kind is not None,
        file_version=tk.file_version if tk else None,
        nvcc=f"release {tk.nvcc_release}" if tk and tk.nvcc_release else None,
        link=link.link if link.kind == "link" else None,
        link_kind={"link": "symlink", None: "absent"}.get(link.kind, "notlink"), gcc=F.gcc_version(f),
        gpus=[f"{name}, {cc}" if cc else name for name, cc in views.gpu_models(f)],
        installer_log_uid=log.uid if log.kind is not None else None, varlog_writable=at(VARLOG).writable,
        fetchers=[name for name, path in sorted(views.tools(f).items()) if path],
        path_nvcc=F.nvcc(f).get("path"),
        path_nvcc_release=f"release {F.nvcc(f)['release']}" if F.nvcc(f).get("release") else None)


def installed_version(f: CudaFacts) -> Optional[str]:
    """The toolkit version at the target, from its version file (None if none)."""
    return f.file_version


def matches(f: CudaFacts, spec: ToolkitSpec) -> bool:
    """The target holds exactly spec.version: the version file and nvcc both agree."""
    have = installed_version(f)
    if not have or not f.nvcc or f.nvcc != f"release {spec.short}":
        return False
    try:
        if compare(have, spec.version) == 0:
            return True
        k = vkey(have)  # date-stamped version.json (X.Y.YYYYMMDD): only major.minor is comparable
    except VersionError:
        return False
    return len(k) >= 3 and k[2] >= 1000 and major_minor(have) == spec.short


def gather(remote: Remote, spec: ToolkitSpec, args: InstallArgs) -> CudaFacts:
    """The probe, once, as the login user: it also tells whether we are root or have sudo."""
    read = read_node(remote, probe_request(spec, args), args.timeout)
    if read.facts is None:
        raise RuntimeError(read.error)
    return cuda_facts(read.facts, spec, args)


def what_changes_for_users(f: CudaFacts, target: str, link: Optional[str]) -> List[str]:
    """What the install replaces and what it does not: where the link points today, and which
    nvcc a non-interactive shell finds first (the install puts nothing on PATH)."""
    out = []
    if link:
        now = {"symlink": f"points to {f.link}", "notlink": "is a real directory", "absent": "does not exist"}[f.link_kind]
        out.append(f"today {link} {now}" + ("" if f.link_kind == "symlink" and (f.link or "").rstrip("/") == target
                                            else f"; the install points it to {target}"))
    if f.path_nvcc and not f.path_nvcc.startswith(target.rstrip("/") + "/"):
        out.append(f"{f.path_nvcc} ({f.path_nvcc_release or 'version unknown'}) is the nvcc first on PATH in a "
                   f"non-interactive shell, and stays first after the install: put {target}/bin before it "
                   f"(envcheck env … --cuda-home {target})")
    elif not f.path_nvcc:
        out.append(f"no nvcc on PATH in a non-interactive shell; after the install, none either until "
                   f"{target}/bin is put there (envcheck env … --cuda-home {target})")
    return out
