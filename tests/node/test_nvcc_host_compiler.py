"""The host compiler nvcc will really run, resolved by the probe as nvcc does (node/probe/nvcc.py:
nvcc_host_compiler): -ccbin in NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS (nvcc refuses two), NVCC_CCBIN, else gcc on the PATH the nvcc.profile beside the
real nvcc builds. Tried on a stand-in of Debian's layout (real files in a temp dir: a wrapper
nvcc that execs the real one, an nvcc.profile, gcc wrapper scripts) and, where this machine has
it, on Debian's real nvidia-cuda-toolkit; then judged by `envcheck check FACTS`."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.node.probe_helpers import FIXTURES, write_script
from tests.node.test_probe_subprocess import run_probe, sandbox_env

DEBIAN = Path("/usr/lib/nvidia-cuda-toolkit")


def gcc_script(path: Path, version: str) -> Path:
    """A gcc that answers -dumpfullversion like the real one and fails on anything else."""
    return write_script(path, f'[ "$1" = "-dumpfullversion" ] && {{ echo {version}; exit 0; }}\nexit 7\n')


def debian_like(tmp_path: Path) -> Path:
    """/usr/bin/nvcc -> exec <lib>/bin/nvcc, whose nvcc.profile puts <lib>/bin (a gcc wrapper
    that is gcc 11) first on nvcc's PATH; the user's PATH has gcc 12."""
    lib = tmp_path / "nvidia-cuda-toolkit"
    nvcc_txt = (FIXTURES / "nvcc" / "nvcc-11.8.txt")
    body = f'cat "{nvcc_txt}"\n' if nvcc_txt.exists() else "echo 'Cuda compilation tools, release 11.8, V11.8.89'\n"
    write_script(lib / "bin" / "nvcc", body)
    (lib / "bin" / "nvcc.profile").write_text(
        "# Syntax: name += <text> prepend\n"
        f"NVVMIR_LIBRARY_DIR = {lib}/libdevice\n\n"
        f"PATH\t\t+= {lib}/bin:\n\n"
        "LIBRARIES\t=+ $(_SPACE_) -L/usr/lib/x86_64-linux-gnu/stubs\n")
    gcc_script(lib / "bin" / "gcc", "11.4.0")
    usr_bin = tmp_path / "usr-bin"
    write_script(usr_bin / "nvcc", f'exec {lib}/bin/nvcc "$@"\n')
    gcc_script(usr_bin / "gcc", "12.2.0")
    return usr_bin


def probe_compiler(tmp_path, usr_bin, **env):
    facts = run_probe(env=sandbox_env(tmp_path, usr_bin, **env))
    return facts, facts["cuda"]["nvcc"]["host_compiler"]


def test_the_profiles_wrapper_gcc_is_what_nvcc_runs_not_the_gcc_on_path(tmp_path):
    usr_bin = debian_like(tmp_path)
    facts, hc = probe_compiler(tmp_path, usr_bin)
    assert facts["gcc"]["version"] == "12.2.0"  # the first gcc on PATH is still reported as such
    assert hc == {"path": str(tmp_path / "nvidia-cuda-toolkit" / "bin" / "gcc"), "version": "11.4.0",
                  "how": "nvcc.profile PATH"}


def test_ccbin_in_the_flags_wins_over_the_profile_and_over_nvcc_ccbin(tmp_path):
    usr_bin = debian_like(tmp_path)
    g13 = gcc_script(tmp_path / "opt" / "gcc-13", "13.2.0")
    g10 = gcc_script(tmp_path / "opt" / "gcc-10", "10.5.0")
    _, hc = probe_compiler(tmp_path, usr_bin, NVCC_APPEND_FLAGS=f"-O2 --compiler-bindir={g13}")
    assert (hc["version"], hc["how"]) == ("13.2.0", "-ccbin in NVCC_APPEND_FLAGS")
    _, hc = probe_compiler(tmp_path, usr_bin, NVCC_PREPEND_FLAGS=f"-ccbin {g10}", NVCC_CCBIN=str(g13))
    assert (hc["version"], hc["how"]) == ("10.5.0", "-ccbin in NVCC_PREPEND_FLAGS")
    _, hc = probe_compiler(tmp_path, usr_bin, NVCC_CCBIN=str(g13))
    assert (hc["path"], hc["how"]) == (str(g13), "NVCC_CCBIN")


def test_without_a_profile_the_first_gcc_on_path_is_nvccs(tmp_path):
    bin_dir = tmp_path / "cuda" / "bin"
    write_script(bin_dir / "nvcc", "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    gcc_script(tmp_path / "usr-bin" / "gcc", "13.1.0")
    _, hc = probe_compiler(tmp_path, tmp_path / "usr-bin", PATH=f"{bin_dir}:{tmp_path / 'usr-bin'}:/usr/bin:/bin")
    assert (hc["version"], hc["how"]) == ("13.1.0", "PATH")


def _check(facts: dict, tmp_path: Path):
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(facts))
    r = run_cli("check", "--json", str(saved))
    assert r.returncode in (0, 1), r.stderr
    return {f["code"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"}


def test_check_judges_the_resolved_compiler_and_still_catches_a_too_new_one(tmp_path):
    usr_bin = debian_like(tmp_path)
    facts, _ = probe_compiler(tmp_path, usr_bin)
    assert facts["cuda"]["version"].startswith("11.8")
    assert "gcc-too-new" not in _check(facts, tmp_path)
    g13 = gcc_script(tmp_path / "opt" / "gcc-13", "13.2.0")
    facts, _ = probe_compiler(tmp_path, usr_bin, NVCC_APPEND_FLAGS=f"-ccbin {g13}")
    assert "gcc-too-new" in _check(facts, tmp_path)


@pytest.mark.skipif(not (DEBIAN / "bin" / "nvcc.profile").exists() or not os.path.exists("/usr/bin/nvcc"),
                    reason="Debian's nvidia-cuda-toolkit is not installed here")
def test_debians_real_packaged_toolkit_with_default_gcc_12_gets_no_gcc_error(tmp_path):
    facts = run_probe(env=sandbox_env(tmp_path))  # PATH: /usr/bin:/bin, as a plain login has it
    hc = facts["cuda"]["nvcc"]["host_compiler"]
    assert hc["path"] == str(DEBIAN / "bin" / "gcc") and hc["how"] == "nvcc.profile PATH"
    assert hc["version"].split(".")[0] in {"6", "7", "8", "9", "10", "11"}
    assert "gcc-too-new" not in _check(facts, tmp_path)


@pytest.mark.skipif(not (DEBIAN / "bin" / "nvcc").exists() or not os.path.exists("/usr/include/cuda.h"),
                    reason="Debian's nvidia-cuda-toolkit is not installed here")
def test_debians_toolkit_not_first_on_path_is_listed_and_the_fixes_use_it(tmp_path):
    """Issue 21, item 9: a CUDA 12.4 toolkit first on PATH hides Debian's 11.8 from `which nvcc`, not
    from the disk. The probe lists it (with the compiler its own nvcc.profile picks), so a torch
    built for CUDA 11.8 is told to use the 11.8 that is installed, not to install one, and a gcc
    fix names the gcc-N already there."""
    cuda124 = tmp_path / "cuda-12.4"
    write_script(cuda124 / "bin" / "nvcc", "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    (cuda124 / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}))
    facts = run_probe(env=sandbox_env(tmp_path, cuda124 / "bin", CUDA_HOME=str(cuda124)))
    usr = [t for t in facts["cuda"]["toolkits"] if t["path"] == "/usr"]
    assert usr and usr[0]["layout"] == "distro" and usr[0]["version"].startswith("11.8"), facts["cuda"]["toolkits"]
    assert usr[0]["host_compiler"]["how"] == "nvcc.profile PATH"
    assert facts["cuda"]["version"] == "12.4.1"  # the one in use is still the first on PATH
    # torch 2.0.1 has no CUDA 12 build, so the toolkit is what must change
    facts["torch"] = {"version": "2.0.1", "local": "cu118", "cuda": "11.8", "cuda_source": "local-tag"}
    facts["packages"] = dict(facts.get("packages") or {}, torch={"version": "2.0.1+cu118"})
    saved = tmp_path / "facts.json"
    saved.write_text(json.dumps(facts))
    doc = json.loads(run_cli("check", "--json", str(saved)).stdout)
    (mismatch,) = [f for f in doc["findings"] if f["code"] == "nvcc-torch-major-mismatch"]
    assert "already installed" in mismatch["fix"] and "install-cuda" not in mismatch["fix"], mismatch["fix"]
    assert mismatch["fix_check"]["status"] == "verified"  # Debian's profile brings a gcc 11.8 accepts
    # nvcc 12.4 itself with a gcc newer than it accepts: the fix names a gcc-N installed here, if any
    gccs = [g for g in facts["gcc"].get("installed") or [] if int(g["version"].split(".")[0]) <= 13]
    facts["cuda"]["nvcc"]["host_compiler"] = {"path": "/opt/gcc-99", "version": "99.1.0", "how": "PATH"}
    saved.write_text(json.dumps(facts))
    doc = json.loads(run_cli("check", "--json", str(saved)).stdout)
    (too_new,) = [f for f in doc["findings"] if f["code"] == "gcc-too-new"]
    assert ("already installed" in too_new["fix"]) == bool(gccs), too_new["fix"]
