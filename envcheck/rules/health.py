"""Hardware health rules: the faults that make one node hang or crawl while every version is
right. A GPU on the PCI bus the driver does not see, uncorrectable memory errors and pending row
remaps, Xid errors in the kernel log, PCIe links below their maximum, throttling and GPU modes.

Thresholds and NVIDIA's Xid catalogue live in health_catalog.yaml beside this module, each with
its source. Pure functions of the facts (envcheck/facts/schema.py: "health", gpus[].health).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

from envcheck import inputs
from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, INFO, WARNING, Finding
from envcheck.rules import driver_state

CATALOG = Path(__file__).with_name("health_catalog.yaml")
SEVERITY = {"error": ERROR, "warning": WARNING, "info": INFO}
DRAIN = "drain the node (scontrol update nodename=NODE state=drain reason=gpu-health)"


@lru_cache(maxsize=1)
def catalog() -> Dict[str, Any]:
    packaged = inputs.compiled(CATALOG)  # the wheel's, compiled when it was built (issue 26)
    if packaged is not None:
        return packaged
    import yaml  # lazy: PyYAML costs ~17 ms CPU to load (-X importtime, issue 26); most judged facts need no catalogue
    # libyaml's parser where PyYAML has it (as matrix/load.py): yaml.safe_load's pure-Python one
    # took ~35 ms of every judged command's CPU for this file (`check`'s whole run is ~150 ms)
    return yaml.load(CATALOG.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


def src(name: str) -> str:
    return str(catalog()["sources"].get(name, ""))


def bdf(address: Any) -> Optional[str]:
    """'00000000:07:00.0' (NVML), '0000:07:00.0' (sysfs), '0000:07:00' (Xid) -> '0000:07:00'."""
    m = re.match(r"^\s*(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})", str(address or ""))
    if not m:
        return None
    return "%04x:%s:%s" % (int(m.group(1) or "0", 16), m.group(2).lower(), m.group(3).lower())


def _gpu_label(g: Dict[str, Any]) -> str:
    where = bdf(g.get("pci_bus_id"))
    return f"GPU {g.get('index', '?')}" + (f" ({where})" if where else "")


def _smi_id(g: Dict[str, Any]) -> str:
    """What `nvidia-smi -i` takes for this GPU: its index, else its PCI bus id (-i takes either),
    never another GPU's index."""
    index = g.get("index")
    return str(index) if index is not None else str(g.get("pci_bus_id") or "<index>")


def _hex_id(value: Any, unknown: str) -> str:
    """'0x20b2' (sysfs) -> '20b2', as `lspci -n` shows it; `unknown` where sysfs gave nothing."""
    return str(value)[2:] if value else unknown


def gpu_count(f: F.Facts, m: Matrix) -> List[Finding]:
    """NVIDIA GPUs on the PCI bus that a working driver (NVML / nvidia-smi) does not list."""
    pci = F.pci_gpus(f)
    if not pci:
        return []  # the bus was not read, or has no NVIDIA GPU
    if not F.driver_version(f) or driver_state.handled_here(f):
        return []  # no working driver: the driver rules' one finding, with the fix for its state
    seen = {bdf(g.get("pci_bus_id")) for g in F.gpus(f)}
    missing = [d for d in pci if bdf(d.get("address")) not in seen]
    if not missing:
        return []
    given = F.env(f).get("NVIDIA_VISIBLE_DEVICES")
    if given and given.strip().lower() not in ("all", "void", "none"):
        # a container given some GPUs: its NVML sees those, its /sys still shows the whole host's bus
        return [Finding(
            INFO, "gpu-count-container", "health",
            f"Inside a container given GPUs {given!r}: the driver lists {len(F.gpus(f))} of the {len(pci)} "
            f"GPUs on the host's PCI bus, as expected; GPUs lost by the host are checked outside it.",
            "run `envcheck doctor` on the host (or in a container given all GPUs) to check every GPU",
            src("azure_count"))]
    names = ", ".join(f"{d.get('address')} ({_hex_id(d.get('vendor_id'), '10de')}:{_hex_id(d.get('device_id'), '?')})"
                      for d in missing)
    return [Finding(
        ERROR, "gpu-missing-from-driver", "health",
        f"{len(missing)} of the {len(pci)} NVIDIA GPUs on the PCI bus are not visible to the driver "
        f"({len(F.gpus(f))} listed): {names}. A GPU that fell off the bus (Xid 79) or failed to "
        f"initialise; a job that asks for {len(pci)} GPUs per node fails on this one, or NCCL hangs.",
        f"{DRAIN}; look for its address in `dmesg | grep NVRM`; power-cycle the node, and if the GPU "
        f"stays missing reseat it or open a hardware ticket", src("azure_count"))]


