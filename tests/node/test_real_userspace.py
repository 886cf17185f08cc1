"""The probe against NVIDIA's REAL userspace, as Debian packages it (libnvidia-ml1, nvidia-smi,
nvidia-cuda-toolkit; tests/nvidia_userspace.sh installs them): the real library, the real binary
and the real toolkit on this GPU-less machine, a node whose driver packages are installed but
whose kernel module is not loaded. The parsers are also held to the captured text of these
packages (tests/fixtures/nvidia-userspace/), which needs no install."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.node.probe_helpers import FIXTURES, PROBE, REAL_DRIVER, load_probe
from tests.node.test_probe_subprocess import run_probe, sandbox_env, without_pynvml
from tests.node.userspace import FIXTURES as USERSPACE_FIXTURES
from tests.node.userspace import can_hide, fixture_dir, hidden, require_userspace, upstream

probe = load_probe()
SETS = sorted(p for p in USERSPACE_FIXTURES.iterdir() if (p / "capture.json").exists())
pytestmark = pytest.mark.skipif(REAL_DRIVER, reason="this machine has a loaded NVIDIA kernel module")


def capture(d: Path) -> dict:
    return json.loads((d / "capture.json").read_text())


# ---- the parsers against the captured real text (no packages needed) --------------------------

@pytest.mark.parametrize("d", SETS, ids=[p.name for p in SETS])
def test_every_nvidia_smi_form_of_a_driverless_node_reads_as_module_not_loaded(d):
    smi = json.loads((d / "nvidia-smi.json").read_text())
    failing = {form: r for form, r in smi.items() if r["rc"] != 0}
    assert failing and all(r["rc"] == 9 for r in failing.values())
    for form, r in failing.items():
        assert probe.parse_smi_failure(r["stdout"] + r["stderr"]) == ("module-not-loaded", None), form
        # nothing in it may pass for a driver version or GPU list
        assert probe.parse_nvidia_smi_header(r["stdout"]) == {"driver": None, "cuda": None}
        assert probe.parse_nvidia_smi_csv(r["stdout"]) == []


def test_a_mismatch_names_the_library_version_nvidia_smi_prints():
    text = (FIXTURES / "nvidia-smi" / "mismatch" / "plain.txt").read_text()
    assert probe.parse_smi_failure(text) == ("mismatch", "535.183")


@pytest.mark.parametrize("d", SETS, ids=[p.name for p in SETS])
def test_the_userspace_version_comes_from_the_real_library_file_name_and_nvml(d):
    cap = capture(d)
    lib = cap["libraries"]["libnvidia-ml.so.1"]
    want = upstream(cap["packages"]["libnvidia-ml1"])
    assert probe.driver_file_version(lib["realpath"]) == want
    assert probe.driver_file_version(lib["ldconfig"]) is None  # the soname link says nothing
    assert cap["nvml"]["nvmlSystemGetNVMLVersion_without_init"] == 0
    assert probe.parse_nvml_version(cap["nvml"]["nvmlSystemGetNVMLVersion_value"]) == want
    assert cap["nvml"]["nvmlInit_v2"] == probe.NVML_DRIVER_NOT_LOADED
    assert cap["nvml"]["errors"][str(probe.NVML_DRIVER_NOT_LOADED)] == "Driver Not Loaded"
    assert cap["nvml"]["errors"][str(probe.NVML_LIB_RM_VERSION_MISMATCH)] == "Driver/library version mismatch"


@pytest.mark.parametrize("d", SETS, ids=[p.name for p in SETS])
def test_the_packaged_nvcc_and_its_profile_parse_to_11_8_89_and_the_g_plus_plus_wrapper_dir(d):
    cap = capture(d)
    parsed = probe.parse_nvcc((d / "nvcc-V.txt").read_text())
    assert (parsed["release"], parsed["build"]) == ("11.8", upstream(cap["packages"]["nvidia-cuda-toolkit"]))
    here = os.path.dirname(cap["toolkit"]["nvcc_profile_path"])
    assert probe.profile_path_dirs((d / "nvcc.profile").read_text(), here) == [here]
    # the wrapper nvcc puts first on PATH picks g++-11, which the toolkit depends on
    assert "g++-11" in cap["toolkit"]["host_compiler_wrapper"] and cap["packages"]["g++-11"]


def test_odd_nvml_version_strings_give_no_version():
    assert probe.parse_nvml_version("12.535.261.03") == "535.261.03"
    for text in ("", "535.261.03", "12", "12.abc", "12.535.261.03 extra", None):
        assert probe.parse_nvml_version(text) is None, text


# ---- the real library, binary and toolkit on this machine ---------------------------------------

def test_the_probe_says_which_userspace_is_installed_and_that_the_module_is_not_loaded(tmp_path):
    versions = require_userspace()
    facts = run_probe(env=sandbox_env(tmp_path, PYTHONPATH=without_pynvml(tmp_path)))
    drv = facts["driver"]
    want = upstream(versions["libnvidia-ml1"])
    assert drv["state"] == "module-not-loaded" and drv["version"] is None and drv["source"] is None
    assert drv["userspace"]["version"] == want and drv["userspace"]["source"] == "library-file"
    assert os.path.basename(drv["userspace"]["library"]) == "libnvidia-ml.so." + want
    assert drv["nvml_error"] == {"code": 9, "text": "Driver Not Loaded"}
    assert drv["smi_state"] == "module-not-loaded"
    # the real binary prints today what was captured from it
    captured = json.loads((fixture_dir(versions) / "nvidia-smi.json").read_text())
    assert drv["raw"] == (captured["query-gpu-csv"]["stdout"] + captured["query-gpu-csv"]["stderr"]).strip()
    assert drv["error"].startswith("NVIDIA driver %s userspace installed, kernel module not loaded: " % want)
    assert facts["gpus"] == [] and facts["errors"] == []


def test_through_the_real_pynvml_binding_the_same_state_and_nvmls_code():
    versions = require_userspace()
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed for this interpreter")
    facts = run_probe(env={"PATH": "/usr/bin:/bin"})
    assert facts["driver"]["state"] == "module-not-loaded"
    assert facts["driver"]["nvml_error"] == {"code": 9, "text": "Driver Not Loaded"}
    assert facts["driver"]["userspace"]["version"] == upstream(versions["libnvidia-ml1"])


def test_a_loaded_module_of_another_version_is_a_mismatch_with_both_versions(tmp_path):
    versions = require_userspace()
    why = can_hide()
    if why:
        pytest.skip(why)
    module = (FIXTURES / "misc" / "proc-driver-version-575.57.08-open.txt").read_text()
    env = dict(os.environ, PATH="/usr/bin:/bin", PYTHONPATH=without_pynvml(tmp_path))
    proc = subprocess.run(hidden([sys.executable, "-"], tmp_path / "proc", proc_driver_version=module),
                          input=PROBE.read_bytes(), capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    drv = json.loads(proc.stdout)["driver"]
    assert drv["state"] == "mismatch"
    assert (drv["userspace"]["version"], drv["kernel_module"]) == (upstream(versions["libnvidia-ml1"]), "575.57.08")


def test_the_packaged_toolkit_is_cuda_11_8_in_usr_with_its_own_headers_libraries_and_compiler(tmp_path):
    versions = require_userspace()
    facts = run_probe(env=sandbox_env(tmp_path))  # PATH /usr/bin:/bin: Debian's nvcc, not /usr/local's
    cuda = facts["cuda"]
    tk_version = versions["nvidia-cuda-toolkit"]
    assert cuda["nvcc"]["path"] == "/usr/bin/nvcc"
    assert (cuda["nvcc"]["release"], cuda["nvcc"]["build"]) == ("11.8", upstream(tk_version))
    assert cuda["version"] == "11.8" and cuda["in_use"] == {"path": "/usr", "via": "PATH"}
    (usr,) = [t for t in cuda["toolkits"] if t["path"] == "/usr"]
    assert usr["layout"] == "distro" and usr["package"] == {"name": "nvidia-cuda-toolkit", "version": tk_version}
    assert usr["include"] == "/usr/include" and os.path.exists(os.path.join(usr["include"], "cuda.h"))
    assert any(n.startswith("libcudart.so.") for n in os.listdir(usr["lib"]))
    assert cuda["torch_cuda_home"] == {"path": "/usr", "via": "nvcc on PATH"}
    hc = cuda["nvcc"]["host_compiler"]
    assert hc["how"] == "nvcc.profile PATH" and hc["path"] == "/usr/lib/nvidia-cuda-toolkit/bin/gcc"
    assert hc["version"].split(".")[0] == "11"  # g++-11, not the system's default gcc


def test_nvcc_ccbin_in_the_environment_wins_over_the_profile(tmp_path):
    require_userspace()
    gcc = "/usr/bin/" + sorted(n for n in os.listdir("/usr/bin") if n.startswith("g++-"))[-1]
    facts = run_probe(env=sandbox_env(tmp_path, NVCC_PREPEND_FLAGS="-ccbin " + gcc))
    assert facts["cuda"]["nvcc"]["host_compiler"]["path"] == gcc
    assert facts["cuda"]["nvcc"]["host_compiler"]["how"] == "-ccbin in NVCC_PREPEND_FLAGS"
