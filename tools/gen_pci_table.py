#!/usr/bin/env python3
"""Write envcheck/matrix/pci_ids.tsv, the NVIDIA display devices of the PCI ID database.

The table maps a PCI device id (what sysfs shows before any driver is installed) to the GPU chip
and the board name. Source: the PCI ID Project's pci.ids (https://pci-ids.ucw.cz/), taken from
its daily snapshots in git, https://github.com/pciutils/pciids, at a named commit, so the table
can be rebuilt byte for byte:

    curl -fsSLO https://raw.githubusercontent.com/pciutils/pciids/COMMIT/pci.ids
    python3 tools/gen_pci_table.py pci.ids --commit COMMIT \\
        --excerpt tests/fixtures/pci-ids/pciids-nvidia.ids

Debian's `pci.ids` package (/usr/share/misc/pci.ids) is the same database, older; pass it
without --commit and the header names the Debian package version instead.

Only vendor 10de devices whose name starts with a GPU chip code are kept: the HD-audio, USB-C,
NVSwitch and PCIe-bridge functions NVIDIA boards and SoCs also expose are not GPUs. --excerpt
also writes the database's header and its NVIDIA device lines (the generator's whole input, less
subsystem lines), which tests/gpus/test_pci_table.py regenerates the table from.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Tuple

DEFAULT_IDS = "/usr/share/misc/pci.ids"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "envcheck" / "matrix" / "pci_ids.tsv"
UPSTREAM = "https://github.com/pciutils/pciids"

# A GPU chip code as pci.ids spells it, optionally with NVIDIA's suffixes (GL = professional,
# M = mobile, B = revision …): GK210GL, GP104M, GA102GL, AD104GLM, GB202. It must end the word:
# "GK11x" is a family placeholder (an FPGA, a Tegra bring-up board), not a chip.
CHIP = re.compile(r"^(NV\d+|G\d{2,3}|GT\d{3}|GF\d{3}|GK\d{2,3}|GM\d{2,3}|GP\d{2,3}|GV\d{2,3}|TU\d{3}"
                  r"|GA\d{2,3}|AD\d{3}|GH\d{3}|GB\d{2,3})[A-Z]*$")
NOT_A_GPU = re.compile(r"audio|usb|ucsi|nvswitch|smbus|serial|ethernet|bridge|i2c|pcie? host", re.I)


def nvidia_devices(lines: Iterable[str]) -> Iterator[Tuple[str, str]]:
    """(device id, name) of every device listed under vendor 10de."""
    for line in nvidia_lines(lines):
        if line.startswith("\t") and not line.startswith("\t\t"):
            dev, _, name = line.strip().partition(" ")
            yield dev.lower(), name.strip()


def nvidia_lines(lines: Iterable[str]) -> Iterator[str]:
    """The vendor 10de line and its device lines, as they stand (subsystem lines left out)."""
    inside = False
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith("\t"):
            inside = line.startswith("10de ")
            if inside:
                yield line
            continue
        if inside and not line.startswith("\t\t"):
            yield line


def display_row(dev: str, name: str) -> Optional[Tuple[str, str, str]]:
    """(device, chip, board) for a GPU, None for the other functions NVIDIA boards expose."""
    # "GH100[H100 SXM5 80GB]": the database does not always put a space after the chip;
    # "AD103M / GN21-X11 [GeForce RTX 4090 Laptop GPU]": a codename may stand before the board
    m = re.match(r"^([A-Z]+\d+[A-Z]*)(?=[\s\[/]|$)\s*(.*)$", name)
    chip, rest = (m.group(1), m.group(2)) if m else ("", "")
    if not CHIP.match(chip) or NOT_A_GPU.search(name):
        return None
    board = re.search(r"\[([^\[\]]*)\]\s*$", rest)
    return dev, chip, (board.group(1) if board else rest).strip()


def database_version(text: str) -> str:
    m = re.search(r"^#\s*Version:\s*(\S+)", text, re.M)
    return m.group(1) if m else "unknown"


def debian_package_version() -> Optional[str]:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "pci.ids"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def origin_lines(commit: Optional[str], package: Optional[str], digest: Optional[str]) -> List[str]:
    """Where the database came from, for the header: a pciutils/pciids commit, a Debian package."""
    if commit:
        lines = [f"# Source: {UPSTREAM}/blob/{commit}/pci.ids (pciutils/pciids commit {commit})"]
    elif package:
        lines = [f"# Source: https://pci-ids.ucw.cz/ via Debian package pci.ids {package} (/usr/share/misc/pci.ids)"]
    else:
        lines = ["# Source: https://pci-ids.ucw.cz/ (pci.ids of unrecorded origin)"]
    if digest:
        lines.append(f"# Input sha256: {digest}")
    return lines


def render(text: str, commit: Optional[str] = None, package: Optional[str] = None,
           digest: Optional[str] = None) -> str:
    rows: List[Tuple[str, str, str]] = []
    for dev, name in nvidia_devices(text.splitlines()):
        row = display_row(dev, name)
        if row:
            rows.append(row)
    where = f"pciutils/pciids {commit[:12]}" if commit else (f"Debian package pci.ids {package}" if package else "pci.ids")
    head = ([f"# NVIDIA display devices from the PCI ID database, version {database_version(text)} ({where})."]
            + origin_lines(commit, package, digest)
            + ["# Generated by tools/gen_pci_table.py; do not edit by hand.", "# device\tchip\tboard"])
    return "\n".join(head + ["\t".join(r) for r in sorted(rows)]) + "\n"


def excerpt(text: str, commit: Optional[str]) -> str:
    """The database's header comment and its NVIDIA device lines: the generator's input."""
    head = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        head.append(line)
    note = [f"# excerpt of {UPSTREAM}/blob/{commit}/pci.ids" if commit else "# excerpt of pci.ids",
            "# (tools/gen_pci_table.py --excerpt): the vendor 10de line and its device lines, subsystem lines left out", ""]
    return "\n".join(head + note + list(nvidia_lines(text.splitlines()))) + "\n"


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pci_ids", nargs="?", default=DEFAULT_IDS)
    ap.add_argument("out", nargs="?", default=str(DEFAULT_OUT))
    ap.add_argument("--commit", help="the pciutils/pciids commit the pci.ids file was taken from")
    ap.add_argument("--excerpt", help="also write the NVIDIA part of the input here")
    args = ap.parse_args(argv[1:])
    raw = Path(args.pci_ids).read_bytes()
    text = raw.decode("utf-8", errors="replace")
    package = debian_package_version() if args.pci_ids == DEFAULT_IDS and not args.commit else None
    out = Path(args.out)
    out.write_text(render(text, args.commit, package, hashlib.sha256(raw).hexdigest()))
    if args.excerpt:
        Path(args.excerpt).write_text(excerpt(text, args.commit))
    print(f"{out}: {sum(1 for l in out.read_text().splitlines() if not l.startswith('#'))} devices")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
