# envcheck probe, part packages: torch & co (and numpy) from package metadata, never imported
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import sys
from base import ERRORS, section
from run import ls, read


WANTED = re.compile(r"^(torch|torchvision|torchaudio|numpy|nvidia-.*|pynvml)$")
# metadata directories worth opening: `name-version.dist-info` / `.egg-info` of a WANTED name
# (normalised with _ or not, any case); the exact Name inside decides
META_DIR = re.compile(r"^(?:(?:torch|torchvision|torchaudio|numpy|pynvml)-|nvidia[-_.]).*\.(?:dist|egg)-info$",
                      re.IGNORECASE)


@section("packages", default={})
def collect_packages(facts=None):
    """torch & co from package metadata, WITHOUT importing them (importing torch can take
    seconds, initialise CUDA or crash; --deep does that in a child process).

    Walks sys.path in order, as importlib.metadata does, but opens only the metadata of the
    packages we report: a full importlib.metadata scan reads every METADATA file on the node
    (and its import alone is ~20 ms of start-up), which 32 nodes sharing a machine pay 32 times."""
    found = {}

    def add(name, version, location):
        key = re.sub(r"[-_.]+", "-", name or "").lower()
        if not WANTED.match(key) or not version:
            return
        entry = {"version": version, "location": location}
        if key in found:  # the first on sys.path is what `import` gets; keep the rest visible
            found[key].setdefault("shadows", []).append(entry)
        else:
            found[key] = entry

    seen = set()
    for d in sys.path:
        location = os.path.abspath(d or ".")
        if location in seen:
            continue
        seen.add(location)
        for meta in ls(location, META_DIR):
            if os.path.isdir(meta):
                meta = os.path.join(meta, "METADATA" if meta.endswith("dist-info") else "PKG-INFO")
            text = read(meta, 1 << 16)
            if text is None:
                continue
            try:
                name, version = parse_metadata(text)
                add(name, version, location)
            except Exception as e:  # one broken install must not hide the others
                ERRORS.append("packages: %s: %s" % (meta, e))
    return found


def parse_metadata(text):
    """METADATA / PKG-INFO headers -> (name, version); (None, None) when absent."""
    name = version = None
    for line in (text or "").splitlines():
        if not line.strip():
            break  # headers end at the first blank line
        if line.startswith("Name:") and name is None:
            name = line[5:].strip()
        elif line.startswith("Version:") and version is None:
            version = line[8:].strip()
    return name, version
