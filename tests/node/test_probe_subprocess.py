"""The probe run as envcheck runs it: a real interpreter reading the script on stdin
(`python3 - [args]`), on this GPU-less machine, with planted toolkit trees and stand-in
`nvidia-smi` scripts printing captured output of real drivers."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

from tests.node.probe_helpers import (PROBE, REAL_DRIVER, build_fake_nvml, old_pythons, plant_dist, plant_toolkit,
                                      poison, stand_in_nvidia_smi, write_script)
from tests.node.userspace import can_hide, hidden



def run_probe(*args: str, python: str = sys.executable, env=None, timeout: float = 120,
              hide: Optional[Path] = None):
    """The probe's facts; hide: a scratch directory, to run it with the machine's own NVIDIA
    userspace (the packaged one, where installed) hidden, as on a machine without it."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    argv = [python, "-", *args]
    if hide is not None:
        why = can_hide()
        if why:
            pytest.skip(why)
        argv = hidden(argv, hide)
    proc = subprocess.run(argv, input=PROBE.read_bytes(), capture_output=True,
                          env=full_env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert out.count("\n") == 1, "the probe must print exactly one JSON line: %r" % out[:500]
    return json.loads(out)


def sandbox_env(tmp_path: Path, *path_dirs: Path, **extra: str):
    """PATH with only our stand-ins and the system's basic tools (no /usr/local/bin, whose nvcc
    on this machine would otherwise be found first)."""
    env = {"PATH": os.pathsep.join([str(p) for p in path_dirs] + ["/usr/bin", "/bin"]),
           "HOME": str(tmp_path)}
    for key in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH"):
        env[key] = ""
    env.update(extra)
    return env


@pytest.mark.skipif(REAL_DRIVER, reason="this machine has an NVIDIA driver")
def test_probe_on_this_gpu_less_machine_says_no_driver_and_still_reports_the_rest(tmp_path):
    """As a machine that never had NVIDIA's userspace: the packaged one, where installed, is hidden
    in a private mount namespace."""
    why = can_hide()
    if why:
        pytest.skip(why)
    proc = subprocess.run(hidden([sys.executable, "-"], tmp_path / "hide"), input=PROBE.read_bytes(),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    facts = json.loads(proc.stdout)
    assert (facts["driver"]["state"], facts["driver"]["userspace"]) == ("no-userspace", None)
    assert facts["schema"] == 1 and facts["origin"] == "probe"
    assert facts["driver"]["version"] is None
    assert facts["driver"]["error"].startswith("no NVIDIA driver found")
    assert "nvidia-smi not found" in facts["driver"]["error"]
    assert facts["gpus"] == []
    assert facts["python"]["version"] == "%d.%d.%d" % sys.version_info[:3]
    assert facts["python"]["executable"] == sys.executable
    assert facts["hostname"] and facts["os"]["kernel"] and facts["os"]["arch"]
    assert facts["env"]["PATH"] == os.environ["PATH"]
    assert any(i["name"] == "lo" and "127.0.0.1/8" in i["addrs"] for i in facts["interfaces"])
    assert isinstance(facts["errors"], list)
    assert facts["probe"]["deep"] is False


# (generation, driver, header CUDA, [(name, cc, MiB, uuid, bus)])
GENERATIONS = [
    ("410.48", "410.48", None, [
        ("Tesla V100-SXM2-16GB", None, 16130, "GPU-4e1ca7a5-6bd2-1f3c-7a4e-8e2d0c4c9a21", "00000000:1A:00.0"),
        ("Tesla V100-SXM2-16GB", None, 16130, "GPU-9b3f0c1e-52d6-77a0-3c18-2f5b6e7d8a90", "00000000:1B:00.0")]),
    ("470.182.03", "470.182.03", "11.4", [
        ("Tesla T4", None, 15109, "GPU-2f6d9a43-5c11-8e0b-d7f2-61a9c3e0b4d8", "00000000:00:1E.0")]),
    ("535.104.05", "535.104.05", "12.2", [
        ("NVIDIA A100-SXM4-80GB", "8.0", 81920, "GPU-6a0f3b7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "00000000:07:00.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0", 81920, "GPU-d4c3b2a1-9f8e-7d6c-5b4a-392817160504", "00000000:0F:00.0")]),
    ("550.127.05", "550.127.05", "12.4", [
        ("NVIDIA H100 80GB HBM3", "9.0", 81559, "GPU-0b8a4e2c-7d31-5f96-a4c8-e1f2d3c4b5a6", "00000000:18:00.0"),
        ("NVIDIA H100 80GB HBM3", "9.0", 81559, "GPU-5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b", "00000000:2A:00.0")]),
    ("580.95.05", "580.95.05", "13.0", [
        ("NVIDIA B200", "10.0", 183359, "GPU-a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90", "00000000:1B:00.0"),
        ("NVIDIA B200", "10.0", 183359, "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "00000000:43:00.0")]),
]


@pytest.mark.skipif(REAL_DRIVER, reason="a real driver would answer before the stand-in")
@pytest.mark.parametrize("generation, driver, cuda, gpus", GENERATIONS, ids=[g[0] for g in GENERATIONS])
def test_probe_reports_exactly_what_the_driver_and_the_planted_toolkit_say(
        tmp_path, generation, driver, cuda, gpus):
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, generation)
    tk = plant_toolkit(tmp_path / "cuda-12.1")
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin, tk / "bin", CUDA_HOME=str(tk)))

    assert facts["driver"]["version"] == driver
    assert facts["driver"]["source"] == "nvidia-smi"
    assert facts["driver"]["cuda"] == cuda
    assert facts["driver"]["error"] is None
    got = [(g["name"], g["compute_capability"], g["memory_mib"], g["uuid"], g["pci_bus_id"])
           for g in facts["gpus"]]
    assert got == gpus
    assert [g["index"] for g in facts["gpus"]] == list(range(len(gpus)))

    real_tk = os.path.realpath(tk)
    (planted,) = [t for t in facts["cuda"]["toolkits"] if t["path"] == real_tk]
    assert (planted["version"], planted["source"]) == ("12.1", "version.json")
    assert '"12.1.20230222"' in planted["raw"]
    assert facts["cuda"]["nvcc"]["path"] == str(tk / "bin" / "nvcc")
    assert (facts["cuda"]["nvcc"]["release"], facts["cuda"]["nvcc"]["build"]) == ("12.1", "12.1.66")
    assert facts["cuda"]["version"] == "12.1"
    assert facts["cuda"]["in_use"] == {"path": real_tk, "via": "PATH"}
    assert {"path": str(tk / "include" / "cudnn_version.h"), "version": "8.9.7"} in facts["cudnn"]["headers"]
    assert facts["cudnn"]["version"] == "8.9.7"
    # the soname link and the file it names are one library
    assert [lib["version"] for lib in facts["cudnn"]["libs"]
            if lib["path"].startswith(str(tk / "lib64"))] == ["8.9.7"]
    assert facts["env"]["CUDA_HOME"] == str(tk)


@pytest.mark.skipif(REAL_DRIVER, reason="a real driver would answer before the stand-in")
def test_a_driver_library_mismatch_is_reported_with_nvidia_smis_own_words(tmp_path):
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "mismatch")
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin))
    assert facts["driver"]["version"] is None
    assert "Driver/library version mismatch" in facts["driver"]["error"]
    assert "Driver/library version mismatch" in facts["driver"]["raw"]


def test_toolkits_found_through_cuda_home_and_an_old_version_txt_with_cudnn7(tmp_path):
    """The stack of the original setup notes: CUDA 10.0.130 (version.txt) with cuDNN 7.6.5 in
    cudnn.h, found through CUDA_HOME alone (no nvcc on PATH)."""
    tk = plant_toolkit(tmp_path / "cuda-10.0", version_json=None, version_txt="version-10.0.txt",
                       nvcc="nvcc-10.0.txt", cudnn_header="cudnn-7.6.5.h", cudnn_lib="7.6.5")
    facts = run_probe(env=sandbox_env(tmp_path, CUDA_HOME=str(tk)))
    real_tk = os.path.realpath(tk)
    (planted,) = [t for t in facts["cuda"]["toolkits"] if t["path"] == real_tk]
    assert (planted["version"], planted["source"], planted["raw"]) == \
        ("10.0.130", "version.txt", "CUDA Version 10.0.130")
    if facts["cuda"]["nvcc"]["path"] is None:  # no other nvcc in /usr/bin on this machine
        assert facts["cuda"]["in_use"] == {"path": real_tk, "via": "CUDA_HOME"}
        assert facts["cuda"]["version"] == "10.0.130"
        assert facts["cudnn"]["version"] == "7.6.5"
    assert {"path": str(tk / "include" / "cudnn.h"), "version": "7.6.5"} in facts["cudnn"]["headers"]


def test_toolkit_without_version_files_is_read_from_its_nvcc(tmp_path):
    tk = plant_toolkit(tmp_path / "cuda-11.8", version_json=None, nvcc="nvcc-11.8.txt",
                       cudnn_header=None, cudnn_lib=None)
    facts = run_probe(env=sandbox_env(tmp_path, CUDA_HOME=str(tk)))
    (planted,) = [t for t in facts["cuda"]["toolkits"] if t["path"] == os.path.realpath(tk)]
    assert (planted["version"], planted["source"]) == ("11.8", "nvcc")
    assert "V11.8.89" in planted["raw"]


def test_garbage_from_every_tool_never_crashes_the_probe_and_keeps_the_raw_text(tmp_path):
    fake_bin = tmp_path / "fakebin"
    write_script(fake_bin / "nvidia-smi", "echo 'Segmentation fault (core dumped)'; echo '%%%% ,,, ;;'\n")
    write_script(fake_bin / "gcc", "echo 'gcc: fatal error: no input files'; exit 1\n")
    tk = tmp_path / "cuda-x"
    (tk / "bin").mkdir(parents=True)
    (tk / "version.json").write_text("{ this is not json")
    write_script(tk / "bin" / "nvcc", "echo 'nvcc: cannot open shared object file'\nexit 127\n")
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin, tk / "bin", CUDA_HOME=str(tk)))
    assert facts["driver"]["version"] is None and facts["gpus"] == []
    (planted,) = [t for t in facts["cuda"]["toolkits"] if t["path"] == os.path.realpath(tk)]
    assert planted["version"] is None
    assert any("version.json" in e for e in facts["errors"])
    assert facts["cuda"]["nvcc"]["version"] is None
    assert "cannot open shared object file" in facts["cuda"]["nvcc"]["raw"]
    assert {k: v for k, v in facts["gcc"].items() if k != "installed"} == {"version": None, "path": str(fake_bin / "gcc")}


