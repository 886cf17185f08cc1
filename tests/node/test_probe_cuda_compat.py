"""The probe finds NVIDIA's forward-compatibility libraries (cuda-compat-X-Y: a libcuda built from
a newer driver, in /usr/local/cuda-X.Y/compat) and says whether the dynamic loader takes them,
which decides whether a newer CUDA runs on an older driver branch of a data-center GPU. The
files are planted (no cuda-compat package exists for this machine); the probe reads them as it
would the real ones, by name, never loading them."""
from __future__ import annotations

import json
import os

from tests.conftest import run_cli
from tests.node.probe_helpers import load_probe
from tests.node.test_probe_subprocess import run_probe, sandbox_env


def plant_compat(root, cuda="12.4", driver="550.54.15"):
    d = root / f"cuda-{cuda}" / "compat"
    d.mkdir(parents=True)
    (d / f"libcuda.so.{driver}").write_bytes(b"\x7fELF")
    os.symlink(f"libcuda.so.{driver}", d / "libcuda.so.1")
    return d


def plant_driver_libcuda(d, driver="470.182.03"):
    d.mkdir(parents=True)
    (d / f"libcuda.so.{driver}").write_bytes(b"\x7fELF")
    os.symlink(f"libcuda.so.{driver}", d / "libcuda.so.1")
    return d


def test_a_compat_directory_first_on_ld_library_path_is_what_the_loader_takes(tmp_path):
    compat = plant_compat(tmp_path)
    facts = run_probe("--only", "cuda_compat", env=sandbox_env(tmp_path, LD_LIBRARY_PATH=f"{compat}:/nowhere"))
    found = facts["cuda_compat"]
    assert (found["version"], found["via"]) == ("550.54.15", "LD_LIBRARY_PATH")
    assert found["path"] == str(compat / "libcuda.so.550.54.15")


def test_the_drivers_own_libcuda_first_means_no_compat_is_loaded(tmp_path):
    compat = plant_compat(tmp_path)
    own = plant_driver_libcuda(tmp_path / "nvidia" / "lib64")
    facts = run_probe("--only", "cuda_compat", env=sandbox_env(tmp_path, LD_LIBRARY_PATH=f"{own}:{compat}"))
    assert facts["cuda_compat"]["version"] is None and facts["cuda_compat"]["via"] is None


def test_installed_but_not_on_the_loaders_path_is_listed_not_loaded(tmp_path):
    probe = load_probe()
    compat = plant_compat(tmp_path / "usr-local")
    dirs = probe.compat_dirs(roots=(str(tmp_path / "usr-local"),), prefix=str(tmp_path / "env"))
    assert dirs == [str(compat)]
    got = probe.collect_cuda_compat("", [], dirs)
    assert got["version"] is None
    assert got["installed"] == [{"path": str(compat / "libcuda.so.550.54.15"), "version": "550.54.15"}]
    # the ldconfig cache pointing libcuda.so.1 into it: loaded (the 64-bit entry, not i386's)
    cache = [{"name": "libcuda.so.1", "flags": "libc6", "path": "/usr/lib/i386-linux-gnu/libcuda.so.1"},
             {"name": "libcuda.so.1", "flags": "libc6,x86-64", "path": str(compat / "libcuda.so.1")}]
    got = probe.collect_cuda_compat("", cache, dirs)
    assert (got["version"], got["via"]) == ("550.54.15", "ldconfig")


def test_check_judges_the_probes_compat_facts(tmp_path):
    """Probe facts through `envcheck check FACTS.json`: a T4 on R470 with a CUDA 12.1 torch runs only
    with cuda-compat; loaded: a note; looked and none loaded: an error (pytorch/pytorch#43058)."""
    compat = plant_compat(tmp_path, cuda="12.4", driver="550.54.15")
    stack = {"schema": 1, "origin": "probe", "driver": {"version": "470.182.03"},
             "gpus": [{"index": 0, "name": "Tesla T4", "compute_capability": "7.5"}],
             "torch": {"version": "2.1.0", "local": "cu121", "cuda": "12.1", "cuda_source": "local-tag"}}
    for ld, code, severity in ((str(compat), 0, "info"), ("", 1, "error")):
        found = run_probe("--only", "cuda_compat", env=sandbox_env(tmp_path, LD_LIBRARY_PATH=ld))["cuda_compat"]
        path = tmp_path / "facts.json"
        path.write_text(json.dumps(dict(stack, cuda_compat=found)))
        r = run_cli("check", str(path), "--json")
        assert r.returncode == code, r.stdout + r.stderr
        codes = {(f["code"], f["severity"]) for f in json.loads(r.stdout)["findings"]}
        want = "driver-forward-compat" if severity == "info" else "driver-too-old-for-torch"
        assert (want, severity) in codes, codes
