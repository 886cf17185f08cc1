# envcheck probe, part torch_version: which torch is installed and which CUDA it was built for
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import re
import sys
from base import Settings, section
from run import run


@section("torch", needs=("packages",))
def collect_torch(facts):
    torch_pkg = (facts["packages"] or {}).get("torch")
    torch = parse_torch_version(torch_pkg["version"]) if torch_pkg else None
    if torch and facts.get("deep") and facts["deep"].get("torch_cuda"):
        torch["cuda"] = facts["deep"]["torch_cuda"]
        torch["cuda_source"] = "deep"
    return torch


def cu_tag_to_cuda(tag):
    m = re.match(r"^cu(\d)(\d+)$", tag or "")  # cu92 -> 9.2, cu100 -> 10.0, cu121 -> 12.1
    if not m:
        return None
    digits = m.group(1) + m.group(2)
    return "%d.%s" % (int(digits[:-1]), digits[-1])


def parse_torch_version(text):
    """'1.1.0+cu100' -> {version: 1.1.0, local: cu100, cuda: 10.0, cuda_source: local-tag}.
    No tag means PyPI's default variant for that release; the controller resolves it."""
    m = re.match(r"^\s*(\d+(?:\.\d+)*)[^+\s]*(?:\+(\S+))?\s*$", text or "")
    if not m:
        return None
    local = m.group(2).lower() if m.group(2) else None
    cuda = cu_tag_to_cuda(local)
    return {"version": m.group(1), "local": local, "cuda": cuda,
            "cuda_source": "local-tag" if cuda else None}


# `import torch` in a child of this interpreter, as every rank does it (a crash in the import
# cannot take the probe down); its version on the last line (importing torch may print too)
IMPORT_TORCH = "import sys, torch; sys.stdout.write(chr(10) + torch.__version__ + chr(10))"
IMPORT_FACTOR = 4    # 4x the command timeout (60 s): a cold venv on NFS, or a loaded node, imports torch slowly


@section("torch_import")
def collect_torch_import(facts=None):
    """Whether torch imports under this interpreter: {"version", "error", "executable"}, so a
    launcher names a node without a working torch before any rank starts there."""
    t = Settings.timeout * IMPORT_FACTOR
    res = run([sys.executable, "-c", IMPORT_TORCH], timeout=t)
    if res is None:
        return {"version": None, "error": "import torch did not finish in %g s" % t, "executable": sys.executable}
    code, out, err = res
    if code == 0 and out.strip():
        return {"version": out.strip().splitlines()[-1], "error": None, "executable": sys.executable}
    lines = [x for x in (err or out or "").strip().splitlines() if x.strip()]
    return {"version": None, "error": lines[-1] if lines else "exit %s" % code, "executable": sys.executable}
