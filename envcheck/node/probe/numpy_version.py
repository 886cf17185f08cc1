# envcheck probe, part numpy_version: the numpy that torch's interpreter imports
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

from base import section


@section("numpy", needs=("packages",))
def collect_numpy(facts):
    """{"version", "location"} of the numpy this interpreter (the one torch runs in) imports,
    read from its package metadata by collect_packages, never by importing it: torch builds
    compiled against numpy 1.x fail under numpy 2.x. {"version": None}: the probe looked and
    found no numpy (torch then runs without it), which differs from a document without this key."""
    found = (facts.get("packages") or {}).get("numpy") or {}
    return {"version": found.get("version"), "location": found.get("location")}