@pytest.mark.skipif(REAL_DRIVER, reason="a real driver would answer before the stand-in")
def test_a_hanging_nvidia_smi_is_killed_at_the_timeout_with_its_children(tmp_path):
    fake_bin = tmp_path / "fakebin"
    write_script(fake_bin / "nvidia-smi", "sleep 300 & sleep 300\n")  # a grandchild holds the pipe
    start = time.monotonic()
    facts = run_probe("--timeout", "1", env=sandbox_env(tmp_path, fake_bin), timeout=60)
    assert time.monotonic() - start < 20
    assert any("nvidia-smi" in e and "timed out after 1 s" in e for e in facts["errors"])
    assert facts["driver"]["version"] is None


def test_a_grandchild_that_left_the_group_and_holds_the_pipe_does_not_hang_the_probe(tmp_path):
    fake_bin = tmp_path / "fakebin"
    # setsid: the grandchild is out of the process group the probe kills, and keeps stdout open
    write_script(fake_bin / "nvidia-smi", "setsid sleep 60 & sleep 300\n")
    start = time.monotonic()
    facts = run_probe("--timeout", "1", env=sandbox_env(tmp_path, fake_bin), timeout=55)
    assert time.monotonic() - start < 30
    assert any("nvidia-smi" in e and "timed out after 1 s" in e for e in facts["errors"])