def memory(f: F.Facts, m: Matrix) -> List[Finding]:
    """Uncorrectable ECC errors, pending/failed row remapping, pages pending retirement."""
    th = catalog()["memory"]
    out: List[Finding] = []
    for g in F.gpus(f):
        h = F.gpu_health(g)
        ecc = h.get("ecc") if isinstance(h.get("ecc"), dict) else {}
        rows = h.get("remapped_rows") if isinstance(h.get("remapped_rows"), dict) else {}
        who = _gpu_label(g)
        vol, agg = ecc.get("volatile_uncorrected"), ecc.get("aggregate_uncorrected")
        if isinstance(vol, int) and vol > th["volatile_uncorrected_max"]:
            out.append(Finding(
                ERROR, "gpu-ecc-uncorrectable", "health",
                f"{who} has {vol} uncorrectable ECC error(s) since the driver loaded: the job on it "
                f"got corrupted data or was killed (Xid 48/94/95), and the next one may too.",
                f"{DRAIN}; reset the GPU (nvidia-smi -r -i {_smi_id(g)}) or reboot; if errors "
                f"return or row remapping failed, open a hardware ticket", src("azure_ecc")))
        elif isinstance(agg, int) and agg > 0:
            out.append(Finding(
                SEVERITY[th["aggregate_uncorrected_severity"]], "gpu-ecc-uncorrectable-history", "health",
                f"{who} has had {agg} uncorrectable ECC error(s) over its life, none since the driver "
                f"loaded: contained so far; watch the count.",
                "nothing now; if it grows, run `dcgmi diag -r 3` and open a hardware ticket", src("row_remapping")))
        if rows.get("failure"):
            out.append(Finding(
                ERROR, "gpu-row-remap-failed", "health",
                f"{who}: a row remapping has failed (no spare rows left in that memory bank): the GPU "
                f"keeps hitting the same uncorrectable errors.",
                f"{DRAIN} and open a hardware ticket (RMA)", src("azure_ecc")))
        elif rows.get("pending"):
            out.append(Finding(
                ERROR, "gpu-row-remap-pending", "health",
                f"{who}: a row remapping is pending; until the GPU is reset the bad row stays in use "
                f"and jobs on it can hit uncorrectable errors.",
                f"reset the GPU (nvidia-smi -r -i {_smi_id(g)}) or reboot the node", src("row_remapping")))
        unc = rows.get("uncorrectable")
        if isinstance(unc, int) and unc > th["remap_uncorrectable_max"]:
            out.append(Finding(
                ERROR, "gpu-row-remap-exhausting", "health",
                f"{who}: {unc} rows remapped for uncorrectable errors (more than "
                f"{th['remap_uncorrectable_max']}): the memory is failing.",
                f"{DRAIN} and open a hardware ticket", src("azure_ecc")))
        if h.get("retired_pages_pending"):
            out.append(Finding(
                ERROR, "gpu-page-retirement-pending", "health",
                f"{who}: a page is pending retirement; it takes effect only after a GPU reset or "
                f"reboot, until then the bad page can be handed to a job.",
                "reboot the node (or reset the GPU)", src("page_retirement")))
    return out


