"""GPU and link health through `envcheck doctor` on the simulated cluster: real sshd, the real
probe and rules. Each node gets a private PCI bus (a sysfs tree bind-mounted over
/sys/bus/pci/devices), a private kernel log (a file bind-mounted over /dev/kmsg) and the fake
NVML with per-GPU health. One fault per node; each must be named with its node, cause, fix and
verdict, and the clean node must pass."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cluster.standins import (gpu_list, pci_gpu, plant_driver, plant_kernel_log, plant_pci_bus,
                                   plant_python_package, show_nvidia_userspace)
from tests.conftest import REPO, run_cli

prom_parser = pytest.importorskip("prometheus_client.parser")
junitparser = pytest.importorskip("junitparser")

KMSG = REPO / "tests" / "fixtures" / "kmsg"
DCGM = REPO / "tests" / "fixtures" / "dcgm"
CLEAN_LOG = (KMSG / "clean.kmsg").read_text()
# node04's GPU 1 is at 0000:17:00.0: the real Xid 79 line, readdressed to it
XID79_LOG = CLEAN_LOG + (KMSG / "xid79.kmsg").read_text().replace("2b:00", "17:00")


def sysfs(gpus, width=None):
    """The PCI functions of these GPUs; width={index: lanes} degrades a link."""
    out = []
    for i, g in enumerate(gpus):
        addr = g["pci_bus_id"][4:].lower()  # 00000000:07:00.0 -> 0000:07:00.0
        out.append(pci_gpu(addr, width=(width or {}).get(i, 16)))
    return out


def setup(host):
    gpus = gpu_list("A100", 2)
    on_bus = sysfs(gpus)
    log = CLEAN_LOG
    if host.name == "node01":
        on_bus = sysfs(gpus, width={1: 8})
    elif host.name == "node02":
        gpus = gpus[:1]                      # NVML lists one, the bus has two
    elif host.name == "node03":
        gpus[0]["health"] = {"ecc_vol_unc": 4, "ecc_agg_unc": 4}
    elif host.name == "node04":
        log = XID79_LOG
    # a machine with Debian's nvidia-cuda-toolkit would lend every host its /usr/bin/nvcc (11.8,
    # which refuses the machine's gcc 12): these nodes have no toolkit, so the verdicts are the GPUs'
    host.run_local("[ ! -e /usr/bin/nvcc ] || mount --bind /dev/null /usr/bin/nvcc")
    plant_driver(host, "535.104.05", gpus)
    # a CUDA torch that imports (metadata and torch.__version__: the real one needs a GPU): the
    # subject here is the GPUs, and doctor FAILs a node whose torch does not import
    plant_python_package(host, "torch", "2.3.1+cu121", torch_cuda="12.1", importable=True)
    plant_pci_bus(host, on_bus)
    plant_kernel_log(host, log)
    # a stand-in dcgmi on two nodes (failing on node01, passing on node05); the others have none
    fixture = {"node01": "diag-r2-3.x-fail.json", "node05": "diag-r1-4.x-pass.json"}.get(host.name)
    if fixture:
        host.write_file("/usr/local/share/envcheck-sim/dcgm.json", (DCGM / fixture).read_text())
        host.write_file("/usr/local/bin/dcgmi", '#!/bin/sh\n[ "$1 $2" = "diag -r" ] || exit 9\n'
                        'cat /usr/local/share/envcheck-sim/dcgm.json\n', mode=0o755)


@pytest.fixture(scope="module")
def c5(cluster_factory):
    c = cluster_factory(5, per_host_setup=setup)
    c.trust_all_host_keys()
    yield c
    c.close()


def doctor(c, *extra):
    p = run_cli("doctor", c.hostlist, "--ssh-config", str(c.ssh_config), "--quick", "--no-deep",
                "--connect-timeout", "15", "--json", *extra, timeout=300)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"not JSON (rc {p.returncode}): {p.stdout[-500:]} {p.stderr[-2000:]}")


def health_check(doc, host):
    [c] = [c for c in doc["checks"] if c["host"] == host and c["check"] == "health"]
    return c


def test_doctor_names_each_gpu_fault_with_its_node_fix_and_verdict(c5, tmp_path):
    p, doc = doctor(c5, "--junit", str(tmp_path / "d.xml"), "--prometheus", str(tmp_path / "d.prom"))
    v = {n["host"]: n["verdict"] for n in doc["nodes"]}
    checks = {h: health_check(doc, h) for h in v}

    # the node's own rule, and the fleet comparison naming it against the majority's 2x x16
    assert checks["node01"]["status"] == "WARN"
    assert set(checks["node01"]["code"].split(",")) == {"pcie-link-width-degraded", "fleet-pcie_width-mismatch"}
    assert "GPU 0000:17:00.0" in checks["node01"]["message"] and "x8 of x16" in checks["node01"]["message"]
    assert "reseat" in checks["node01"]["fix"]

    assert checks["node02"]["status"] == "FAIL" and checks["node02"]["code"] == "gpu-missing-from-driver"
    assert "0000:17:00.0" in checks["node02"]["message"] and "power-cycle" in checks["node02"]["fix"]

    assert checks["node03"]["status"] == "FAIL" and checks["node03"]["code"] == "gpu-ecc-uncorrectable"
    assert "GPU 0 (0000:07:00) has 4 uncorrectable ECC" in checks["node03"]["message"]
    assert "nvidia-smi -r -i 0" in checks["node03"]["fix"]

    assert checks["node04"]["status"] == "FAIL" and checks["node04"]["code"] == "xid-79"
    assert "0000:17:00" in checks["node04"]["message"] and "fallen off the bus" in checks["node04"]["message"]
    assert "power-cycle" in checks["node04"]["fix"]

    assert checks["node05"]["status"] == "PASS", checks["node05"]
    assert v == {"node01": "WARN", "node02": "FAIL", "node03": "FAIL", "node04": "FAIL", "node05": "PASS"}, doc["nodes"]
    assert doc["verdict"] == "FAIL" and p.returncode == 1

    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "d.xml"))
    failed = {s.name for s in xml for case in s if case.name == "health" and not case.is_passed}
    assert failed == {"node02", "node03", "node04"}
    fams = {f.name: f for f in prom_parser.text_string_to_metric_families((tmp_path / "d.prom").read_text())}
    ecc = {(s.labels["host"], s.labels["gpu"]): s.value for s in fams["envcheck_gpu_ecc_uncorrected_volatile"].samples}
    assert ecc[("node03", "0000:07:00")] == 4 and ecc[("node05", "0000:07:00")] == 0
    width = {(s.labels["host"], s.labels["gpu"]): s.value for s in fams["envcheck_gpu_pcie_link_width"].samples}
    assert width[("node01", "0000:17:00")] == 8 and width[("node05", "0000:17:00")] == 16
    xid = {s.labels["host"]: s.value for s in fams["envcheck_xid_events"].samples if s.labels.get("xid") == "79"}
    assert xid == {"node04": 1}
    gpus = {s.labels["host"]: s.value for s in fams["envcheck_gpus_missing_from_driver"].samples}
    assert gpus["node02"] == 1 and gpus["node05"] == 0


def test_a_degraded_link_warns_and_fails_only_under_strict(c5):
    args = ("doctor", "node01", "--ssh-config", str(c5.ssh_config), "--quick", "--no-deep", "--connect-timeout", "15")
    relaxed, strict = run_cli(*args, timeout=120), run_cli(*args, "--strict", timeout=120)
    assert (relaxed.returncode, strict.returncode) == (0, 1), relaxed.stdout + strict.stdout
    assert "x8 of x16" in relaxed.stdout and "WARN" in relaxed.stdout


def test_gpus_per_node_fails_the_node_short_of_gpus_and_passes_the_full_ones(c5):
    p, doc = doctor(c5, "--gpus-per-node", "2")
    codes = {h: health_check(doc, h)["code"].split(",") for h in ("node02", "node05")}
    assert "gpu-count-unexpected" in codes["node02"] and "gpu-missing-from-driver" in codes["node02"]
    assert health_check(doc, "node05")["status"] == "PASS"
    p, doc = doctor(c5, "--gpus-per-node", "4")
    assert "Expected 4 GPUs on this node; the driver lists 2, the PCI bus has 2" in health_check(doc, "node05")["message"]


def test_dcgm_level_2_fails_the_node_whose_diagnostic_fails_and_says_where_it_was_skipped(c5):
    p, doc = doctor(c5, "--dcgm", "2")
    dcgm = {c["host"]: c for c in doc["checks"] if c["check"] == "dcgm"}
    assert dcgm["node01"]["status"] == "FAIL" and "PCIe (GPU 1)" in dcgm["node01"]["message"]
    assert dcgm["node05"]["status"] == "PASS"
    assert {h for h, c in dcgm.items() if c["status"] == "SKIP"} == {"node02", "node03", "node04"}
    assert "dcgm: skipped on node02, node03, node04 (dcgmi not found)" in doc["notes"]
    v = {n["host"]: n["verdict"] for n in doc["nodes"]}
    assert v["node01"] == "FAIL" and v["node05"] == "PASS"


def test_gpus_on_the_bus_without_a_loaded_driver_fail_the_node_with_the_drivers_reason(make_cluster):
    """No stand-in driver: the probe meets whatever libnvidia-ml/nvidia-smi the machine has (Debian's
    real ones answer 'Driver Not Loaded' where they are installed; elsewhere the library is missing)."""
    real = Path("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").exists()

    def setup(h):
        plant_pci_bus(h, [pci_gpu("0000:07:00.0"), pci_gpu("0000:17:00.0")])
        plant_kernel_log(h, CLEAN_LOG)
        if real:  # the simulated hosts hide the machine's NVIDIA userspace unless shown
            show_nvidia_userspace(h)
    c = make_cluster(1, per_host_setup=setup)
    c.trust_all_host_keys()
    p, doc = doctor(c)
    # one finding, with the fix for the driver's state: the driver check's, not the health check's too
    [check] = [x for x in doc["checks"] if x["host"] == "node01" and x["check"] == "driver"]
    want = "driver-module-not-loaded" if real else "driver-not-found"
    assert check["status"] == "FAIL" and check["code"] == want, check
    assert "The PCI bus has 2 NVIDIA GPUs (NVIDIA A100 SXM4 80GB) at 0000:07:00.0, 0000:17:00.0" in check["message"]
    if real:
        assert "Driver Not Loaded" in check["message"]
    assert health_check(doc, "node01")["status"] == "PASS"
    assert p.returncode == 1
