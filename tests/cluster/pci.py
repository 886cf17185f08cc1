"""Simulated PCI bus for a simulated host: a directory tree shaped like /sys/bus/pci/devices
(one directory per PCI function with `vendor`, `device` and `class` files, as the kernel writes
them: "0x10de\\n") bind-mounted over /sys/bus/pci/devices inside that host's private mount
namespace (sim.py unshares it with private propagation, so the real machine's sysfs is never
touched). What a node looks like with GPUs in its slots but no NVIDIA driver installed."""
from __future__ import annotations

import shlex
from typing import Sequence, Tuple

FAKE = "/tmp/envcheck-fake-pci"   # the host's /tmp is a private tmpfs
DEVICES = "/sys/bus/pci/devices"

# (address, vendor, device, class)
Function = Tuple[str, str, str, str]


def nvidia_gpu(address: str, device: str) -> Function:
    return (address, "0x10de", device, "0x030200")


def set_pci_devices(host, functions: Sequence[Function]) -> None:
    """Replace what the host sees in /sys/bus/pci/devices by these functions (idempotent)."""
    steps = [f"mkdir -p {FAKE}"]
    for address, vendor, device, cls in functions:
        d = shlex.quote(f"{FAKE}/{address}")
        steps.append(f"mkdir -p {d} && printf '%s\\n' {vendor} > {d}/vendor && printf '%s\\n' {device} > {d}/device"
                     f" && printf '%s\\n' {cls} > {d}/class")
    steps.append(f"mount --bind {FAKE} {DEVICES}")
    # a second call first undoes the first one's mount and tree
    host.run_local(f"umount {DEVICES} 2>/dev/null; rm -rf {FAKE}; " + " && ".join(steps))
