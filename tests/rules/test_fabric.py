"""Fabric rules over probe-shaped facts: fabric manager on NVSwitch boards, NVLinks, InfiniBand
ports and GPUDirect RDMA; and the fleet comparison of ports and NVLinks."""
from __future__ import annotations

from envcheck.model import ERROR, WARNING
from envcheck.rules.fleet import drift, fleet_findings
from tests.rules.test_health import findings, node

IB = [{"device": f"mlx5_{i}", "port": 1, "state": "4: ACTIVE", "phys_state": "5: LinkUp",
       "rate": "400 Gb/sec (4X NDR)", "link_layer": "InfiniBand"} for i in range(4)]


def hgx(**fm):
    f = node(8)
    f["health"].update(ib=[dict(p) for p in IB], modules={"nvidia_peermem": True, "nv_peer_mem": False},
                       nvswitches=4, fabric_manager={"running": True, "version": "535.104.05", **fm})
    for g in f["gpus"]:
        g["health"]["nvlink"] = {"up": 18, "down": []}
    return f


def codes(f):
    return [(x.code, x.severity) for x in findings(f)]


def test_a_healthy_hgx_node_has_no_fabric_findings():
    assert codes(hgx()) == []


def test_a_stopped_fabric_manager_fails_with_the_cuda_error_it_causes():
    [x] = findings(hgx(running=False))
    assert (x.code, x.severity) == ("fabric-manager-down", ERROR)
    assert "system not yet initialized" in x.message and "4 NVSwitch" in x.message
    assert "systemctl enable --now nvidia-fabricmanager" in x.fix and "535.104.05" in x.fix


def test_a_fabric_manager_of_another_version_than_the_driver_fails():
    [x] = findings(hgx(version="535.86.10"))
    assert x.code == "fabric-manager-version-mismatch" and "535.86.10 runs with driver 535.104.05" in x.message


def test_no_nvswitch_means_no_fabric_manager_is_needed():
    f = hgx(running=False)
    f["health"]["nvswitches"] = 0
    assert codes(f) == []


def test_an_nvlink_down_names_the_gpu_and_the_link():
    f = hgx()
    f["gpus"][5]["health"]["nvlink"] = {"up": 16, "down": [3, 11]}
    [x] = findings(f)
    assert (x.code, x.severity) == ("nvlink-down", ERROR) and "GPU 5 (0000:57:00)" in x.message
    assert "3, 11 down (16 up)" in x.message
    f["health"]["nvswitches"] = 0   # PCIe cards: an inactive link may have no bridge on it
    assert codes(f) == []


def test_a_down_ib_port_warns_and_all_down_fails():
    f = hgx()
    f["health"]["ib"][2].update(state="1: DOWN", phys_state="3: Disabled")
    [x] = findings(f)
    assert (x.code, x.severity) == ("ib-port-not-active", WARNING) and "mlx5_2/1 (1: DOWN, 3: Disabled)" in x.message
    for p in f["health"]["ib"]:
        p["state"] = "1: DOWN"
    assert codes(f) == [("ib-port-not-active", ERROR)]


def test_infiniband_without_nvidia_peermem_warns_that_gpudirect_rdma_is_off():
    f = hgx()
    f["health"]["modules"] = {"nvidia_peermem": False, "nv_peer_mem": False}
    [x] = findings(f)
    assert x.code == "gpudirect-rdma-off" and "modprobe nvidia_peermem" in x.fix
    f["health"]["ib"] = [dict(p, link_layer="Ethernet") for p in IB]  # RoCE only: not judged
    assert codes(f) == []


def test_the_fleet_names_the_node_with_fewer_active_ports_and_the_one_with_fewer_nvlinks():
    hosts = {f"node0{i}": hgx() for i in range(1, 5)}
    hosts["node02"]["health"]["ib"][0]["state"] = "1: DOWN"
    hosts["node04"]["gpus"][0]["health"]["nvlink"] = {"up": 17, "down": [0]}
    rows = {r.key: r for r in drift(hosts)}
    assert rows["ib_ports"].odd == ["node02"] and rows["ib_ports"].values["node01"] == "4x ACTIVE 400 Gb/sec (4X NDR)"
    assert rows["nvlinks"].odd == ["node04"] and rows["nvlinks"].values["node04"] == "7x 18 up, 1x 17 up"
    named = {(x.host, x.code) for x in fleet_findings(hosts) if x.component == "health"}
    assert named == {("node02", "fleet-ib_ports-mismatch"), ("node04", "fleet-nvlinks-mismatch")}


# ---- each finding whole, the rule called alone (each seen to fail on a planted change: bench/mutation.py)

from envcheck.rules import fabric as fb  # noqa: E402
from envcheck.rules.health import src  # noqa: E402
from tests.rules.test_health import M  # noqa: E402

NOT_READY = "'CUDA error: system not yet initialized' (cudaErrorSystemNotReady, 802)"


