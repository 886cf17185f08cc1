"""The one output grammar every command speaks, on clush's conventions (`clush -b`, ClusterShell's
GatherOutputHandler): results that are the same on several hosts are printed once under the
folded hostlist of those hosts (`node[01-32]: would-change`), each host's own name in them
standing for all of them; every command ends with one summary line of the same shape,

    VERDICT: 32 hosts: 28 ok, 2 failed, 2 unreachable; 1.2 GB uploaded

where VERDICT is model.Outcome's word (PASS, WARN, FAIL, UNKNOWN: the exit code follows from it);
colour, when the CLI asks for it, comes from rich. Rendering only: nothing here decides anything.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple, TypeVar

from envcheck.hostlist import compress_hostlist
from envcheck.model import FAIL, PASS, UNKNOWN, WARN

HOSTS_HERE = "\0HOSTS\0"  # stands for a host's own name while results are compared
K = TypeVar("K", bound=Hashable)

# rich styles, by what is painted: verdicts and severities share the words' colours
STYLES = {PASS: "green", WARN: "yellow", FAIL: "bold red", UNKNOWN: "bold magenta",
          "error": "bold red", "warning": "yellow", "info": "cyan", "odd": "bold yellow", "ok": "green"}


def host_names(host: str, *also: Optional[str]) -> List[str]:
    """The names a host's results may call it (as given, as it calls itself), longest first."""
    names = {host, *(a or "" for a in also)}
    return sorted((n for n in names if len(n) > 1), key=len, reverse=True)


def stand_in(text: str, names: Sequence[str]) -> str:
    """`text` with each of the host's names (a whole word) replaced by HOSTS_HERE."""
    for n in names:
        text = re.sub(r"(?<![\w.@-])" + re.escape(n) + r"(?![\w-])", HOSTS_HERE, text)
    return text


def put_back(text: str, hosts: Sequence[str]) -> str:
    return text.replace(HOSTS_HERE, compress_hostlist(hosts))


def fold(items: Iterable[Tuple[str, K]]) -> List[Tuple[List[str], K]]:
    """(host, key) pairs → [(hosts, key)]: the hosts whose keys are equal, together, in the
    order each key was first seen (clush -b's gathering)."""
    groups: Dict[K, List[str]] = {}
    for host, key in items:
        groups.setdefault(key, []).append(host)
    return [(hosts, key) for key, hosts in groups.items()]


def fold_blocks(items: Iterable[Tuple[str, Sequence[str]]],
                names: Callable[[str], Sequence[str]] = host_names) -> List[Tuple[str, List[str]]]:
    """Per-host blocks of lines → [(hostlist, lines)], identical blocks once; a host's own name
    inside its lines is compared as HOSTS_HERE and printed as the folded hostlist."""
    keyed = [(host, tuple(stand_in(line, names(host)) for line in lines)) for host, lines in items]
    return [(compress_hostlist(hosts), [put_back(line, hosts) for line in block])
            for hosts, block in fold(keyed)]


def plural(n: int, word: str, many: str = "") -> str:
    """`1 host`, `2 hosts`, `0 errors`; `many` for irregular plurals."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def summary_line(verdict: str, head: str, parts: Sequence[Tuple[int, str]], tail: str = "",
                 keep_zero: bool = False, paint: Optional[Callable[[str, str], str]] = None) -> str:
    """`FAIL: 32 hosts: 28 ok, 2 failed, 2 unreachable; 1.2 GB uploaded` — every command's last
    line. `parts` are (count, label) with zero counts left out unless keep_zero."""
    shown = ", ".join(f"{n} {label}" for n, label in parts if n or keep_zero)
    word = paint(verdict, verdict) if paint else verdict
    return f"{word}: {head}" + (f": {shown}" if shown else "") + (f"; {tail}" if tail else "")


def human_bytes(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"


def styled(text: str, style: str, on: bool) -> str:
    """text in STYLES[style] as ANSI, through rich, when on; unchanged otherwise."""
    if not on or not text or style not in STYLES:
        return text
    # lazy: rich's console costs ~50 ms CPU at start-up (-X importtime); only coloured output needs it
    from rich.console import Console
    from rich.text import Text
    console = Console(force_terminal=True, color_system="standard", width=1 << 16, no_color=False,
                      highlight=False, emoji=False, markup=False)
    with console.capture() as cap:
        console.print(Text(text, style=STYLES[style]), end="", soft_wrap=True)
    return cap.get()
