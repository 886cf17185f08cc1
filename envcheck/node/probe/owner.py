# envcheck probe, part owner: which distribution package owns the toolkit at each --path (dpkg, else rpm)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from base import Settings, section
from run import run, which

# the files that say whose a toolkit is: a runfile's tree owns them itself; Debian's
# nvidia-cuda-toolkit (or a distribution's cuda-* packages) own them through the package manager
OWNED_FILES = (os.path.join("bin", "nvcc"), os.path.join("include", "cuda.h"))


@section("owner", default=[])
def collect_owner(facts=None):
    """[{"path": toolkit, "file": the file asked about, "package", "version"}] for each --path:
    the first of its bin/nvcc and include/cuda.h (links resolved) that a package owns; package
    None when none does (or neither dpkg nor rpm is there)."""
    return [toolkit_owner(p) for p in Settings.paths]


def toolkit_owner(path):
    out = {"path": path, "file": None, "package": None, "version": None}
    for name in OWNED_FILES:
        f = os.path.join(path, name)
        if not os.path.exists(f):
            continue
        real = os.path.realpath(f)
        pkg, version = package_of(real)
        if pkg:
            out.update(file=real, package=pkg, version=version)
            break
    return out


def package_of(path):
    """(package, version) owning : dpkg -S (with dpkg-query -W for its version), else
    rpm -qf; (None, None) when no package manager claims it."""
    dq = which("dpkg-query", ["/usr/bin", "/bin"])
    res = run([dq, "-S", path]) if dq else None
    if res and res[0] == 0 and res[1].strip():
        pkg = res[1].splitlines()[0].split(":")[0].strip()
        ver = run([dq, "-W", "-f=${Version}", pkg])
        return pkg, (ver[1].strip() or None) if ver and ver[0] == 0 else None
    rpm = which("rpm", ["/usr/bin", "/bin"])
    res = run([rpm, "-qf", path]) if rpm else None
    if res and res[0] == 0 and res[1].strip():
        return res[1].splitlines()[0].strip(), None
    return None, None
