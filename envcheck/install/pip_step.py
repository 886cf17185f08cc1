"""The `pip` step of a playbook: one fact command (installed versions, read from package
metadata without importing anything heavy), a pure plan, one `pip install` when needed.

Idempotent: a second run finds every requirement satisfied and runs nothing. One trap handled:
torch 1.1.0 cu90 (PyPI) and cu100 (download.pytorch.org) carry the same version, so pip calls
the wrong one "already satisfied"; the plan compares torch's compiled CUDA (torch/version.py,
read as text) with the variant the playbook's index serves and forces a reinstall when they
differ.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.errors import UsageError
from envcheck.install.common import NodeOutcome
from envcheck.versions import cu_tag_to_version, same_prefix

# runs on the node under its Python (3.6+): names on argv, JSON on stdout
FACT_SCRIPT = r'''
import json, os, re, sys
out = {}
try:
    from importlib import metadata as md
    def find(n):
        try:
            d = md.distribution(n)
        except Exception:
            return None
        return d.version, str(d.locate_file(""))
except ImportError:
    import pkg_resources
    def find(n):
        try:
            d = pkg_resources.get_distribution(n)
        except Exception:
            return None
        return d.version, d.location
for name in sys.argv[1:]:
    f = find(name)
    if f is None:
        out[name] = None
        continue
    ver, loc = f
    info = {"version": ver}
    if name == "torch":
        try:
            with open(os.path.join(loc, "torch", "version.py")) as fh:
                m = re.search(r"^cuda\s*=\s*['\"]([^'\"]+)", fh.read(), re.M)
            info["cuda"] = m.group(1) if m else None
        except (IOError, OSError):
            info["cuda"] = None
    out[name] = info
print(json.dumps(out))
'''


@dataclass
class PipPlan:
    command: Optional[str]                 # None: nothing to do
    reasons: List[str] = field(default_factory=list)
    satisfied: List[str] = field(default_factory=list)


def requirements(packages: List[str]) -> List[Requirement]:
    out = []
    for p in packages:
        try:
            out.append(Requirement(p))
        except InvalidRequirement as e:
            why = (str(e).splitlines() or [""])[0]     # packaging adds the text and a ^ marker below
            raise UsageError(f"pip: cannot parse requirement {p!r}: {why}", "write it as pip would, e.g. torch==1.1.0") from e
    return out


def fact_command(python: str, packages: List[str]) -> str:
    names = [canonicalize_name(r.name) for r in requirements(packages)]
    return f"{shlex.quote(python)} - {' '.join(shlex.quote(n) for n in names)}"


def variant_of(args: Dict[str, Any]) -> Optional[str]:
    """The CUDA variant ('cu100') the step's index or find-links page serves, if it names one."""
    for k in ("index_url", "find_links", "extra_index_url"):
        m = re.search(r"/whl/(?:[a-z]+/)?(cu\d+)(?:/|$)", str(args.get(k) or ""))
        if m:
            return m.group(1)
    return None


def install_command(python: str, args: Dict[str, Any], force: bool = False) -> str:
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off"]
    if args.get("index_url"):
        cmd += ["--index-url", args["index_url"]]
    if args.get("extra_index_url"):
        cmd += ["--extra-index-url", args["extra_index_url"]]
    if args.get("find_links"):
        cmd += ["--find-links", args["find_links"]]
    if args.get("no_index"):
        cmd.append("--no-index")
    if args.get("no_deps"):
        cmd.append("--no-deps")
    if force:
        # the same version of another variant counts as installed; --no-deps keeps the
        # reinstall to the named packages
        cmd += ["--force-reinstall", "--no-deps"]
    return " ".join(shlex.quote(c) for c in cmd + list(args["packages"]))


def plan_pip(installed: Dict[str, Optional[Dict[str, Any]]], args: Dict[str, Any], python: str) -> PipPlan:
    """installed: what FACT_SCRIPT printed (canonical name -> {version, cuda?} or None)."""
    plan = PipPlan(None)
    force = False
    variant = variant_of(args)
    for req in requirements(args["packages"]):
        name = canonicalize_name(req.name)
        have = installed.get(name)
        if not have:
            plan.reasons.append(f"{req.name} not installed")
            continue
        try:
            v = Version(have["version"])
        except InvalidVersion:
            plan.reasons.append(f"{req.name} {have['version']!r}: unparsable version")
            continue
        # match on the public version: 2.5.1+cu124 satisfies torch==2.5.1
        if req.specifier and not req.specifier.contains(Version(v.public), prereleases=True):
            plan.reasons.append(f"{req.name} {have['version']} does not satisfy {req.specifier}")
            continue
        if name == "torch" and variant:
            want = cu_tag_to_version(variant)
            local = v.local or ""
            got = cu_tag_to_version(local) if local.startswith("cu") else have.get("cuda")
            if want and (not got or not same_prefix(got, want, 2)):
                plan.reasons.append(f"torch {have['version']} is built for CUDA {got or 'unknown'}, "
                                    f"not {want} ({variant})")
                force = True
                continue
        plan.satisfied.append(f"{req.name} {have['version']}")
    if plan.reasons:
        plan.command = install_command(python, args, force=force)
    return plan


def pip_node(remote, args: Dict[str, Any], *, python: str = "python3", dry_run: bool = False,
             timeout: float = 60.0, install_timeout: float = 3600.0):
    """The pip step on one node: fact, plan, and `pip install` only when something is missing."""

    out = NodeOutcome(remote.name)
    res = remote.run(fact_command(python, args["packages"]), stdin=FACT_SCRIPT, timeout=timeout)
    if not res.ok:
        return out.fail("unreachable" if res.error and "timed out" not in res.error else "failed",
                        f"pip facts under {python}: {res.error or res.tail(3)}")
    try:
        installed = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return out.fail("failed", f"pip facts under {python}: unreadable output {res.stdout[-200:]!r}")
    plan = plan_pip(installed, args, python)
    out.lines += [f"already in place: {s}" for s in plan.satisfied]
    if plan.command is None:
        out.lines.append("nothing to do")
        return out
    out.lines += [f"needed: {r}" for r in plan.reasons]
    if dry_run:
        out.status = "would-change"
        out.lines.append(f"would run {plan.command}")
        return out
    done = remote.run(plan.command, timeout=install_timeout)
    if not done.ok:
        return out.fail("failed", f"pip install failed: {done.error or 'exit ' + str(done.exit_code)}", done.tail(15))
    out.lines.append(f"ran {plan.command}")
    out.status = "changed"
    return out
