"""What install-cuda learns about a node (one command: cuda_script.facts_script) and what it
tells the user about it that the plan itself does not: where the toolkit link points today and
which nvcc a non-interactive shell finds first, before and after."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional


@dataclass
class CudaFacts:
    uid: int
    priv: str
    machine: str
    tmp_free: int
    target_free: int
    target_exists: bool
    version_txt: Optional[str]
    version_json: Optional[str]
    nvcc: Optional[str]
    link: Optional[str]             # what /usr/local/cuda points at
    link_kind: str                  # symlink | notlink | absent
    gcc: Optional[str]
    gpus: List[str]                 # "name, cc"
    installer_log_uid: Optional[int]
    varlog_writable: bool
    fetchers: List[str]
    path_nvcc: Optional[str] = None          # the nvcc first on a non-interactive PATH, if any
    path_nvcc_release: Optional[str] = None  # what it says: "release 11.8"


def parse_facts(stdout: str) -> CudaFacts:
    kv: Dict[str, List[str]] = {}
    for line in stdout.splitlines():
        k, sep, v = line.partition("=")
        if sep and re.fullmatch(r"[a-z_0-9]+", k):
            kv.setdefault(k, []).append(v.strip())
    if "end" not in kv:
        raise ValueError("the facts command did not finish: " + stdout[-200:])

    def one(k: str) -> Optional[str]:
        return kv[k][0] if k in kv and kv[k][0] != "" else None

    def num(k: str) -> int:
        try:
            return int(one(k) or 0)
        except ValueError:
            return 0
    link = one("link")
    return CudaFacts(
        uid=num("uid"), priv=one("priv") or "none", machine=one("machine") or "?",
        tmp_free=num("tmp_free_kb") * 1024, target_free=num("target_free_kb") * 1024, target_exists=one("target_exists") == "1",
        version_txt=one("version_txt"), version_json=one("version_json"), nvcc=one("nvcc"),
        link=link, link_kind="symlink" if link else (one("link_kind") or "absent"), gcc=one("gcc"),
        gpus=kv.get("gpu", []), installer_log_uid=int(one("installer_log_uid")) if one("installer_log_uid") else None,
        varlog_writable=one("varlog_writable") == "1",
        fetchers=kv.get("fetch", []), path_nvcc=one("path_nvcc"), path_nvcc_release=one("path_nvcc_release"))


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