def xids(f: F.Facts, m: Matrix) -> List[Finding]:
    """Xid errors in the kernel log since boot, judged by NVIDIA's catalogue."""
    log = F.kernel_log(f)
    if not log:
        return []
    if log.get("source") is None and log.get("error"):
        return [Finding(INFO, "xid-log-unreadable", "health",
                        f"The kernel log could not be read, so Xid errors were not checked ({log['error']}).",
                        "run the probe as root, or allow it: sysctl kernel.dmesg_restrict=0", src("xid_working"))]
    cat = catalog()["xid"]
    by_code: Dict[int, List[Dict[str, Any]]] = {}
    for e in F.xid_events(f):
        by_code.setdefault(e["xid"], []).append(e)
    out = []
    for code, events in sorted(by_code.items()):
        row = cat["codes"].get(code)
        gpus = ", ".join(f"{e.get('pci')} x{e.get('count', 1)}" for e in events)
        example = str(events[0].get("last") or events[0].get("first") or "")
        if row is None:
            out.append(Finding(
                SEVERITY[cat["unknown_severity"]], f"xid-{code}", "health",
                f"Xid {code} in the kernel log since boot on {gpus}: not in envcheck's copy of NVIDIA's "
                f"catalogue. Last: {example!r}.",
                "look the code up in NVIDIA's Xid catalogue and follow its resolution bucket", src("xid_catalog")))
            continue
        action = row["action"]
        fix = cat["actions"].get(action, action)
        out.append(Finding(
            SEVERITY[row["severity"]], f"xid-{code}", "health",
            f"Xid {code} ({row['mnemonic']}: {row['meaning']}) in the kernel log since boot on {gpus}; "
            f"NVIDIA's action: {action}. Last: {example!r}.", fix, src("xid_catalog")))
    return out


def _gts(text: Any) -> Optional[float]:
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*GT/s", str(text or ""))
    return float(m.group(1)) if m else None


def _idle(f: F.Facts, address: Optional[str]) -> bool:
    """NVML says this GPU is idle (throttle bit 0x1), or nothing says otherwise."""
    for g in F.gpus(f):
        if bdf(g.get("pci_bus_id")) == address:
            reasons = F.gpu_health(g).get("throttle_reasons")
            return not isinstance(reasons, int) or bool(reasons & 0x1)
    return True


def pcie(f: F.Facts, m: Matrix) -> List[Finding]:
    """Each GPU's PCIe link against its maximum. Width never drops by itself: fewer lanes is a
    seating/riser/BIOS fault. Speed does drop while a GPU idles (power saving, nvidia-smi's
    pcie.link.gen.current "may be reduced when the GPU is not in use"), so only a busy GPU below
    its maximum speed counts."""
    sev = SEVERITY[catalog()["pcie"]["severity"]]
    out = []
    for d in F.pci_links(f):
        ln, addr = d["link"], d.get("address")
        width, max_width = ln.get("width"), ln.get("max_width")
        speed, max_speed = _gts(ln.get("speed")), _gts(ln.get("max_speed"))
        if isinstance(width, int) and isinstance(max_width, int) and 0 < width < max_width:
            out.append(Finding(
                sev, "pcie-link-width-degraded", "health",
                f"GPU {addr} runs its PCIe link at x{width} of x{max_width} ({ln.get('speed')}): host<->GPU "
                f"copies and GPUDirect RDMA get {width * 100 // max_width}% of the bandwidth, and the whole "
                f"job waits for this node.",
                "reseat the GPU (and its riser/cable), check the slot's bifurcation setting in the BIOS, "
                "then rerun `envcheck doctor`; if it stays degraded open a hardware ticket", src("sysfs_pci")))
        elif speed and max_speed and speed < max_speed and not _idle(f, bdf(addr)):
            out.append(Finding(
                sev, "pcie-link-speed-degraded", "health",
                f"GPU {addr} is busy but its PCIe link runs at {ln.get('speed')} of {ln.get('max_speed')}: "
                f"transfers to it are slower than on its peers.",
                "check the BIOS PCIe generation setting and the riser/retimer; reseat the GPU; rerun "
                "`envcheck doctor`", src("nvidia_smi")))
    return out


