"""Fabric rules: what NCCL needs between GPUs and between nodes. On NVSwitch boards the fabric
manager must run at the driver's version, and every NVLink must be up; InfiniBand/RoCE ports
must be ACTIVE, and GPUDirect RDMA (nvidia_peermem) loaded where there is InfiniBand.

Pure functions of the facts (envcheck/facts/schema.py "health"); sources in health_catalog.yaml.
"""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules.health import DRAIN, _gpu_label, src

NOT_READY = "'CUDA error: system not yet initialized' (cudaErrorSystemNotReady, 802)"


def fabric_manager(f: F.Facts, m: Matrix) -> List[Finding]:
    n = F.nvswitches(f)
    fm = F.fabric_manager(f)
    if not n or not fm:
        return []
    driver = F.driver_version(f)
    if not fm.get("running"):
        return [Finding(
            ERROR, "fabric-manager-down", "health",
            f"{n} NVSwitch(es) on the PCI bus but nv-fabricmanager is not running: the GPUs never join "
            f"the NVLink fabric and every CUDA call fails with {NOT_READY}.",
            f"sudo systemctl enable --now nvidia-fabricmanager (the package for driver {driver or 'in use'})",
            src("fm_not_ready"))]
    if fm.get("version") and driver and fm["version"] != driver:
        return [Finding(
            ERROR, "fabric-manager-version-mismatch", "health",
            f"nv-fabricmanager {fm['version']} runs with driver {driver}: it refuses a driver of another "
            f"version ('fabric manager NVIDIA GPU driver interface version ... don't match with driver "
            f"version'), leaving CUDA with {NOT_READY}.",
            f"install nvidia-fabricmanager {driver} (same version as the driver) and restart it",
            src("fm_mismatch"))]
    return []


def nvlinks(f: F.Facts, m: Matrix) -> List[Finding]:
    """Links down on an NVSwitch board, where every link of every GPU is wired and must be up.
    Elsewhere (PCIe cards with bridges on some links) an inactive link may be unwired, so only
    the cross-node comparison of link counts judges it."""
    if not F.nvswitches(f):
        return []
    out = []
    for g in F.gpus(f):
        nv = F.gpu_health(g).get("nvlink")
        if isinstance(nv, dict) and nv.get("down"):
            down = nv["down"]
            out.append(Finding(
                ERROR, "nvlink-down", "health",
                f"{_gpu_label(g)} has NVLink(s) {', '.join(str(x) for x in down)} down ({nv.get('up', 0)} up): "
                f"peer-to-peer traffic to it slows or fails, and NCCL rings through it stall.",
                f"{DRAIN}; reset the GPU or reboot; check `nvidia-smi nvlink -s` and the baseboard, and open a "
                f"hardware ticket if the link stays down", src("azure_nvlink")))
    return out


def ib(f: F.Facts, m: Matrix) -> List[Finding]:
    ports = F.ib_ports(f)
    if not ports:
        return []
    out = []
    down = [p for p in ports if "ACTIVE" not in str(p.get("state") or "")]
    if down:
        names = ", ".join(f"{p.get('device')}/{p.get('port')} ({p.get('state')}, {p.get('phys_state')})" for p in down)
        out.append(Finding(
            WARNING if len(down) < len(ports) else ERROR, "ib-port-not-active", "health",
            f"{len(down)} of {len(ports)} InfiniBand/RoCE port(s) are not ACTIVE: {names}. NCCL skips them "
            f"(less bandwidth) or, with NCCL_IB_HCA naming them, fails to connect.",
            "check the cable and the switch port (ibstat, `ibportstate`), and that a subnet manager runs on "
            "the fabric; rerun `envcheck doctor`", src("azure_ib")))
    ib_link = any(str(p.get("link_layer") or "") == "InfiniBand" for p in ports)
    if ib_link and F.gpus(f) and F.peer_memory_loaded(f) is False:
        out.append(Finding(
            WARNING, "gpudirect-rdma-off", "health",
            "InfiniBand is present but nvidia_peermem (or nv_peer_mem) is not loaded: GPUDirect RDMA is off, "
            "so NCCL stages every inter-node transfer through host memory (lower bandwidth, more CPU).",
            "sudo modprobe nvidia_peermem, and list it in /etc/modules-load.d/ so it loads at boot",
            src("azure_gdr")))
    return out


RULES = [fabric_manager, nvlinks, ib]