@pytest.mark.skipif(REAL_DRIVER, reason="a real driver would answer before the stand-in")
def test_the_probes_commands_run_side_by_side_and_still_give_the_same_facts(tmp_path):
    """nvidia-smi, gcc and ldconfig are started before any of them is waited for (a node without
    persistence mode spends ~1 s in each nvidia-smi). ip is not started at all: the addresses
    come from rtnetlink (tests/node/test_probe_net.py)."""
    real_bin, fake_bin, log = tmp_path / "real", tmp_path / "fakebin", tmp_path / "calls.log"
    stand_in_nvidia_smi(real_bin, "535.104.05")
    tools = {"nvidia-smi": str(real_bin / "nvidia-smi")}
    for tool in ("gcc", "ldconfig"):
        tools[tool] = shutil.which(tool) or shutil.which(tool, path="/sbin:/usr/sbin")
    for tool, real in tools.items():
        assert real, "%s is needed on this machine for this test" % tool
        # each stand-in waits (up to 5 s) until three tools have started: run side by side they
        # all start at once, however loaded the machine; run one after another, the first one
        # ends before the second starts
        write_script(fake_bin / tool, 'echo "start %s" >> "%s"; n=0; '
                     'while [ "$(grep -c ^start "%s")" -lt 3 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done; '
                     '"%s" "$@"; rc=$?\n'
                     'echo "end %s" >> "%s"; exit $rc\n' % (tool, log, log, real, tool, log))
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin))
    lines = log.read_text().splitlines()
    first_end = next(i for i, line in enumerate(lines) if line.startswith("end"))
    assert first_end >= 3, lines  # sequential runs would alternate start, end, start, end
    assert facts["driver"]["version"] == "535.104.05" and facts["driver"]["cuda"]
    assert facts["gpus"] and facts["gcc"]["version"]
    assert any(i["name"] == "lo" and "127.0.0.1/8" in i["addrs"] for i in facts["interfaces"])
    assert not [e for e in facts["errors"] if "timed out" in e]


