# envcheck probe, part manifest: the manifest install-cudnn keeps in each toolkit at --path
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from base import Settings, section
from run import read

# install/cudnn.py MANIFEST: what install-cudnn copied into the toolkit, so --remove undoes exactly
# that (tests/node/test_probe_sections.py holds the two names equal)
MANIFEST_NAME = ".envcheck-cudnn-manifest"


@section("manifest", default=[])
def collect_manifest(facts=None):
    """[{"path": toolkit, "lines": [...] | None (no manifest)}] for each --path."""
    out = []
    for path in Settings.paths:
        text = read(os.path.join(path, MANIFEST_NAME))
        out.append({"path": path, "lines": text.splitlines() if text is not None else None})
    return out
