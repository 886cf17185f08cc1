"""`envcheck audit` over SSH on simulated hosts that share this machine's /usr, where
tests/nvidia_userspace.sh installed Debian's real NVIDIA userspace: node01 sees it (a GPU node
whose driver packages are installed but whose kernel module is not loaded, with the packaged CUDA
11.8 toolkit), node02 does not (a machine that never had it: the no-driver path as it always
was), node03 sees it with a kernel module of another version loaded (a driver upgraded without
the reboot)."""
from __future__ import annotations

import json
import os

import pytest

from envcheck.facts import schema as F
from envcheck.report import render_facts
from tests.cluster import standins
from tests.conftest import run_cli
from tests.node.probe_helpers import FIXTURES
from tests.node.userspace import require_userspace, upstream

MODULE_575 = (FIXTURES / "misc" / "proc-driver-version-575.57.08-open.txt").read_text()


@pytest.fixture(scope="module")
def trio(cluster_factory):
    require_userspace()
    c = cluster_factory(3)
    standins.show_nvidia_userspace(c["node01"])
    standins.show_nvidia_userspace(c["node03"])
    standins.set_kernel_module(c["node03"], MODULE_575)
    yield c
    c.close()


@pytest.fixture(scope="module")
def audited(trio):
    proc = run_cli("audit", "--ssh-config", str(trio.ssh_config), "--connect-timeout", "3", "--json",
                   trio.hostlist, timeout=180)
    doc = json.loads(proc.stdout)
    assert [h["error"] for h in doc["hosts"]] == [None, None, None], proc.stderr
    return proc, {h["host"]: h for h in doc["hosts"]}


def codes(host, component="driver"):
    return {f["code"]: f for f in host["findings"] if f["component"] == component}


def test_a_host_with_the_packages_says_which_userspace_is_installed_and_that_the_module_is_not_loaded(audited):
    versions = require_userspace()
    want = upstream(versions["libnvidia-ml1"])
    node01 = audited[1]["node01"]
    drv = node01["facts"]["driver"]
    assert drv["state"] == "module-not-loaded" and drv["userspace"]["version"] == want
    assert drv["nvml_error"] == {"code": 9, "text": "Driver Not Loaded"}  # the real library, over SSH
    assert drv["smi_state"] == "module-not-loaded"  # the real nvidia-smi
    (f,) = codes(node01).values()
    assert f["code"] == "driver-module-not-loaded" and f["severity"] == "warning"  # PCI bus not known
    assert f["message"].startswith(f"NVIDIA driver {want} userspace installed, kernel module not loaded")
    assert "dkms status" in f["fix"] and "modprobe nvidia" in f["fix"]


def test_a_host_with_the_packages_audits_the_debian_toolkit_as_cuda_11_8_89_in_usr(audited):
    versions = require_userspace()
    cuda = audited[1]["node01"]["facts"]["cuda"]
    assert (cuda["version"], cuda["nvcc"]["build"]) == ("11.8", upstream(versions["nvidia-cuda-toolkit"]))
    assert cuda["in_use"] == {"path": "/usr", "via": "PATH"} and cuda["nvcc"]["path"] == "/usr/bin/nvcc"
    (usr,) = [t for t in cuda["toolkits"] if t["path"] == "/usr"]
    assert (usr["layout"], usr["include"], usr["package"]["version"]) == \
        ("distro", "/usr/include", versions["nvidia-cuda-toolkit"])
    assert cuda["torch_cuda_home"] == {"path": "/usr", "via": "nvcc on PATH"}
    hc = cuda["nvcc"]["host_compiler"]
    assert hc["how"] == "nvcc.profile PATH" and hc["version"].startswith("11.")


def test_the_debian_toolkit_draws_no_false_gcc_too_new(audited):
    if not hasattr(F, "host_compiler"):
        pytest.skip("the gcc rule here still judges the first gcc on PATH, not nvcc's host compiler")
    node01 = audited[1]["node01"]
    assert node01["facts"]["gcc"]["version"].split(".")[0] == "12"  # the system's default gcc
    assert "gcc-too-new" not in codes(node01, "gcc")


def test_a_host_without_the_packages_and_without_nvidia_gpus_is_a_cpu_machine(audited):
    node02 = audited[1]["node02"]
    drv = node02["facts"]["driver"]
    assert (drv["state"], drv["userspace"]) == ("no-userspace", None)
    assert drv["error"].startswith("no NVIDIA driver found: nvidia-ml-py (pynvml) not installed; "
                                   "NVML via ctypes: NVML Shared Library Not Found")
    assert "nvidia-smi not found" in drv["error"]
    (f,) = codes(node02).values()
    # the probe read the PCI bus (no NVIDIA device here): a CPU machine is a note, not a warning
    assert node02["facts"]["health"]["pci"] == []
    assert (f["code"], f["severity"]) == ("driver-not-found", "info")
    assert "no NVIDIA GPU on the PCI bus: a CPU machine" in f["message"]
    assert node02["facts"]["cuda"]["nvcc"]["path"] is None  # no Debian toolkit either


def test_a_module_of_another_version_is_a_version_mismatch_error(audited):
    versions = require_userspace()
    node03 = audited[1]["node03"]
    drv = node03["facts"]["driver"]
    assert drv["state"] == "mismatch" and drv["kernel_module"] == "575.57.08"
    f = codes(node03)["driver-version-mismatch"]
    assert f["severity"] == "error"
    assert (f"installed userspace is {upstream(versions['libnvidia-ml1'])}, the loaded kernel module 575.57.08"
            in f["message"])
    assert f["fix"].startswith("reboot")
    assert audited[0].returncode == 1  # an error finding


def test_the_summary_and_the_facts_table_say_it_in_words(trio, audited):
    versions = require_userspace()
    want = upstream(versions["libnvidia-ml1"])
    proc = run_cli("audit", "--ssh-config", str(trio.ssh_config), "--connect-timeout", "3", "node01",
                   timeout=120)
    # one remote host prints its facts table and findings, as a local audit does
    assert f"driver       {want} userspace installed, kernel module not loaded" in proc.stdout
    assert (f"WARNING driver      driver-module-not-loaded: NVIDIA driver {want} userspace installed, "
            "kernel module not loaded") in proc.stdout
    table = render_facts(audited[1]["node01"]["facts"])
    assert f"driver       {want} userspace installed, kernel module not loaded" in table
    assert "cuda         11.8 in use (via PATH: /usr), nvcc V11.8.89" in table
    assert f"distribution package nvidia-cuda-toolkit {versions['nvidia-cuda-toolkit']}" in table
    assert "driver       version mismatch: userspace %s, kernel module 575.57.08" % want in \
        render_facts(audited[1]["node03"]["facts"])


def test_ldconfig_on_a_host_that_hides_the_userspace_leaves_the_shared_usr_alone(trio):
    require_userspace()
    link = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
    assert not trio["node02"].exists(link)  # hidden there ...
    trio["node02"].run_local("ldconfig")
    assert os.path.lexists(link) and os.path.exists(link)  # ... and still here, resolving
    assert trio["node01"].exists(link)