def test_packages_are_read_from_metadata_without_importing_torch(tmp_path):
    site = tmp_path / "site"
    plant_dist(site, "torch-1.1.0.dist-info", "torch", "1.1.0+cu100")
    poison(site, "torch")
    plant_dist(site, "torchvision-0.3.0-py3.6.egg-info", "torchvision", "0.3.0", egg=True)
    plant_dist(site, "nvidia_nccl_cu12-2.21.5.dist-info", "nvidia-nccl-cu12", "2.21.5")
    facts = run_probe(env=sandbox_env(tmp_path, PYTHONPATH=str(site), LD_LIBRARY_PATH=""))
    # PYTHONPATH comes first on sys.path: that torch is the one `import torch` would get
    torch = facts["packages"]["torch"]
    assert (torch["version"], torch["location"]) == ("1.1.0+cu100", str(site))
    assert all(s["location"] != str(site) for s in torch.get("shadows", []))
    assert facts["packages"]["torchvision"]["version"] == "0.3.0"
    assert facts["packages"]["nvidia-nccl-cu12"]["version"] == "2.21.5"
    assert facts["torch"] == {"version": "1.1.0", "local": "cu100", "cuda": "10.0",
                              "cuda_source": "local-tag"}
    if facts["nccl"]["source"] != "libnccl":  # a system libnccl would be preferred
        assert facts["nccl"] == {"version": "2.21.5", "source": "wheel"}


