"""Validation of the matrix's hardware facts: the GPU tables (`gpus:` board names, `chips:` GPU
chips) and the driver minimums other NVIDIA tables give (`min_driver_elsewhere`); called by
envcheck/matrix/schema.py with its checker, which reports the first problem with its key path."""
from __future__ import annotations

import re
from typing import Any, Dict, Set

from envcheck.matrix.gpus import chip_base, words
from envcheck.versions import vkey
from envcheck.params.text import excerpt

_CHIP_KEY = re.compile(r"^[A-Z]+\d+[A-Z]?$")


def check_gpus(c: Any, gpus: Any, archs: Set[str]) -> None:
    names: Dict[str, str] = {}
    for i, g in enumerate(c.seq(gpus, "gpus", True)):
        p = f"gpus[{i}]"
        c.mapping(g, p, ["cc", "names", "source"], ["unconfirmed", "note"])
        if g["cc"] not in archs:
            c.fail(f"{p}.cc", f"compute capability {excerpt(g['cc'])} is not in archs")
        for j, n in enumerate(c.strings(g["names"], f"{p}.names", True)):
            norm = " ".join(words(n))
            if not norm:
                c.fail(f"{p}.names[{j}]", f"{excerpt(n)} has no word that tells boards apart (vendor and "
                       "memory words are ignored when matching)")
            if norm in names:
                c.fail(f"{p}.names[{j}]", f"{excerpt(n)} is already listed (with {names[norm]})")
            names[norm] = g["cc"]
        c.url(g["source"], f"{p}.source")
        c.unconfirmed(g, p, ["cc", "names"])


def check_chips(c: Any, chips: Any, archs: Set[str]) -> None:
    seen: Set[str] = set()
    for i, ch in enumerate(c.seq(chips, "chips", True)):
        p = f"chips[{i}]"
        c.mapping(ch, p, ["chip", "cc", "example", "source"], ["unconfirmed", "note"])
        code = c.string(ch["chip"], f"{p}.chip")
        # a trailing letter is a suffix (GK110B is GK110) unless the entry says why it names a chip
        # of its own (GB10B, Jetson Thor, is not GB10)
        if not _CHIP_KEY.match(code) or (chip_base(code) != code and not ch.get("note")):
            c.fail(f"{p}.chip", f"{excerpt(code)} must be a chip code without suffix letters, like GK210 or GA102"
                   " (or say in `note` why the letter is part of the chip's name)")
        if code in seen:
            c.fail(f"{p}.chip", f"duplicate chip {code}")
        seen.add(code)
        if ch["cc"] not in archs:
            c.fail(f"{p}.cc", f"compute capability {excerpt(ch['cc'])} is not in archs")
        c.string(ch["example"], f"{p}.example")
        c.url(ch["source"], f"{p}.source")
        c.unconfirmed(ch, p, ["cc"])


def check_min_driver_elsewhere(c: Any, entry: Dict[str, Any], p: str) -> None:
    """`min_driver_elsewhere`: the higher minimums other NVIDIA tables give, each with its source.
    min_driver is the lowest of them (a user on it runs fine by at least one NVIDIA table)."""
    for j, alt in enumerate(c.seq(entry.get("min_driver_elsewhere") or [], f"{p}.min_driver_elsewhere")):
        q = f"{p}.min_driver_elsewhere[{j}]"
        c.mapping(alt, q, ["value", "source"], ["note"])
        value = c.version(alt["value"], f"{q}.value")
        if entry["min_driver"] and vkey(value) < vkey(entry["min_driver"]):
            c.fail(f"{q}.value", f"{value} is below min_driver {entry['min_driver']}: min_driver must be the lowest")
        c.url(alt["source"], f"{q}.source")
