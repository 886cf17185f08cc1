"""Validation of the matrix's torch facts beyond releases and arch sets: torch's own cuDNN test by
era (`torch.cudnn_check`), the numpy C API its wheels were built against (`torch.numpy_api`) and
the Python a variant's wheels exist for (`variants.<tag>.python`); called by
envcheck/matrix/schema.py with its checker, which reports the first problem with its key path."""
from __future__ import annotations

import re
from typing import Any, List

from envcheck.versions import vkey

CUDNN_RULES = ("same-minor", "minor-at-least")


def check_cudnn_check(c: Any, eras: Any, releases: List[str]) -> None:
    froms: List[str] = []
    for i, e in enumerate(c.seq(eras, "torch.cudnn_check", True)):
        p = f"torch.cudnn_check[{i}]"
        c.mapping(e, p, ["from", "rule", "format", "message", "source"], ["note"])
        froms.append(c.version(e["from"], f"{p}.from", fields=(3,)))  # type: ignore[arg-type]
        if e["rule"] not in CUDNN_RULES:
            c.fail(f"{p}.rule", f"{e['rule']!r} is not one of {', '.join(CUDNN_RULES)}")
        if e["format"] not in ("int", "tuple"):
            c.fail(f"{p}.format", f"{e['format']!r} is not int or tuple")
        if "{built}" not in str(e["message"]) or "{loaded}" not in str(e["message"]):
            c.fail(f"{p}.message", "must name {built} and {loaded}")
        c.url(e["source"], f"{p}.source")
    c.ascending(froms, "torch.cudnn_check")
    if froms and releases and vkey(froms[0]) > vkey(releases[0]):
        c.fail("torch.cudnn_check[0].from", f"starts after the first release ({releases[0]})")


def check_variant_python(c: Any, pythons: Any, path: str) -> None:
    for j, py in enumerate(c.seq(pythons, path, True)):
        c.version(py, f"{path}[{j}]", fields=(2,))


def check_numpy_api(c: Any, rec: Any, releases: List[str]) -> None:
    c.mapping(rec, "torch.numpy_api", ["api", "api_source", "builds"], [])
    api = c.mapping(rec["api"], "torch.numpy_api.api", [], list(rec["api"] or {}))
    for key, first in api.items():
        if not str(key).startswith("0x"):
            c.fail(f"torch.numpy_api.api.{key}", "must be a hex C API number (0xf)")
        c.version(first, f"torch.numpy_api.api.{key}", fields=(3,))
    c.url(rec["api_source"], "torch.numpy_api.api_source")
    for i, b in enumerate(c.seq(rec["builds"], "torch.numpy_api.builds")):
        p = f"torch.numpy_api.builds[{i}]"
        c.mapping(b, p, ["torch", "api", "source"], ["python", "unconfirmed", "note"])
        version = c.version(b["torch"], f"{p}.torch", fields=(3,))
        # a release older than the matrix's first (0.2.0) may be listed for its numpy alone
        if version not in releases and not (releases and vkey(version) < vkey(releases[0])):
            c.fail(f"{p}.torch", f"torch {b['torch']} is not in torch.releases")
        if "python" in b:  # absent: every Python the release had wheels for
            c.version(b["python"], f"{p}.python", fields=(2,))
        if b["api"] not in api:
            c.fail(f"{p}.api", f"{b['api']!r} is not in torch.numpy_api.api")
        c.url(b["source"], f"{p}.source")


def check_forward_compat(c: Any, rec: Any) -> None:
    c.mapping(rec, "forward_compat", ["releases", "gpus", "gpus_source"], ["note"])
    last = None
    for i, r in enumerate(c.seq(rec["releases"], "forward_compat.releases", True)):
        p = f"forward_compat.releases[{i}]"
        c.mapping(r, p, ["cuda", "drivers", "source"], [])
        cuda = c.version(r["cuda"], f"{p}.cuda", fields=(2,))
        if last is not None and vkey(cuda) <= vkey(last):
            c.fail(f"{p}.cuda", f"{cuda} is not after {last} (releases are in CUDA order)")
        last = cuda
        c.url(r["source"], f"{p}.source")
        for j, d in enumerate(c.strings(r["drivers"], f"{p}.drivers", True)):
            if not re.fullmatch(r"R\d{3}", d):
                c.version(d, f"{p}.drivers[{j}]", fields=(2, 3))
    c.strings(rec["gpus"], "forward_compat.gpus", True)
    c.url(rec["gpus_source"], "forward_compat.gpus_source")