def _reasons(bits: int) -> List[str]:
    th = catalog()["throttle"]
    return [name for bit, name in sorted(th["reasons"].items()) if bits & bit]


def state(f: F.Facts, m: Matrix) -> List[Finding]:
    """Throttling, temperature near slowdown, persistence, MIG and compute modes."""
    th = catalog()["throttle"]
    out = []
    for g in F.gpus(f):
        h, who = F.gpu_health(g), _gpu_label(g)
        bits = h.get("throttle_reasons")
        bad = _reasons(bits) if isinstance(bits, int) else []
        if bad:
            out.append(Finding(
                WARNING, "gpu-throttled", "health",
                f"{who} is throttling its clocks ({', '.join(bad)}, reasons 0x{bits:x}): it runs slower "
                f"than its peers and every collective waits for it.",
                "check cooling, power supply and power cap (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE)",
                src("azure_throttle")))
        temp, slow = h.get("temperature_c"), h.get("slowdown_temperature_c")
        if isinstance(temp, int) and isinstance(slow, int) and slow > 0 and temp >= slow - th["temperature_margin_c"]:
            out.append(Finding(
                WARNING, "gpu-near-slowdown-temperature", "health",
                f"{who} is at {temp} C, within {th['temperature_margin_c']} C of its slowdown threshold "
                f"{slow} C: under load it will throttle.",
                "check the node's airflow/fans and inlet temperature", src("nvml_device_queries")))
        if h.get("persistence_mode") == 0:
            out.append(Finding(
                WARNING, "gpu-persistence-off", "health",
                f"{who} has persistence mode off: every process start re-initialises the GPU (seconds), "
                f"and GPU state is lost between jobs.",
                "sudo nvidia-smi -pm 1 (or enable nvidia-persistenced)", src("azure_persistence")))
        if h.get("mig_mode") == 1:
            out.append(Finding(
                WARNING, "gpu-mig-enabled", "health",
                f"{who} has MIG mode enabled: a job sees MIG instances, not the whole GPU.",
                f"disable it if the node is for whole-GPU training: sudo nvidia-smi -i {_smi_id(g)} -mig 0",
                src("mig_guide")))
        if h.get("compute_mode") == 2:
            out.append(Finding(
                ERROR, "gpu-compute-prohibited", "health",
                f"{who} is in compute mode PROHIBITED: no process can create a CUDA context on it.",
                f"sudo nvidia-smi -i {_smi_id(g)} -c DEFAULT", src("nvml_device_queries")))
    return out


RULES = [gpu_count, memory, xids, pcie, state]


def expected_gpus(f: F.Facts, n: int) -> List[Finding]:
    """`--gpus-per-node N`: fewer GPUs on the PCI bus than the node should have (a GPU gone from
    the bus entirely, or a dead slot), or fewer than N listed by the driver. Not a registry rule:
    N comes from the command line, not from the facts."""
    if not F.driver_version(f) and F.pci_gpus(f) is None:
        return []  # nothing read about GPUs at all: the driver rules speak
    listed, pci = len(F.gpus(f)), F.pci_gpus(f)
    on_bus = len(pci) if pci is not None else None
    if listed == n and on_bus in (None, n):
        return []
    seen = f"the driver lists {listed}" + (f", the PCI bus has {on_bus}" if on_bus is not None else "")
    where = ("a GPU is gone from the PCI bus entirely (fell off before the driver loaded, or a dead "
             "slot/riser)" if on_bus is not None and on_bus < n else
             "the driver lost a GPU that is still on the bus" if listed < n else
             "more GPUs than expected: the wrong node type, or a wrong --gpus-per-node")
    short = min(listed, on_bus if on_bus is not None else listed) < n
    return [Finding(
        ERROR if short else WARNING, "gpu-count-unexpected", "health",
        f"Expected {n} GPUs on this node; {seen}: {where}."
        + (f" A job sized for {n} GPUs per node fails here." if short else ""),
        f"{DRAIN}; power-cycle it, and if the count stays short reseat the GPU or open a hardware ticket"
        if short else "check the node type, or pass the right --gpus-per-node", src("azure_count"))]
