"""Driver state rules: a node whose NVIDIA driver does not work is in one of a few states, and each
has its own fix. The probe tells them apart (facts driver.state) from what answers WITHOUT the
kernel module: the installed libnvidia-ml (its real file name, or nvmlSystemGetNVMLVersion), what
NVML and nvidia-smi say when they fail, and /proc/driver/nvidia/version.

- module-not-loaded: the userspace is installed, no kernel module is loaded (a kernel update whose
  DKMS build failed or never ran, a reboot still pending, Secure Boot refusing the module). An error
  where the PCI bus shows an NVIDIA GPU, a warning where that is not known or there is none.
- mismatch: the loaded module and the installed userspace differ (the driver was upgraded and the
  node not rebooted). Always an error: a loaded module means a GPU that cannot be used.
- no-userspace with a known PCI bus: an error with an NVIDIA GPU on it, a note on a CPU machine.
  Where the bus is not known, rules/driver.py's driver-not-found warning says it, as it always has.
"""
from __future__ import annotations

from typing import List, Optional

from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, INFO, WARNING, Finding
from envcheck.rules.common import src

NOT_AVAILABLE = "torch.cuda.is_available() is False and CUDA programs fail"
MODULE_FIX = ("check `dkms status`: the nvidia module must be built for the running kernel (`uname -r`); "
              "if it is not, install that kernel's headers and rebuild it (`dkms autoinstall`, or reinstall "
              "the driver's -dkms package); then `modprobe nvidia` (`dmesg | grep -i nvrm` says why it "
              "refuses, e.g. Secure Boot), or simply reboot after installing a driver")
MISMATCH_FIX = ("reboot, so that the kernel loads the module of the driver now installed; without a reboot, "
                "stop every process using the GPUs and reload it: `rmmod nvidia_uvm nvidia_drm nvidia_modeset "
                "nvidia; modprobe nvidia`. If they still differ, the packages disagree: reinstall one driver "
                "version (`dpkg -l | grep -i nvidia` or `rpm -qa | grep -i nvidia` lists them)")


def _gpus_on_bus(f: F.Facts) -> str:
    """' The PCI bus has 2 NVIDIA GPUs (NVIDIA A100 ...).' for a message, '' when none/unknown."""
    pci = F.pci_gpus(f) or []
    if not pci:
        return ""
    names = sorted({F.text(g.get("name")) for g in pci if F.text(g.get("name"))})
    which = f" ({', '.join(names)})" if names else ""
    where = [F.text(g.get("address")) for g in pci if F.text(g.get("address"))]
    at = f" at {', '.join(where)}" if where else ""
    return f" The PCI bus has {len(pci)} NVIDIA GPU{'s' if len(pci) != 1 else ''}{which}{at}."


def _severity_by_bus(f: F.Facts) -> str:
    return ERROR if F.pci_gpus(f) else WARNING


def module_not_loaded(f: F.Facts, m: Matrix) -> List[Finding]:
    if F.driver_state(f) != "module-not-loaded":
        return []
    version = F.driver_userspace(f).get("version") or "(version unknown)"
    bus = _gpus_on_bus(f)
    if F.pci_gpus(f) == []:
        bus = " No NVIDIA GPU is on the PCI bus: on a CPU machine the packages are merely unused."
    return [Finding(
        _severity_by_bus(f), "driver-module-not-loaded", "driver",
        f"NVIDIA driver {version} userspace installed, kernel module not loaded: NVML says 'Driver Not "
        f"Loaded' and nvidia-smi 'couldn't communicate with the NVIDIA driver'; {NOT_AVAILABLE}.{bus}",
        MODULE_FIX, src(m, "driver_install"))]


def version_mismatch(f: F.Facts, m: Matrix) -> List[Finding]:
    if F.driver_state(f) != "mismatch":
        return []
    user = F.driver_userspace(f).get("version")
    module = F.kernel_module(f)
    versions = ""
    if user or module:
        versions = f": the installed userspace is {user or 'of an unknown version'}, the loaded kernel module " \
                   f"{module or 'of an unknown version'}"
    return [Finding(
        ERROR, "driver-version-mismatch", "driver",
        f"NVIDIA driver/library version mismatch{versions}. nvidia-smi fails with 'Failed to initialize "
        f"NVML: Driver/library version mismatch'; {NOT_AVAILABLE}.{_gpus_on_bus(f)}",
        MISMATCH_FIX, src(m, "driver_mismatch"))]


def no_userspace(f: F.Facts, m: Matrix) -> List[Finding]:
    pci: Optional[list] = F.pci_gpus(f)
    if F.driver_state(f) != "no-userspace" or pci is None:
        return []  # the bus unknown: driver.py's driver-not-found warning, as before
    if not pci:
        return [Finding(
            INFO, "driver-not-found", "driver",
            "No NVIDIA driver and no NVIDIA GPU on the PCI bus: a CPU machine, nothing to fix.",
            "", src(m, "driver_install"))]
    return [Finding(
        ERROR, "driver-not-found", "driver",
        f"No NVIDIA driver installed (no libnvidia-ml, no nvidia-smi, no kernel module), but the GPUs "
        f"are there:{_gpus_on_bus(f)} {NOT_AVAILABLE} ('Found no NVIDIA driver on your system').",
        "install the NVIDIA driver for these GPUs (distribution packages or NVIDIA's repository), reboot, "
        "and check that `nvidia-smi` lists them", src(m, "driver_install"))]


def handled_here(f: F.Facts) -> bool:
    """Whether these rules speak for the host's driver state (driver.py's driver_missing then
    keeps quiet): every state they judge, and no-userspace only where the PCI bus is known."""
    state = F.driver_state(f)
    return state in ("module-not-loaded", "mismatch") or (state == "no-userspace" and F.pci_gpus(f) is not None)


RULES = [module_not_loaded, version_mismatch, no_userspace]
