"""Facts narrowed to a window of time: the Xid events of a node's kernel log logged within the
last N seconds (by the log's own stamps against the node's uptime, both read by the probe), so a
stale Xid does not keep a node drained until its next reboot (`slurm-check --xid-since`)."""
from __future__ import annotations

from typing import Any, Dict


def drop_stale_xids(facts: Dict[str, Any], max_age: float) -> int:
    """Remove the Xid events whose last line is older than max_age seconds; events without a
    stamp (a wall-clock syslog) stay. Returns how many went."""
    health = facts.get("health")
    log = health.get("kernel_log") if isinstance(health, dict) else None
    if not isinstance(log, dict):
        return 0
    up = log.get("uptime_s")
    if not isinstance(up, (int, float)) or not isinstance(log.get("events"), list):
        return 0
    keep = [e for e in log["events"] if not (isinstance(e, dict) and isinstance(e.get("last_s"), (int, float))
                                             and up - e["last_s"] > max_age)]
    dropped = len(log["events"]) - len(keep)
    log["events"] = keep
    return dropped