def whole(xs):
    return [(x.severity, x.code, x.component, x.message, x.fix, x.source) for x in xs]


def test_a_stopped_fabric_manager_whole_with_and_without_a_known_driver():
    down = (f"4 NVSwitch(es) on the PCI bus but nv-fabricmanager is not running: the GPUs never join the NVLink "
            f"fabric and every CUDA call fails with {NOT_READY}.")
    assert src("fm_not_ready")
    assert whole(fb.fabric_manager(hgx(running=False), M)) == [(
        ERROR, "fabric-manager-down", "health", down,
        "sudo systemctl enable --now nvidia-fabricmanager (the package for driver 535.104.05)", src("fm_not_ready"))]
    f = hgx(running=False)
    f["driver"] = {}
    assert whole(fb.fabric_manager(f, M))[0][4] == (
        "sudo systemctl enable --now nvidia-fabricmanager (the package for driver in use)")


def test_a_fabric_manager_of_another_version_whole_and_none_when_either_version_is_unknown():
    assert src("fm_mismatch")
    assert whole(fb.fabric_manager(hgx(version="535.86.10"), M)) == [(
        ERROR, "fabric-manager-version-mismatch", "health",
        "nv-fabricmanager 535.86.10 runs with driver 535.104.05: it refuses a driver of another version ('fabric "
        f"manager NVIDIA GPU driver interface version ... don't match with driver version'), leaving CUDA with "
        f"{NOT_READY}.", "install nvidia-fabricmanager 535.104.05 (same version as the driver) and restart it",
        src("fm_mismatch"))]
    assert fb.fabric_manager(hgx(version=None), M) == []
    f = hgx(version="535.86.10")
    f["driver"] = {}
    assert fb.fabric_manager(f, M) == []
    f = hgx(running=False)
    f["health"]["fabric_manager"] = {}          # not probed: nothing said
    assert fb.fabric_manager(f, M) == []


def test_an_nvlink_down_whole_its_up_count_unknown():
    f = hgx()
    f["gpus"][5]["health"]["nvlink"] = {"down": [3, 11]}
    assert src("azure_nvlink")
    assert whole(fb.nvlinks(f, M)) == [(
        ERROR, "nvlink-down", "health",
        "GPU 5 (0000:57:00) has NVLink(s) 3, 11 down (0 up): peer-to-peer traffic to it slows or fails, and NCCL "
        "rings through it stall.",
        "drain the node (scontrol update nodename=NODE state=drain reason=gpu-health); reset the GPU or reboot; "
        "check `nvidia-smi nvlink -s` and the baseboard, and open a hardware ticket if the link stays down",
        src("azure_nvlink"))]


def test_a_down_ib_port_whole_and_an_active_one_is_any_state_naming_active():
    f = hgx()
    f["health"]["ib"][2].update(state="1: DOWN", phys_state="3: Disabled")
    f["health"]["ib"][1].update(state="ACTIVE")
    assert src("azure_ib")
    assert whole(fb.ib(f, M)) == [(
        WARNING, "ib-port-not-active", "health",
        "1 of 4 InfiniBand/RoCE port(s) are not ACTIVE: mlx5_2/1 (1: DOWN, 3: Disabled). NCCL skips them (less "
        "bandwidth) or, with NCCL_IB_HCA naming them, fails to connect.",
        "check the cable and the switch port (ibstat, `ibportstate`), and that a subnet manager runs on the fabric; "
        "rerun `envcheck doctor`", src("azure_ib"))]


def test_gpudirect_rdma_off_whole_and_only_beside_infiniband_and_gpus_with_the_module_known_absent():
    f = hgx()
    f["health"]["modules"] = {"nvidia_peermem": False, "nv_peer_mem": False}
    assert src("azure_gdr")
    assert whole(fb.ib(f, M)) == [(
        WARNING, "gpudirect-rdma-off", "health",
        "InfiniBand is present but nvidia_peermem (or nv_peer_mem) is not loaded: GPUDirect RDMA is off, so NCCL "
        "stages every inter-node transfer through host memory (lower bandwidth, more CPU).",
        "sudo modprobe nvidia_peermem, and list it in /etc/modules-load.d/ so it loads at boot", src("azure_gdr"))]
    f["gpus"] = []
    assert fb.ib(f, M) == []
    f = hgx()
    del f["health"]["modules"]                    # not probed: nothing said
    assert fb.ib(f, M) == []


def test_several_down_ports_are_listed_one_after_the_other():
    f = hgx()
    f["health"]["ib"][0].update(state="1: DOWN", phys_state="3: Disabled")
    f["health"]["ib"][3].update(state=None, phys_state=None)       # no state read: not ACTIVE either
    (x,) = fb.ib(f, M)
    assert x.message.startswith("2 of 4 InfiniBand/RoCE port(s) are not ACTIVE: mlx5_0/1 (1: DOWN, 3: Disabled), "
                                "mlx5_3/1 (None, None). ")
