"""The matrix's GPU tables: which compute capability a board name or a GPU chip has.

Names are matched as nvidia-smi, NVML and torch print them, in every generation: "Tesla K80",
"GeForce GTX 1080 Ti", "Quadro RTX 6000", "NVIDIA RTX A6000", "NVIDIA A100-SXM4-80GB",
"NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4070 Laptop GPU", "GRID V100DX-16Q". A name is
cut into words; vendor words (NVIDIA, Tesla, GeForce, Quadro, GRID) and memory, form-factor and
mobility words (80GB, SXM4, PCIe, HBM3, NVL, Laptop GPU, Max-Q, Generation …) are dropped, since
they never change the chip; then the longest `gpus:` pattern found as consecutive words wins
("RTX 6000 Ada" over "RTX 6000").

One more rule, for data-center boards whose letter suffix names a package or a variant of the
same chip (K40c, K20Xm, V100DX, A10G, L40S): a pattern word like "k40" also matches "k40c".
Only for letter+digits words: "960m" is NOT "960", because a GeForce "M" board is often another
chip (GTX 960M is GM107, sm_50; GTX 960 is GM206, sm_52) — mobile boards are listed explicitly.

Chips ("GK210GL", "GA102", "AD104GLM" as pci.ids spells them) map through `chips:` once their
suffix letters (GL = professional, M = mobile, B = revision) are dropped, unless `chips:` lists the
code as it stands: GB10B (Jetson Thor) and GB20B (GB10) are chips of their own, not GB10 or GB20.

A board name no `gpus:` pattern matches is looked up last among the boards of the PCI ID database
(pci_ids.tsv, the table the PCI bus is read with), whose words must equal the name's: its chip
gives the compute capability. pci.ids often has several chips behind one mobile name (GeForce GT
740M: GK107M, 3.0, and GK208M, 3.5): when they share a major and an architecture with one first
CUDA release (`archs:`), the highest is taken, the one that runs the most (a cubin for X.y runs on
X.z, z >= y; the last CUDA that targets it is no earlier), so no check errs for the variant that
works; otherwise the name stays unknown.
"""
from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

Record = Dict[str, Any]

# words that never tell two boards apart
_DROP = {
    "nvidia", "tesla", "geforce", "quadro", "grid",                       # vendor and brand
    "sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "pcie", "pci", "e", "fhhl", "nvl", "dgxs",
    "hbm2", "hbm2e", "hbm3", "hbm3e", "ac",                                # form factor, memory
    "laptop", "gpu", "mobile", "notebook", "with", "max", "q", "design",   # mobility
    "generation", "edition", "oem", "lhr", "rev", "a",                      # marketing
}
_MEMORY = re.compile(r"^\d+(gb|g|gib)$")            # 80gb, 22gb, 20g
_VGPU = re.compile(r"^\d+[abcq]$")                  # vGPU profile sizes: 16q, 8c, 4a
_SPLIT = re.compile(r"[\s\-_/(),.]+")              # "Tesla K10.G2.8GB": the dot separates too
_DC_WORD = re.compile(r"^[a-z]\d+[a-z]?$")          # k40, v100, a10, l40, k20x
_CHIP = re.compile(r"^([A-Z]+\d+)[A-Z]*$")
PCI_TABLE = Path(__file__).with_name("pci_ids.tsv")


@lru_cache(maxsize=1)
def pci_table() -> Dict[str, Tuple[str, str]]:
    """device id ("2330") -> (chip, board) from the packaged PCI ID table."""
    out: Dict[str, Tuple[str, str]] = {}
    for line in PCI_TABLE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        dev, chip, board = (line.split("\t") + ["", ""])[:3]
        out[dev.lower()] = (chip, board)
    return out


@lru_cache(maxsize=1)
def _pci_boards() -> Dict[Tuple[str, ...], List[str]]:
    """The words of each board name in the PCI table -> the chips sold under it."""
    out: Dict[Tuple[str, ...], List[str]] = {}
    for chip, board in pci_table().values():
        ws = tuple(words(board))
        if ws and chip and chip not in out.setdefault(ws, []):
            out[ws].append(chip)
    return out


def words(name: str) -> List[str]:
    """The words of a board name that can tell boards apart, lower case."""
    out = []
    for w in _SPLIT.split(name.lower()):
        if not w or w in _DROP or _MEMORY.match(w) or _VGPU.match(w):
            continue
        out.append(w)
    return out


def did_you_mean(suggestions: List[Tuple[str, str]]) -> str:
    """`--gpu "RTX 4090" (sm_89)`, or `--gpu L40 (sm_89) or --gpu L40S (sm_89)`; '' for none."""
    def flag(n: str) -> str:
        return f'--gpu "{n}"' if " " in n else f"--gpu {n}"
    return " or ".join(f"{flag(n)} (sm_{cc.replace('.', '')})" for n, cc in suggestions)


