"""What envcheck may do to a Slurm node, as pure functions: the reason it writes, which reasons
are its own, and the one decision (drain, resume, or nothing, always with why).

The rules (those of LBNL NHC and its kin, whose users' worst complaints are drains nobody
resumes and reasons overwritten):
- envcheck's reasons start with `envcheck:` — `envcheck: <code>: <short summary>`;
- a reason envcheck did not write (an operator's, NHC's, "Prolog error" it did not cause) is
  never touched: the node is neither drained over it, re-worded, nor resumed;
- envcheck resumes only a node drained with its own reason (or with the "Prolog error" /
  "Epilog error" its own failed hook caused, which the node's local record proves);
- a node that is down, in maintenance, reserved, rebooting or powered down is left alone.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from envcheck.doctor.health import PASS, UNKNOWN, WARN, CheckResult
from envcheck.slurm.nodes import NodeState

PREFIX = "envcheck:"
MAX_REASON = 160            # sinfo's and squeue's columns cut long reasons anyway
DRAIN, RESUME, NOTHING = "drain", "resume", "nothing"
# what slurmctld writes when a node's Prolog or Epilog exits non-zero
SCRIPT_REASONS = {"prolog": "Prolog error", "epilog": "Epilog error"}
RECORD_FILE = "slurm-hook.json"


def reason_for(code: str, summary: str) -> str:
    """`envcheck: <code>: <summary>` on one line, at most MAX_REASON characters."""
    text = f"{PREFIX} {code}: " + re.sub(r"\s+", " ", summary).strip()
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 1].rstrip() + "…"


def owned(reason: str) -> bool:
    return reason.strip().startswith(PREFIX)


@dataclass
class Decision:
    action: str             # DRAIN (also re-words an own drain), RESUME, NOTHING
    why: str                # always said, also (above all) for NOTHING
    reason: str = ""        # the reason to set, for DRAIN


def caused_by_us(node: NodeState, record: Optional[Dict[str, Any]]) -> bool:
    """The node's reason is one envcheck wrote, or the Prolog/Epilog error its own failing hook
    caused (the local record says so)."""
    if owned(node.reason):
        return True
    if not record:
        return False
    return node.reason.strip() == SCRIPT_REASONS.get(str(record.get("mode")), "\0")


def decide(want: str, node: NodeState, reason: str = "", record: Optional[Dict[str, Any]] = None) -> Decision:
    """`want` is what the check asks for: DRAIN (with `reason`), RESUME (healthy) or NOTHING."""
    if want == NOTHING:
        return Decision(NOTHING, "the check asks for no action")
    if node.hands_off:
        return Decision(NOTHING, f"{node.hands_off}: envcheck leaves it alone"
                        + (f" (reason kept: {node.reason!r})" if node.reason else ""))
    ours = caused_by_us(node, record)
    if want == DRAIN:
        if node.reason and not ours:
            return Decision(NOTHING, f"already has a reason envcheck did not write, kept: {node.reason!r}")
        if node.drained and node.reason == reason:
            return Decision(NOTHING, "already drained by envcheck for this reason")
        if node.drained:
            return Decision(DRAIN, f"drained for {node.reason!r}: envcheck's reason replaces its own", reason)
        return Decision(DRAIN, "the check failed", reason)
    if not node.drained:
        return Decision(NOTHING, "healthy and not drained")
    if not ours:
        return Decision(NOTHING, f"drained for a reason envcheck did not write, kept: {node.reason!r}")
    return Decision(RESUME, f"healthy again; drained by envcheck for {node.reason!r}")


def wanted(verdict: str, checks: List[CheckResult], strict: bool = False,
           drain_unknown: bool = False) -> Tuple[str, str]:
    """What a node's verdict (and its checks) asks of Slurm: DRAIN with envcheck's reason (FAIL;
    WARN with strict; UNKNOWN with drain_unknown), RESUME (PASS, or WARN), or NOTHING (UNKNOWN:
    a node that could not be checked is neither drained nor resumed)."""
    if verdict == PASS or (verdict == WARN and not strict):
        return RESUME, ""
    if verdict == UNKNOWN and not drain_unknown:
        return NOTHING, ""
    bad = [c for c in checks if c.status == verdict]
    if not bad:
        return NOTHING, ""
    codes = [code for c in bad for code in (c.code.split(",") if c.code else [c.check])]
    summary = bad[0].message.split(". ")[0].split("; ")[0]
    more = f" (+{len(codes) - 1} more)" if len(codes) > 1 else ""
    return DRAIN, reason_for(codes[0], summary + more)


# ---- the node's local record: a Prolog/Epilog failure envcheck caused -----------------------

def read_record(state_dir: str) -> Optional[Dict[str, Any]]:
    try:
        with open(os.path.join(state_dir, RECORD_FILE), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def write_record(state_dir: str, mode: str, reason: str, job: str = "") -> Optional[str]:
    """Record (atomically) that this hook failed in `mode` with `reason`; '' or the error."""
    doc = {"mode": mode, "reason": reason, "time": time.time(), "job": job}
    try:
        os.makedirs(state_dir, mode=0o755, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".slurm-hook.", dir=state_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.replace(tmp, os.path.join(state_dir, RECORD_FILE))
    except OSError as e:
        return f"cannot write {state_dir}/{RECORD_FILE}: {e.strerror}"
    return None


def clear_record(state_dir: str) -> None:
    try:
        os.unlink(os.path.join(state_dir, RECORD_FILE))
    except OSError:
        pass
