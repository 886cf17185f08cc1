"""Verified fixes end to end, through the installed console script: `check --json` exposes what
trying the fix found, and `audit` of this machine (a stand-in nvidia-smi, a toolkit tree as the
runfile leaves it, torch's package metadata, the machine's real gcc) prints the extended fix."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.node.probe_helpers import REAL_DRIVER, plant_toolkit, stand_in_nvidia_smi

# torch 1.13.1+cu117 beside nvcc 12.1 with gcc 12.1.0 (CUDA 11.7 with that gcc:
# https://github.com/NVlabs/tiny-cuda-nn/issues/109)
STACK = ["--torch", "1.13.1+cu117", "--cuda", "12.1", "--gcc", "12.1.0", "--driver", "535.104.05",
         "--gpu", "NVIDIA A100-SXM4-80GB"]


def test_check_json_exposes_an_extended_fix_and_why():
    r = run_cli("check", "--json", *STACK)
    assert r.returncode == 1, r.stderr
    (f,) = [x for x in json.loads(r.stdout)["findings"] if x["code"] == "nvcc-torch-major-mismatch"]
    fc = f["fix_check"]
    assert fc["status"] == "extended" and fc["verified"] is True and fc["extended"] is True
    assert fc["steps"] == ["install CUDA 11.7.1", "install gcc-11"]
    assert fc["edits"] == {"cuda": "11.7.1", "host_compiler": "11"}
    assert fc["notes"] == ["CUDA 11.7.1 needs gcc <= 11: install gcc-11 too"]
    assert "envcheck install-cuda 11.7" in f["fix"] and "so also: install gcc-11 g++-11" in f["fix"]


def test_check_json_says_which_fix_replaced_the_first():
    r = run_cli("check", "--json", "--torch", "2.7.0+cu128", "--cuda", "11.8", "--gpu", "NVIDIA GeForce RTX 5090",
                "--driver", "570.133.07", "--gcc", "11.4.0")
    (f,) = [x for x in json.loads(r.stdout)["findings"] if x["code"] == "nvcc-torch-major-mismatch"]
    assert f["fix_check"]["status"] == "replaced" and f["fix_check"]["steps"] == ["install CUDA 12.8.2"]
    assert f["fix_check"]["notes"][0].startswith("instead of install torch 2.7.0+cu118: it brings ")


def test_check_text_prints_the_extended_fix():
    r = run_cli("check", *STACK)
    text = " ".join(r.stdout.split())
    assert "fix: point CUDA_HOME and PATH at a CUDA 11.7 toolkit (envcheck install-cuda 11.7). CUDA 11.7.1 " \
           "needs gcc <= 11, so also: install gcc-11 g++-11" in text


def _gcc_major():
    gcc = shutil.which("gcc")
    if not gcc:
        return None
    out = subprocess.run([gcc, "-dumpfullversion", "-dumpversion"], capture_output=True, text=True).stdout
    return int(out.strip().split(".")[0]) if re.match(r"\d+", out.strip()) else None


def test_audit_text_extends_the_fix_with_the_compiler_this_machine_lacks(tmp_path):
    if REAL_DRIVER:
        pytest.skip("a real driver would answer before the stand-in")
    g = _gcc_major()
    if g is None or not 11 < g <= 12:
        pytest.skip(f"needs a gcc 12 that CUDA 12.1 takes and CUDA 11.7 refuses (this machine: gcc {g})")
    py = shutil.which("python3")
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "535.104.05")
    tk = plant_toolkit(tmp_path / "cuda-12.1")
    site = tmp_path / "site"
    (site / "torch-1.13.1+cu117.dist-info").mkdir(parents=True)
    (site / "torch-1.13.1+cu117.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\n"
                                                                     "Version: 1.13.1+cu117\n")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '1.13.1+cu117'\ncuda = '11.7'\n")
    env = {"PATH": os.pathsep.join([str(fake_bin), str(tk / "bin"), "/usr/bin", "/bin"]),
           "CUDA_HOME": str(tk), "PYTHONPATH": str(site)}
    proc = run_cli("audit", "--node-python", py, env=env)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "1.13.1+cu117" in out and "nvcc-torch-major-mismatch" in out
    fix = " ".join(out.split("nvcc-torch-major-mismatch", 1)[1].split("fix:", 1)[1].split())
    # the compiler step names a gcc <= 11 the probe found on PATH, else asks to install gcc-11
    have = sorted(int(p.name[4:]) for d in ("/usr/bin", "/bin") for p in Path(d).glob("gcc-[0-9]*")
                  if p.name[4:].isdigit() and int(p.name[4:]) <= 11)
    step = f"build with the gcc-{have[-1]} already installed" if have else "install gcc-11 g++-11"
    assert fix.startswith("point CUDA_HOME and PATH at a CUDA 11.7 toolkit (envcheck install-cuda 11.7). "
                          f"CUDA 11.7.1 needs gcc <= 11, so also: {step}"), fix