def test_targeted_package_scan_finds_odd_spellings_and_shadows_but_not_lookalikes(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for d, version in ((first, "2.1.0+cu121"), (second, "1.13.1")):
        meta = d / ("Torch-%s.dist-info" % version)  # directory names keep the author's case
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: %s\n" % version)
    (first / "nvidia_cudnn_cu12-8.9.2.26.egg-info").write_text(  # an egg-info that is a file
        "Metadata-Version: 1.1\nName: nvidia-cudnn-cu12\nVersion: 8.9.2.26\n")
    tb = first / "torch_tb_profiler-0.4.3.dist-info"  # a name that only starts like torch
    tb.mkdir()
    (tb / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-tb-profiler\nVersion: 0.4.3\n")
    broken = first / "torchaudio-2.1.0.dist-info"  # no METADATA: skipped, the rest still read
    broken.mkdir()
    facts = run_probe(env=sandbox_env(tmp_path, PYTHONPATH=os.pathsep.join([str(first), str(second)])))
    pkgs = facts["packages"]
    assert (pkgs["torch"]["version"], pkgs["torch"]["location"]) == ("2.1.0+cu121", str(first))
    assert {"version": "1.13.1", "location": str(second)} in pkgs["torch"]["shadows"]
    assert pkgs["nvidia-cudnn-cu12"]["version"] == "8.9.2.26"
    assert "torch-tb-profiler" not in pkgs and "torchaudio" not in pkgs


OLD = old_pythons()


@pytest.mark.parametrize("minor", ["3.6", "3.7", "3.8"])
def test_probe_runs_on_old_node_pythons_and_scans_site_packages_there(tmp_path, minor):
    if minor not in OLD:
        pytest.skip("no python%s on this machine" % minor)
    site = tmp_path / "site"
    dist = site / "torch-1.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 1.1.0\n")
    facts = run_probe(python=OLD[minor], env=sandbox_env(tmp_path, PYTHONPATH=str(site)))
    assert facts["python"]["version"].startswith(minor + ".")
    assert facts["packages"]["torch"]["version"] == "1.1.0"
    # no local tag: which CUDA PyPI's plain 1.1.0 was built for is the controller's call
    assert facts["torch"] == {"version": "1.1.0", "local": None, "cuda": None, "cuda_source": None}
    assert facts["errors"] == []


def test_probe_source_is_python_3_6_compatible_by_vermin():
    vermin = shutil.which("vermin") or shutil.which("vermin", path=os.path.dirname(sys.executable))
    if not vermin:
        pytest.skip("vermin is not installed")
    out = subprocess.run([vermin, "-t=3.6-", "--no-tips", "--violations", str(PROBE)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.torch
def test_deep_imports_torch_in_a_child_and_reports_no_gpu_here(tmp_path):
    torch = pytest.importorskip("torch")
    facts = run_probe("--deep", timeout=300)
    deep = facts["deep"]
    assert deep["error"] is None, deep
    assert deep["torch"] == torch.__version__
    assert deep["torch_cuda"] == torch.version.cuda
    if not torch.cuda.is_available():
        assert deep["cuda_available"] is False and deep["device_count"] == 0 and deep["ops"] == []
    else:
        assert len(deep["ops"]) == torch.cuda.device_count()
    assert facts["probe"]["deep"] is True


NVML_GPUS = [("NVIDIA A100-SXM4-80GB", "GPU-6a0f3b7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "00000000:07:00.0", (8, 0), 81920),
             ("NVIDIA A100-SXM4-80GB", "GPU-d4c3b2a1-9f8e-7d6c-5b4a-392817160504", "00000000:0F:00.0", (8, 0), 81920)]


def nvml_ready():
    if REAL_DRIVER:
        pytest.skip("a real driver would answer before the stand-in")
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the stand-in libnvidia-ml.so.1")
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed for this interpreter")


def test_driver_and_gpus_come_from_nvml_through_the_real_binding(tmp_path):
    nvml_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "535.104.05", 12020, NVML_GPUS)
    facts = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib)))
    assert facts["driver"] == {"version": "535.104.05", "source": "nvml", "cuda": "12.2",
                               "error": None, "raw": None, "state": "working",
                               # its file is named by soname only: the version is NVML's own
                               "userspace": {"version": "535.104.05", "source": "nvml-version",
                                             "library": str(lib / "libnvidia-ml.so.1")}}
    # identity fields; the health counters are checked in tests/node/test_probe_health.py
    assert [{k: v for k, v in g.items() if k != "health"} for g in facts["gpus"]] == [
        {"index": i, "name": n, "compute_capability": "8.0", "memory_mib": 81920, "uuid": u, "pci_bus_id": b}
        for i, (n, u, b, _, _) in enumerate(NVML_GPUS)]


def test_nvml_failing_falls_back_to_nvidia_smi_and_keeps_nvmls_reason(tmp_path):
    nvml_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "535.104.05", 12020, NVML_GPUS, init_error=9)
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "470.182.03")
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin, LD_LIBRARY_PATH=str(lib)))
    assert (facts["driver"]["version"], facts["driver"]["source"]) == ("470.182.03", "nvidia-smi")
    assert [g["name"] for g in facts["gpus"]] == ["Tesla T4"]

    facts = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib)))  # and no nvidia-smi that works
    assert facts["driver"]["version"] is None
    assert facts["driver"]["state"] == "module-not-loaded"
    assert facts["driver"]["nvml_error"] == {"code": 9, "text": "Driver Not Loaded"}
    assert facts["driver"]["error"].startswith(
        "NVIDIA driver 535.104.05 userspace installed, kernel module not loaded: NVML: Driver Not Loaded; ")


def without_pynvml(tmp_path: Path) -> str:
    """A PYTHONPATH entry that makes `import pynvml` fail, as on a node's system python3."""
    d = tmp_path / "no-pynvml"
    d.mkdir(exist_ok=True)
    (d / "pynvml.py").write_text("raise ImportError('not installed on this node')\n")
    return str(d)


def ctypes_ready():
    if REAL_DRIVER:
        pytest.skip("a real driver would answer before the stand-in")
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the stand-in libnvidia-ml.so.1")


