"""Validation of the matrix's `cuda:` section: toolkit families, runfile installer generations
and every release (driver minimums, runfile name and URL, gcc limits, checksums with sources);
called by envcheck/matrix/schema.py with its checker, which reports the first problem with its
key path."""
from __future__ import annotations

from typing import Any, Dict, List, Set, Tuple

from envcheck.matrix.schema_hw import check_min_driver_elsewhere
from envcheck.versions import vkey
from envcheck.params.text import excerpt

_FAMILY_KEYS = ["major", "min_driver", "minor_version_compat", "disk_gb", "source"]
_FAMILY_OPT = ["disk_source", "min_driver_elsewhere", "unconfirmed", "note"]
_INSTALLER_KEYS = ["first", "last", "runs", "log", "version_file", "uninstall", "flags", "toolkit_only", "source"]
_RELEASE_KEYS = ["version", "label", "min_driver", "installer", "runfile", "url", "gcc_max", "source", "gcc_source"]
_RELEASE_OPT = ["bundled_driver", "min_driver_elsewhere", "runfile_bytes", "sha256", "md5", "sha256_source",
                "md5_source", "gcc_broken", "unconfirmed", "note"]


def check_cuda(c: Any, cuda: Any) -> Tuple[Set[str], Set[int]]:
    """The CUDA minor versions ("12.4") and majors the matrix knows, for the torch checks."""
    c.mapping(cuda, "cuda", ["families", "installers", "releases"])
    majors = _families(c, cuda["families"])
    installers = _installers(c, cuda["installers"])
    versions: List[str] = []
    for i, rel in enumerate(c.seq(cuda["releases"], "cuda.releases", True)):
        versions.append(_release(c, f"cuda.releases[{i}]", rel, majors, installers, versions))
    c.ascending(versions, "cuda.releases")
    minors = {".".join(v.split(".")[:2]) for v in versions}
    return minors, majors


def _families(c: Any, families: Any) -> Set[int]:
    majors: Set[int] = set()
    for i, fam in enumerate(c.seq(families, "cuda.families", True)):
        p = f"cuda.families[{i}]"
        c.mapping(fam, p, _FAMILY_KEYS, _FAMILY_OPT)
        m = c.integer(fam["major"], f"{p}.major")
        if m in majors:
            c.fail(f"{p}.major", f"duplicate family {m}")
        majors.add(m)  # type: ignore[arg-type]
        c.boolean(fam["minor_version_compat"], f"{p}.minor_version_compat")
        c.version(fam["min_driver"], f"{p}.min_driver", nullable=not fam["minor_version_compat"])
        d = c.mapping(fam["disk_gb"], f"{p}.disk_gb", ["prefix", "tmpdir"])
        c.integer(d["prefix"], f"{p}.disk_gb.prefix")
        c.integer(d["tmpdir"], f"{p}.disk_gb.tmpdir")
        c.url(fam["source"], f"{p}.source")
        if "disk_source" in fam:
            c.url(fam["disk_source"], f"{p}.disk_source")
        check_min_driver_elsewhere(c, fam, p)
        c.unconfirmed(fam, p, _FAMILY_KEYS + _FAMILY_OPT)

    return majors


def _installers(c: Any, raw: Any) -> Dict[str, Any]:
    installers = c.mapping(raw, "cuda.installers", [], list(raw or {}))
    for name, inst in installers.items():
        p = f"cuda.installers.{name}"
        c.mapping(inst, p, _INSTALLER_KEYS, ["unconfirmed", "note"])
        c.version(inst["first"], f"{p}.first")
        c.version(inst["last"], f"{p}.last", nullable=True)
        for key in ("flags", "toolkit_only"):
            for j, flag in enumerate(c.strings(inst[key], f"{p}.{key}", True)):
                if not flag.startswith("--"):
                    c.fail(f"{p}.{key}[{j}]", f"flag {excerpt(flag)} must start with --")
        c.url(inst["source"], f"{p}.source")
        c.unconfirmed(inst, p, _INSTALLER_KEYS)

    return installers


def _release(c: Any, p: str, rel: Any, majors: Set[int], installers: Dict[str, Any],
             versions: List[str]) -> str:
    """One release entry; `versions` are those before it (no duplicates)."""
    c.mapping(rel, p, _RELEASE_KEYS, _RELEASE_OPT)
    v = c.version(rel["version"], f"{p}.version", fields=(3,))
    if v in versions:
        c.fail(f"{p}.version", f"duplicate release {v}")
    c.string(rel["label"], f"{p}.label")
    c.version(rel["min_driver"], f"{p}.min_driver", fields=(2, 3))
    c.version(rel.get("bundled_driver"), f"{p}.bundled_driver", fields=(2, 3), nullable=True)
    check_min_driver_elsewhere(c, rel, p)
    if int(v.split(".")[0]) not in majors:  # type: ignore[union-attr]
        c.fail(f"{p}.version", f"CUDA {v} has no entry in cuda.families")
    inst = rel["installer"]
    if inst not in installers:
        c.fail(f"{p}.installer", f"unknown installer {excerpt(inst)} (known: {', '.join(installers)})")
    first, last = installers[inst]["first"], installers[inst]["last"]
    mm = vkey(v)[:2]  # type: ignore[arg-type]
    if mm < vkey(first)[:2] or (last is not None and mm > vkey(last)[:2]):
        c.fail(f"{p}.installer", f"CUDA {v} is outside the {inst} installer's range {first} - {last or 'newest'}")
    runfile = c.string(rel["runfile"], f"{p}.runfile")
    if not runfile.startswith(f"cuda_{v}_"):
        c.fail(f"{p}.runfile", f"{excerpt(runfile)} does not name CUDA {v} (expected cuda_{v}_…)")
    if not c.url(rel["url"], f"{p}.url").endswith("/" + runfile):
        c.fail(f"{p}.url", f"does not end with the runfile name {excerpt(runfile)}")
    c.integer(rel["gcc_max"], f"{p}.gcc_max")
    for j, bad in enumerate(c.seq(rel.get("gcc_broken", []), f"{p}.gcc_broken")):
        bp = f"{p}.gcc_broken[{j}]"
        c.mapping(bad, bp, ["gcc", "error", "source"], ["unconfirmed"])
        if c.integer(bad["gcc"], f"{bp}.gcc") > rel["gcc_max"]:  # type: ignore[operator]
            c.fail(f"{bp}.gcc", f"gcc {bad['gcc']} is above gcc_max {rel['gcc_max']}: nvcc refuses it anyway")
        c.string(bad["error"], f"{bp}.error")
        c.url(bad["source"], f"{bp}.source")
        c.unconfirmed(bad, bp, ["gcc", "error"])
    if "runfile_bytes" in rel:
        c.integer(rel["runfile_bytes"], f"{p}.runfile_bytes")
    for algo, length in (("sha256", 64), ("md5", 32)):
        if algo in rel:
            c.checksum(rel[algo], f"{p}.{algo}", length, algo)
            if f"{algo}_source" not in rel:
                c.fail(f"{p}.{algo}_source", f"missing (every {algo} needs the URL it comes from)")
        elif f"{algo}_source" in rel:
            c.fail(f"{p}.{algo}_source", f"given without {algo}")
    for key in ("source", "gcc_source", "sha256_source", "md5_source"):
        if key in rel:
            c.url(rel[key], f"{p}.{key}")
    c.unconfirmed(rel, p, _RELEASE_KEYS + _RELEASE_OPT)
    return v  # type: ignore[return-value]
