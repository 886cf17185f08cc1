"""`envcheck matrix show KIND WHAT`: one entry of the matrix with everything derived from it
resolved (envcheck/matrix/load.py answers the queries)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from envcheck.matrix.load import CC, Matrix, query_error
from envcheck.params.text import excerpt
from envcheck.errors import VersionError
from envcheck.versions import parse_compute_capability, parse_torch, strict_version


def matrix_record(m: Matrix, kind: str, what: str) -> Dict[str, Any]:
    """One entry with everything derived from it resolved (for `envcheck matrix show`). A version
    asked for is read whole, never by its prefix: `cuda 12.4junk` is no CUDA 12.4."""
    if kind in ("cuda", "cudnn"):
        strict_version(what, f"matrix show {kind}")
    elif kind == "torch":
        parse_torch(what)
    if kind == "cuda":
        return m.toolkit(what)
    if kind == "cudnn":
        rec = m.cudnn(what)
        if rec is None:
            raise query_error("cudnn.releases", f"no cuDNN {what} in the matrix", "give a known X.Y.Z, e.g. 7.6.5")
        return dict(rec, archives=[m.cudnn_archive(rec["version"], b) for b in rec["cuda"]])
    if kind == "torch":
        rec = m.torch(what)
        if rec is None:
            raise query_error("torch.releases", f"no torch {what} in the matrix", "give a known X.Y.Z, e.g. 1.1.0")
        return dict(rec, variants={t: m.torch_variant(rec["version"], t) for t in rec["variants"]})
    if kind == "gpu":
        try:
            cc: Optional[CC] = parse_compute_capability(what)
            entry = None
        except VersionError:
            entry, cc = m.gpu(what), m.gpu_cc(what)
        if cc is None:
            raise query_error("gpus", f"no GPU matching {excerpt(what)} in the matrix", "give sm_XY or X.Y instead")
        return {"query": what, "gpu": entry, "cc": f"{cc[0]}.{cc[1]}", "arch": m.arch(cc)}
    raise query_error("(query)", f"unknown kind {excerpt(kind)}", "one of cuda, cudnn, torch, gpu")