def test_without_pynvml_the_driver_and_gpus_come_from_libnvidia_ml_through_ctypes(tmp_path):
    ctypes_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "550.127.05", 12040, NVML_GPUS[::-1])
    facts = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib), PYTHONPATH=without_pynvml(tmp_path)))
    assert facts["driver"] == {"version": "550.127.05", "source": "nvml-ctypes", "cuda": "12.4",
                               "error": None, "raw": None, "state": "working",
                               "userspace": {"version": "550.127.05", "source": "nvml-version",
                                             "library": str(lib / "libnvidia-ml.so.1")}}
    # identity fields; the health counters are checked in tests/node/test_probe_health.py
    assert [{k: v for k, v in g.items() if k != "health"} for g in facts["gpus"]] == [
        {"index": i, "name": n, "compute_capability": "8.0", "memory_mib": 81920, "uuid": u, "pci_bus_id": b}
        for i, (n, u, b, _, _) in enumerate(NVML_GPUS[::-1])]
    assert facts["errors"] == []


def test_ctypes_path_gives_the_same_facts_as_the_pynvml_binding(tmp_path):
    nvml_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "535.104.05", 12020, NVML_GPUS)
    by_binding = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib)))
    by_ctypes = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib), PYTHONPATH=without_pynvml(tmp_path)))
    assert (by_binding["driver"].pop("source"), by_ctypes["driver"].pop("source")) == ("nvml", "nvml-ctypes")
    assert by_ctypes["driver"] == by_binding["driver"] and by_ctypes["gpus"] == by_binding["gpus"]


def test_a_driver_without_the_pci_call_gives_no_bus_id_and_everything_else(tmp_path):
    ctypes_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "410.48", 10000, NVML_GPUS[:1], pci=False)
    facts = run_probe(env=sandbox_env(tmp_path, LD_LIBRARY_PATH=str(lib), PYTHONPATH=without_pynvml(tmp_path)))
    assert (facts["driver"]["version"], facts["driver"]["source"], facts["driver"]["cuda"]) == \
        ("410.48", "nvml-ctypes", "10.0")
    assert [(g["name"], g["uuid"], g["pci_bus_id"]) for g in facts["gpus"]] == [(NVML_GPUS[0][0], NVML_GPUS[0][1], None)]
    assert any("pci_bus_id of GPU 0" in e and "nvmlDeviceGetPciInfo_v3" in e for e in facts["errors"])


@pytest.mark.parametrize("code, message", [(9, "Driver Not Loaded"),
                                           (18, "RM has detected an NVML/RM version mismatch.")])
def test_ctypes_nvml_failing_falls_back_to_nvidia_smi_and_says_why(tmp_path, code, message):
    ctypes_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "535.104.05", 12020, NVML_GPUS, init_error=code)
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "470.182.03")
    env = sandbox_env(tmp_path, fake_bin, LD_LIBRARY_PATH=str(lib), PYTHONPATH=without_pynvml(tmp_path))
    facts = run_probe(env=env)
    assert (facts["driver"]["version"], facts["driver"]["source"], facts["driver"]["cuda"]) == \
        ("470.182.03", "nvidia-smi", "11.4")
    assert [g["name"] for g in facts["gpus"]] == ["Tesla T4"]

    (fake_bin / "nvidia-smi").unlink()
    facts = run_probe(env=env, hide=tmp_path / "hide")  # no nvidia-smi at all
    assert facts["driver"]["version"] is None
    state = "NVIDIA driver 535.104.05 userspace installed, kernel module not loaded" if code == 9 else \
        "Driver/library version mismatch (userspace 535.104.05, kernel module unknown)"
    assert facts["driver"]["state"] == ("module-not-loaded" if code == 9 else "mismatch")
    assert facts["driver"]["error"] == (
        "%s: nvidia-ml-py (pynvml) not installed; NVML via ctypes: nvmlInit_v2: %s; "
        "nvidia-smi not found; /proc/driver/nvidia/version absent (kernel module not loaded)" % (state, message))


