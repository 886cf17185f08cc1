"""NCCL/Gloo environment rules for one host: the socket interface variables must name an
interface the host has, and torch >= 2.2 reads the TORCH_NCCL_* names. Cross-node reachability
is nccl-test's job (envcheck/allreduce/preflight.py); this only needs the probe's facts."""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules.common import needs, src, torch_build
from envcheck.versions import vkey

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


RULES = [socket_ifname, renamed_env]
