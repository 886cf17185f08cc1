"""Load the node-side probe by path (it is not importable as envcheck.node.probe on purpose:
the controller only reads it as text) and build the stand-ins the probe tests plant."""
from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import stat
from pathlib import Path
from typing import Optional

import envcheck

# with a real driver, NVML/nvidia-smi answer before any stand-in could
REAL_DRIVER = bool(os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi"))
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# the probe file that ships: the installed package's copy (the wheel), not only the checkout's
PROBE = Path(envcheck.__file__).resolve().parent / "node" / "probe.py"


def load_probe():
    spec = importlib.util.spec_from_file_location("envcheck_node_probe_under_test", PROBE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def stand_in_nvidia_smi(bin_dir: Path, generation: str) -> Path:
    """An `nvidia-smi` that answers exactly the queries the probe makes with the captured output
    of one driver generation (tests/fixtures/nvidia-smi/<generation>/), and like the real one
    exits 2 on a field its driver does not know. Any other invocation fails loudly."""
    d = FIXTURES / "nvidia-smi" / generation
    full = "--query-gpu=driver_version,name,compute_cap,memory.total,uuid,pci.bus_id"
    nocc = "--query-gpu=driver_version,name,memory.total,uuid,pci.bus_id"
    fmt = "--format=csv,noheader,nounits"

    def answer(name: str, code: int = 0) -> str:
        return 'cat "%s"; exit %d' % (d / name, code) if (d / name).exists() else \
            'echo "stand-in has no %s" >&2; exit 99' % name

    if (d / "query-error.txt").exists():
        full_answer = answer("query-error.txt", 18 if generation == "mismatch" else 2)
    else:
        full_answer = answer("query.csv")
    plain = answer("plain.txt", 18 if generation == "mismatch" else 0)
    body = f"""case "$*" in
  "{full} {fmt}") {full_answer};;
  "{nocc} {fmt}") {answer("query-nocc.csv", 18 if generation == "mismatch" else 0)};;
  "") {plain};;
  *) echo "stand-in nvidia-smi: unexpected arguments: $*" >&2; exit 99;;
esac
"""
    return write_script(bin_dir / "nvidia-smi", body)


def plant_toolkit(root: Path, *, version_json: Optional[str] = "version-12.1.json",
                  version_txt: Optional[str] = None, nvcc: str = "nvcc-12.1.txt",
                  cudnn_header: Optional[str] = "cudnn_version-8.9.7.h",
                  cudnn_lib: Optional[str] = "8.9.7") -> Path:
    """A CUDA toolkit tree as the runfile leaves it: version file, bin/nvcc (prints the real
    `nvcc -V` text), include/cudnn*.h and lib64/libcudnn.so.X.Y.Z with its soname link."""
    root.mkdir(parents=True)
    if version_json:
        shutil.copy(FIXTURES / "cuda" / version_json, root / "version.json")
    if version_txt:
        shutil.copy(FIXTURES / "cuda" / version_txt, root / "version.txt")
    write_script(root / "bin" / "nvcc", 'cat "%s"\n' % (FIXTURES / "nvcc" / nvcc))
    (root / "include").mkdir()
    if cudnn_header:
        target = "cudnn.h" if cudnn_header.startswith("cudnn-") else "cudnn_version.h"
        shutil.copy(FIXTURES / "cudnn" / cudnn_header, root / "include" / target)
    if cudnn_lib:
        lib64 = root / "lib64"
        lib64.mkdir()
        (lib64 / ("libcudnn.so." + cudnn_lib)).write_bytes(b"\x7fELF stand-in")
        os.symlink("libcudnn.so." + cudnn_lib, lib64 / ("libcudnn.so." + cudnn_lib.split(".")[0]))
    return root


def old_pythons():
    """Interpreters older than the controller's (3.6, 3.7, 3.8) found on this machine."""
    found = {}
    for minor in ("3.6", "3.7", "3.8"):
        cands = [shutil.which("python" + minor)] + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s" % (minor, minor))))
        for c in cands:
            if c and os.access(c, os.X_OK) and "shims" not in c:
                found[minor] = c
                break
    return found
