# envcheck probe, part pci: the NVIDIA functions on the PCI bus, read once from sysfs
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from base import section
from run import read

PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"   # VGA (0x0300xx) and 3D (0x0302xx) controllers; audio/USB functions are not
NVSWITCH_CLASS = "0x0680"   # bridge, "other": the NVSwitches of an HGX board
_PCI_SCANS = {}   # root -> its scan: the pci_gpus and health sections read the bus once per run


def _sysfs_id(path):
    text = (read(path, 4096) or "").strip().lower()
    return text if text.startswith("0x") else None


def _sysfs_text(path):
    text = read(path, 4096)
    return text.strip() if text is not None else None


def _sysfs_int(path):
    try:
        return int(_sysfs_text(path))
    except (TypeError, ValueError):
        return None


def nvidia_pci_functions(root=None):
    """Every NVIDIA function on the PCI bus, as the kernel lists it: {"address", "vendor_id",
    "device_id", "class"}, and for a GPU (display class) its PCIe "link" too. The kernel reads
    vendor, device and class from each card's config space at boot, with or without any NVIDIA
    driver, so a GPU the driver lost is still here. A few small reads per function, no command.
    None when sysfs cannot be read (a container without /sys): not known, unlike [] (none there).
    Read once per root: the sections that ask share the one pass."""
    root = root or PCI_DEVICES
    if root not in _PCI_SCANS:
        _PCI_SCANS[root] = _scan(root)
    return _PCI_SCANS[root]


def _scan(root):
    try:
        addresses = sorted(os.listdir(root))
    except OSError:
        return None
    out = []
    for addr in addresses:
        base = os.path.join(root, addr)
        if _sysfs_id(os.path.join(base, "vendor")) != NVIDIA_VENDOR:
            continue
        fn = {"address": addr, "vendor_id": NVIDIA_VENDOR, "device_id": _sysfs_id(os.path.join(base, "device")),
              "class": _sysfs_id(os.path.join(base, "class"))}
        if is_gpu(fn):
            fn["link"] = {"speed": _sysfs_text(os.path.join(base, "current_link_speed")),
                          "width": _sysfs_int(os.path.join(base, "current_link_width")),
                          "max_speed": _sysfs_text(os.path.join(base, "max_link_speed")),
                          "max_width": _sysfs_int(os.path.join(base, "max_link_width"))}
        out.append(fn)
    return out


def is_gpu(fn):
    return (fn.get("class") or "").startswith(DISPLAY_CLASS)


@section("pci_gpus")
def collect_pci_gpus(facts=None, root=None):
    """The NVIDIA GPUs on the bus, without their links: what a node has to go on before
    install-cuda (None: the bus could not be read)."""
    functions = nvidia_pci_functions(root)
    if functions is None:
        return None
    return [dict((k, v) for k, v in fn.items() if k != "link") for fn in functions if is_gpu(fn)]

