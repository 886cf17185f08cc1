# envcheck probe, part cuda: CUDA toolkits: every one installed, which is in use, and the CUDA_HOME torch derives
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import json
import os
import re
from base import ERRORS, Settings, section
from cuda_distro import DISTRO_NVCC, installed_distro_root, toolkit_layout
from cudnn import header_version
from nvcc import nvcc_host_compiler, parse_nvcc
from run import ls, read, run, which


def toolkit_version(path):
    for name, parser in (("version.json", parse_version_json), ("version.txt", parse_version_txt)):
        text = read(os.path.join(path, name))
        if text is not None:
            v = parser(text)
            if v:
                return v, name, text.strip()[:2000]
            ERRORS.append("%s/%s: unreadable version (raw kept)" % (path, name))
    nvcc = os.path.join(path, "bin", "nvcc")
    res = run([nvcc, "-V"]) if os.access(nvcc, os.X_OK) else None
    parsed = parse_nvcc(res[1]) if res else None
    if parsed:
        return parsed["version"], "nvcc", res[1].strip()[:2000]
    v = parse_cuda_h(read(os.path.join(path, "include", "cuda.h"), 1 << 16))
    if v:
        return v, "cuda.h", None
    return None, None, (res[1] + res[2]).strip()[:2000] if res else None


def version_file(path):
    """{"name", "version"} of the toolkit's version file, the version as the file writes it
    (a date-stamped 12.1.20230222 kept whole), or None when there is none."""
    for name in ("version.json", "version.txt"):
        text = read(os.path.join(path, name), 1 << 16)
        if text is None:
            continue
        if name == "version.txt":
            return {"name": name, "version": parse_version_txt(text)}
        try:
            return {"name": name, "version": str(json.loads(text)["cuda"]["version"])}
        except Exception:  # not JSON, or no cuda.version in it: the file is there, unreadable
            return {"name": name, "version": None}
    return None


def toolkit_at(path):
    """What is at `path` as a CUDA toolkit: the version the audit reads, what its version file
    and its own bin/nvcc say (an installer checks that both agree), and the cuDNN its headers
    say (install-cudnn's target)."""
    out = {"path": path, "exists": os.path.isdir(path), "version": None, "source": None,
           "version_file": None, "nvcc": None, "cudnn": None}
    if not out["exists"]:
        return out
    out["version"], out["source"], _ = toolkit_version(path)
    out["version_file"] = version_file(path)
    out["cudnn"] = header_version(os.path.join(path, "include"))
    nvcc = os.path.join(path, "bin", "nvcc")
    res = run([nvcc, "-V"]) if os.access(nvcc, os.X_OK) else None
    out["nvcc"] = parse_nvcc(res[1]) if res and res[0] == 0 else None
    return out


@section("toolkit", default=[])
def collect_toolkit(facts=None):
    """The toolkit at each --path (install-cuda's target, install-cudnn's and env's CUDA home)."""
    return [toolkit_at(p) for p in Settings.paths]


def looks_like_toolkit(path):
    return any(os.path.exists(os.path.join(path, f))
               for f in ("version.json", "version.txt", os.path.join("include", "cuda.h")))


@section("cuda", default={})
def collect_cuda(facts=None):
    link = "/usr/local/cuda"
    target = os.path.realpath(link) if os.path.islink(link) or os.path.isdir(link) else None
    nvcc_path = which("nvcc")
    nvcc = {"path": nvcc_path, "version": None}
    if nvcc_path:
        res = run([nvcc_path, "-V"])
        parsed = parse_nvcc(res[1]) if res else None
        if parsed:
            nvcc.update(parsed)
            nvcc["host_compiler"] = nvcc_host_compiler(nvcc_path)
        elif res:
            nvcc["raw"] = (res[1] + res[2]).strip()[:2000]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    nvcc_home = None
    if nvcc_path:
        real_bin = os.path.dirname(os.path.realpath(nvcc_path))
        if os.path.basename(real_bin) == "bin" and looks_like_toolkit(os.path.dirname(real_bin)):
            nvcc_home = os.path.dirname(real_bin)
    candidates = sorted(p for p in ls("/usr/local", r"^cuda-") if os.path.isdir(p))
    candidates += [p for p in (target, home, nvcc_home, installed_distro_root()) if p and os.path.isdir(p)]
    toolkits, seen = [], set()
    for path in candidates:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        version, source, raw = toolkit_version(real)
        toolkits.append({"path": real, "version": version, "source": source, "raw": raw})
        toolkits[-1].update(toolkit_layout(real))
        if real == installed_distro_root() and real != nvcc_home:
            # not the nvcc in use: the compiler its own nvcc.profile would pick, for the fixes
            toolkits[-1]["host_compiler"] = nvcc_host_compiler(DISTRO_NVCC)
    by_path = dict((t["path"], t) for t in toolkits)
    in_use, via = None, None
    for path, how in ((nvcc_home, "PATH"), (home, "CUDA_HOME"), (target, "/usr/local/cuda")):
        if path and os.path.realpath(path) in by_path:
            in_use, via = by_path[os.path.realpath(path)], how
            break
    version = in_use["version"] if in_use else None
    if nvcc["version"] and (via != "PATH"):
        version, via = nvcc["version"], "PATH"  # an nvcc outside any toolkit tree still rules
        in_use = None
    return {"toolkits": toolkits, "symlink": {"path": link, "target": target}, "nvcc": nvcc,
            "version": version, "in_use": {"path": in_use["path"] if in_use else None, "via": via},
            "torch_cuda_home": torch_cuda_home()}


def torch_cuda_home():
    """CUDA_HOME as torch.utils.cpp_extension derives it (CUDA_HOME, else CUDA_PATH, else the
    parent of the directory of `which nvcc`, unresolved, else /usr/local/cuda if it exists):
    {"path", "via"}. With Debian's nvcc first on PATH that is /usr."""
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(name):
            return {"path": os.environ[name], "via": name}
    nvcc = which("nvcc")
    if nvcc:
        return {"path": os.path.dirname(os.path.dirname(nvcc)), "via": "nvcc on PATH"}
    if os.path.exists("/usr/local/cuda"):
        return {"path": "/usr/local/cuda", "via": "/usr/local/cuda"}
    return {"path": None, "via": None}


def parse_version_txt(text):
    """CUDA <= 11.0 version.txt: 'CUDA Version 10.0.130' -> '10.0.130'."""
    m = re.search(r"CUDA Version\s+(\d+(?:\.\d+)+)", text or "")
    return m.group(1) if m else None


def parse_version_json(text):
    """CUDA >= 11.1 version.json -> cuda.version; a date stamp in the third field
    ('12.1.20230222') is no update number, so it is dropped ('12.1')."""
    try:
        data = json.loads(text or "")
        version = str(data["cuda"]["version"])
    except Exception:  # not JSON, nested too deep, or no cuda.version in it
        return None
    if not re.match(r"^\d{1,9}(\.\d{1,9})+$", version):
        return None
    parts = version.split(".")
    if len(parts) > 2 and int(parts[2]) >= 1000:
        parts = parts[:2]
    return ".".join(parts)


def parse_cuda_h(text):
    """include/cuda.h '#define CUDA_VERSION 12040' -> '12.4'."""
    m = re.search(r"#define\s+CUDA_VERSION\s+(\d{4,6})\b", text or "")
    if not m:
        return None
    v = int(m.group(1))
    return "%d.%d" % (v // 1000, (v % 1000) // 10)
