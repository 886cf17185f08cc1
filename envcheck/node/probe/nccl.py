# envcheck probe, part nccl: NCCL: the version torch loads (--deep), else libnccl, else the wheel
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import section
from ldconfig import ldconfig_argv, ldconfig_libs, lib_version


@section("nccl", needs=("packages",), starts=ldconfig_argv)
def collect_nccl_section(facts):
    return collect_nccl(facts.get("deep"), ldconfig_libs(), facts["packages"] or {})


def collect_nccl(deep, ldconfig_libs, packages):
    if deep and deep.get("nccl"):
        return {"version": deep["nccl"], "source": "torch"}
    for lib in ldconfig_libs:
        if re.match(r"^libnccl\.so(\.\d+)*$", lib["name"]):
            v = lib_version(os.path.realpath(lib["path"]), "libnccl")
            if v and v.count(".") >= 2:
                return {"version": v, "source": "libnccl", "path": lib["path"]}
    for name in sorted(packages):
        if name.startswith("nvidia-nccl-cu"):
            return {"version": packages[name]["version"], "source": "wheel"}
    return {"version": None, "source": None}


def nccl_code_to_version(code):
    """NCCL_VERSION_CODE: 2708 -> 2.7.8 (before 2.9), 21903 -> 2.19.3 (2.9 and later)."""
    code = int(code)
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)
