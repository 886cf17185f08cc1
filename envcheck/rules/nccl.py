"""NCCL/Gloo environment rules for one host: the socket interface variables must name an
interface the host has, and torch >= 2.2 reads the TORCH_NCCL_* names. Cross-node reachability
is the rank harness's job (envcheck/ranks/preflight.py); this only needs the probe's facts.

And which NCCL torch runs (torch_nccl): the probe reads it from torch only with --deep; without,
it finds a system libnccl or a pip wheel, which a torch 1.x wheel ignores (it links NCCL
statically). The version such a build bundles is in the matrix, so the fleet's NCCL comparison
says the same with and without --deep."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules.common import needs, src, torch_build
from envcheck.versions import vkey

# torch's pip wheels link NCCL statically before 2.0 and load a nvidia-nccl-cu1x wheel from 2.0
STATIC_NCCL_BEFORE = (2, 0)

# renamed with a TORCH_ prefix in torch 2.2; the old names still work but warn
RENAMED = ("NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_ENABLE_TIMING", "NCCL_DESYNC_DEBUG")


def _names(f: F.Facts) -> List[str]:
    return [n for n in (F.text(i.get("name")) for i in F.interfaces(f)) if n]


def _nccl_matches(spec: str, names: List[str]) -> List[str]:
    """NCCL_SOCKET_IFNAME: comma-separated prefixes; '^' excludes them, '=' asks exact names."""
    exclude = spec.startswith("^")
    body = spec[1:] if exclude else spec
    exact = body.startswith("=")
    body = body[1:] if exact else body
    parts = [p for p in body.split(",") if p]

    def hit(n: str) -> bool:
        return any(n == p if exact else n.startswith(p) for p in parts)

    if exclude:  # loopback is used only when named explicitly
        return [n for n in names if n != "lo" and not hit(n)]
    return [n for n in names if hit(n)]


@needs("env")
def socket_ifname(f: F.Facts, m: Matrix) -> List[Finding]:
    names = _names(f)
    env = F.env(f)
    if not names:
        if env.get("NCCL_SOCKET_IFNAME") or env.get("GLOO_SOCKET_IFNAME"):
            return [Skipped("socket_ifname", "nccl", "network interfaces not collected",
                            "audit the host (the probe lists its interfaces)")]
        return []
    out = []
    spec = env.get("NCCL_SOCKET_IFNAME")
    if spec and not _nccl_matches(spec, names):
        out.append(Finding(ERROR, "nccl-ifname-missing", "nccl",
                           f"NCCL_SOCKET_IFNAME={spec} matches no interface on this host (it has "
                           f"{', '.join(names)}): NCCL stops with 'NCCL WARN Bootstrap : no socket interface found'.",
                           "export NCCL_SOCKET_IFNAME=<the interface on the network the nodes share> "
                           "(`envcheck nccl-test HOSTS` suggests one)", src(m, "nccl_env")))
    gloo = env.get("GLOO_SOCKET_IFNAME")
    if gloo:
        missing = [g for g in gloo.split(",") if g and g not in names]
        if missing:
            out.append(Finding(ERROR, "gloo-ifname-missing", "nccl",
                               f"GLOO_SOCKET_IFNAME={gloo} names {', '.join(missing)}, which this host does not have "
                               f"(it has {', '.join(names)}); Gloo takes exact names, not prefixes: "
                               f"init_process_group fails with 'Unable to find address for: {missing[0]}'.",
                               "export GLOO_SOCKET_IFNAME=<exact interface name on the shared network>",
                               src(m, "nccl_env")))
    return out


@needs("env", "torch")
def renamed_env(f: F.Facts, m: Matrix) -> List[Finding]:
    tb = torch_build(f, m)
    env = F.env(f)
    if not tb or vkey(tb.version) < (2, 2):
        return []
    old = [n for n in RENAMED if n in env and f"TORCH_{n}" not in env]
    if not old:
        return []
    return [Finding(WARNING, "nccl-env-renamed", "nccl",
                    f"torch {tb.version} reads TORCH_{old[0]}, not {old[0]}: it warns 'Environment variable "
                    f"{old[0]} is deprecated; use TORCH_{old[0]} instead'"
                    + (f" (also {', '.join(old[1:])})" if old[1:] else "") + ".",
                    "; ".join(f"export TORCH_{n}={env[n]}" for n in old) + f"; unset {' '.join(old)}",
                    src(m, "torch_nccl_env"))]


def torch_nccl(f: F.Facts, m: Matrix) -> Optional[Dict[str, Any]]:
    """The facts' `nccl` section as the torch process sees it, when it differs from the probe's
    non-deep answer; None keeps the probe's. --deep's answer (source "torch") always stands. A
    torch 1.x CUDA build: the NCCL its variant bundles (source "matrix"; version None when the
    matrix does not know it), whatever libnccl or nvidia-nccl-* wheel the node also has. A later
    build with an nvidia-nccl-cu* wheel installed: that wheel, which torch loads before any
    system libnccl."""
    if F.nccl_source(f) == "torch":
        return None
    tb = torch_build(f, m)
    if not tb or not tb.tag or tb.tag == "cpu":
        return None
    probe = {k: v for k, v in F.nccl(f).items() if k in ("version", "source", "path")}
    if vkey(tb.version) < STATIC_NCCL_BEFORE:
        var = m.torch_variant(tb.version, tb.tag) or {}
        out: Dict[str, Any] = {"version": var.get("nccl"), "source": "matrix" if var.get("nccl") else None,
                               "note": f"linked statically into torch {tb.label()}"
                                       + ("" if var.get("nccl") else "; the matrix does not know which version")}
        if probe.get("version"):
            out["ignored"] = probe  # a system libnccl or wheel this torch does not load
        return out
    wheels = [F.text(p.get("version")) for n, p in sorted(F.packages(f).items()) if n.startswith("nvidia-nccl-cu")]
    if wheels and wheels[0] and probe.get("source") != "wheel":
        out = {"version": wheels[0], "source": "wheel"}
        if probe.get("version"):
            out["ignored"] = probe
        return out
    return None


RULES = [socket_ifname, renamed_env]