def test_no_library_is_named_and_nvidia_smi_answers_instead(tmp_path):
    ctypes_ready()
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "535.104.05")
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin, LD_LIBRARY_PATH=str(tmp_path / "nowhere"),
                                      PYTHONPATH=without_pynvml(tmp_path)))
    assert (facts["driver"]["version"], facts["driver"]["source"]) == ("535.104.05", "nvidia-smi")
    (fake_bin / "nvidia-smi").unlink()
    facts = run_probe(env=sandbox_env(tmp_path, fake_bin, LD_LIBRARY_PATH=str(tmp_path / "nowhere"),
                                      PYTHONPATH=without_pynvml(tmp_path)), hide=tmp_path / "hide")
    assert "NVML via ctypes: NVML Shared Library Not Found (libnvidia-ml.so.1: " in facts["driver"]["error"]
    assert facts["driver"]["nvml_error"]["code"] == 12 and facts["driver"]["state"] == "no-userspace"


def test_a_hung_nvml_is_given_up_after_the_timeout_and_nvidia_smi_answers(tmp_path):
    ctypes_ready()
    lib = build_fake_nvml(tmp_path / "nvml", "535.104.05", 12020, NVML_GPUS, hang=True)
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "470.182.03")
    began = time.monotonic()
    facts = run_probe("--timeout", "1", env=sandbox_env(tmp_path, fake_bin, LD_LIBRARY_PATH=str(lib),
                                                        PYTHONPATH=without_pynvml(tmp_path)), timeout=60)
    assert time.monotonic() - began < 30  # the probe did not wait for the 300 s nvmlInit
    assert (facts["driver"]["version"], facts["driver"]["source"]) == ("470.182.03", "nvidia-smi")
    assert "NVML via ctypes: timed out after 1 s" in facts["errors"]


CUDA_TORCH_STAND_IN = '''
# Stands in for a CUDA build of torch on two GPUs, which cannot exist on this machine: the second
# GPU is too old for the build's kernels, as on a node of mixed GPU generations.
print("torch: some banner on stdout")
__version__ = "1.1.0"
class version:
    cuda = "10.0.130"
class backends:
    class cudnn:
        @staticmethod
        def version():
            return 7501
class _Nccl:
    @staticmethod
    def version():
        return 2402
class _T:
    def __init__(self, device):
        self.device = device
    def __mul__(self, k):
        return self
    def sum(self):
        return self
    def item(self):
        return 8.0
class cuda:
    nccl = _Nccl
    @staticmethod
    def is_available():
        return True
    @staticmethod
    def device_count():
        return 2
    @staticmethod
    def get_device_name(i):
        return ["Tesla V100-SXM2-16GB", "Tesla K80"][i]
    @staticmethod
    def get_device_capability(i):
        return [(7, 0), (3, 7)][i]
    @staticmethod
    def synchronize(i):
        pass
def ones(n, device):
    if device == "cuda:1":
        raise RuntimeError("CUDA error: no kernel image is available for execution on the device\\n"
                           "CUDA kernel errors might be asynchronously reported")
    return _T(device)
'''


def test_deep_reports_each_gpus_op_and_the_builds_versions_despite_stdout_noise(tmp_path):
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(CUDA_TORCH_STAND_IN)
    dist = site / "torch-1.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 1.1.0\n")
    facts = run_probe("--deep", env=sandbox_env(tmp_path, PYTHONPATH=str(site)))
    deep = facts["deep"]
    assert deep["error"] is None
    assert (deep["torch"], deep["torch_cuda"], deep["cudnn"], deep["nccl"]) == \
        ("1.1.0", "10.0.130", 7501, "2.4.2")
    assert deep["cuda_available"] is True and deep["device_count"] == 2
    assert deep["ops"] == [
        {"device": 0, "ok": True, "error": None, "name": "Tesla V100-SXM2-16GB", "capability": "7.0"},
        {"device": 1, "ok": False, "name": "Tesla K80", "capability": "3.7",
         "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device"}]
    assert any(e.startswith("arch_list: AttributeError") for e in deep["errors"])  # torch 1.1 had none
    assert facts["torch"] == {"version": "1.1.0", "local": None, "cuda": "10.0.130", "cuda_source": "deep"}
    assert facts["nccl"] == {"version": "2.4.2", "source": "torch"}


def test_deep_without_torch_says_so_and_keeps_the_rest(tmp_path):
    if not OLD:
        pytest.skip("no interpreter without torch on this machine")
    python = OLD[sorted(OLD)[0]]
    facts = run_probe("--deep", python=python, env=sandbox_env(tmp_path))
    assert facts["deep"]["error"] == "ModuleNotFoundError: No module named 'torch'"
    assert facts["torch"] is None and facts["python"]["executable"] == python
