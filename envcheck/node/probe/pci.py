# envcheck probe, part pci: NVIDIA GPUs on the PCI bus, read from sysfs
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"   # VGA (0x0300xx) and 3D (0x0302xx) controllers; audio/USB functions are not


def _sysfs_id(path):
    text = (read(path) or "").strip().lower()
    return text if text.startswith("0x") else None


def collect_pci_gpus(facts=None, root=PCI_DEVICES):
    """NVIDIA display devices as the kernel lists them. The kernel reads vendor, device and class
    from each card's config space at boot, with or without any NVIDIA driver, so this is what a
    node has to go on before install-cuda. Three small reads per PCI function, no command.
    None when sysfs cannot be read (a container without /sys): not known, unlike [] (none there)."""
    try:
        addresses = sorted(os.listdir(root))
    except OSError:
        return None
    out = []
    for addr in addresses:
        base = os.path.join(root, addr)
        if _sysfs_id(os.path.join(base, "vendor")) != NVIDIA_VENDOR:
            continue
        cls = _sysfs_id(os.path.join(base, "class"))
        if not cls or not cls.startswith(DISPLAY_CLASS):
            continue
        out.append({"address": addr, "vendor_id": NVIDIA_VENDOR,
                    "device_id": _sysfs_id(os.path.join(base, "device")), "class": cls})
    return out


SECTIONS.append(("pci_gpus", collect_pci_gpus))