def chip_base(chip: str) -> Optional[str]:
    """'GK210GL' -> 'GK210', 'GP104M' -> 'GP104', 'GK208B' -> 'GK208'; None if not a chip code."""
    m = _CHIP.match((chip or "").strip().upper())
    return m.group(1) if m else None


def _word_matches(pattern: str, word: str) -> int:
    """2 for the same word, 1 for a data-center variant (k40 ~ k40c), 0 otherwise."""
    if pattern == word:
        return 2
    if _DC_WORD.match(pattern) and word.startswith(pattern) and word[len(pattern):].isalpha():
        return 1
    return 0


class GpuIndex:
    """Name and chip lookups over the matrix's `gpus:` and `chips:` entries."""

    def __init__(self, gpus: List[Record], chips: List[Record], archs: Optional[List[Record]] = None):
        self._archs = {a["cc"]: (a["name"], a["first_cuda"]) for a in archs or []}
        self._patterns: List[Tuple[List[str], Record]] = [(words(n), g) for g in gpus for n in g["names"]]
        self._names: List[Tuple[str, Record]] = [(n, g) for g in gpus for n in g["names"]]
        self._chips = {c["chip"].upper(): c for c in chips}

    def lookup(self, name: str) -> Optional[Record]:
        """The gpus: entry for a board name, None when no pattern matches. Longest pattern
        first; among equally long ones, exact words beat data-center variants."""
        ws = words(name)
        best: Optional[Tuple[Tuple[int, int], Record]] = None
        for pat, rec in self._patterns:
            n = len(pat)
            if not n:
                continue
            for i in range(len(ws) - n + 1):
                scores = [_word_matches(p, w) for p, w in zip(pat, ws[i:i + n])]
                if all(scores):
                    key = (n, sum(scores))
                    if best is None or key > best[0]:
                        best = (key, rec)
        return best[1] if best else self.pci_board(name)

    def pci_board(self, name: str) -> Optional[Record]:
        """A board the PCI ID database names exactly, given the compute capability of its chips
        (the highest, when all share one major); None when a chip or the major is in doubt, or
        when the name is only a number (the brand words it dropped are what told boards apart)."""
        ws = tuple(words(name))
        if all(w.isdigit() for w in ws):   # "6000": Quadro 6000 (Fermi) to pci.ids, RTX 6000 to a user
            return None
        chips = _pci_boards().get(ws) or []
        recs = [self.chip(c) for c in chips]
        if not recs or not all(recs):
            return None
        ccs = {r["cc"] for r in recs}  # type: ignore[index]
        if len({c.split(".")[0] for c in ccs}) != 1 or (len(ccs) > 1 and len({self._archs.get(c) for c in ccs}) != 1):
            return None
        top = max(recs, key=lambda r: tuple(int(x) for x in r["cc"].split(".")))  # type: ignore[index]
        return {"cc": top["cc"], "names": [name], "source": top["source"], "chips": sorted(chips),  # type: ignore[index]
                "note": "named by the PCI ID database (pci_ids.tsv); compute capability of its chip"}

    def suggest(self, name: str, limit: int = 3) -> List[Tuple[str, str]]:
        """(board name, compute capability) the user may have meant by a name lookup() does not
        know: boards whose name holds every word given ("4090" → RTX 4090), else close
        spellings ("A10O" → A100); shortest names first."""
        ws = words(name)
        if not ws:
            return []
        hits = [(n, g) for (n, g), (pat, _) in zip(self._names, self._patterns)
                if all(any(p == w or (w.isdigit() and p.endswith(w)) for p in pat) for w in ws)]
        if not hits:
            by_text = {" ".join(pat): (n, g) for (n, g), (pat, _) in zip(self._names, self._patterns)}
            hits = [by_text[t] for t in difflib.get_close_matches(" ".join(ws), list(by_text), n=limit, cutoff=0.75)]
        else:   # a word of the name itself ("6000": RTX 6000) before a part of one (K6000)
            hits.sort(key=lambda h: (not set(ws) <= set(words(h[0])), len(h[0])))
        return list(dict.fromkeys((n, g["cc"]) for n, g in hits))[:limit]

    def chip(self, chip: str) -> Optional[Record]:
        """The chips: entry for a chip code as pci.ids spells it: the code itself where `chips:`
        lists it, else the code without its suffix letters."""
        base = chip_base(chip)
        if not base:
            return None
        return self._chips.get((chip or "").strip().upper()) or self._chips.get(base)
