"""The one output grammar every command speaks, on clush's conventions (`clush -b`, ClusterShell's
GatherOutputHandler): results that are the same on several hosts are printed once under the
folded hostlist of those hosts (`node[01-32]: would-change`), each host's own name in them
standing for all of them; every command ends with one summary line of the same shape,

    VERDICT: 32 hosts: 28 ok, 2 failed, 2 unreachable; 1.2 GB uploaded

where VERDICT is model.Outcome's word (PASS, WARN, FAIL, UNKNOWN: the exit code follows from it);
colour, when the CLI asks for it, comes from rich. Rendering only: nothing here decides anything.
`envcheck check`'s findings table lives here too (render_findings), not in report.py, so `check`
does not import the facts views report.py reads (~10 ms CPU at start-up, issue 26).
"""
from __future__ import annotations

import re
import shutil
import textwrap
from typing import Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple, TypeVar

from envcheck.model import ERROR, FAIL, INFO, PASS, UNKNOWN, WARN, WARNING, Finding, Skipped, skipped_summary

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
    # lazy: the hostlist module costs ~2 ms CPU at start-up (issue 26); check and plan fold no hosts
    from envcheck.hostlist import compress_hostlist
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
    # lazy: as in put_back, ~2 ms
    from envcheck.hostlist import compress_hostlist
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


def skipped_lines(skipped: Sequence[Skipped], indent: str = "  ") -> List[str]:
    """The skipped checks grouped by what they lacked: 'skipped gpu_vs_torch, driver_vs_gpu: no GPU
    in the facts (give --gpu NAME|sm_XY, or audit the host)'."""
    groups: Dict[Tuple[str, str], List[str]] = {}
    for s in skipped:
        groups.setdefault((s.reason, s.needs), []).append(s.check)
    return [f"{indent}skipped {', '.join(dict.fromkeys(checks))}: {reason}" + (f"; {how}" if how else "")
            for (reason, how), checks in groups.items()]


def render_findings(findings: Iterable[Finding], width: int = 0, skipped: Sequence[Skipped] = (),
                    verdict: str = "", color: bool = False) -> str:
    """`envcheck check`'s table: severity, component, message (its code never split), the fix
    under it on one line (a command is never broken: a terminal wraps it, a copy keeps it whole),
    the checks that could not run, and the summary line last. "No findings" only when every
    check ran."""
    items: List[Finding] = list(findings)
    width = width or max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    lines = [f"{'SEVERITY':<8} {'COMPONENT':<11} MESSAGE"] if items else []
    indent = " " * 21
    for fd in items:
        head = f"{styled(f'{fd.severity:<8}', fd.severity, color)} {fd.component:<11} "
        body = f"{fd.message} [{fd.code}]" + (f" ({fd.host})" if fd.host else "")
        wrapped = textwrap.wrap(body, width - 21, break_on_hyphens=False, break_long_words=False)
        lines.extend([head + wrapped[0]] + [indent + w for w in wrapped[1:]])
        if fd.fix:
            lines.append(f"{indent}fix: {fd.fix}")
    lines.extend(skipped_lines(skipped, ""))
    n = [plural(sum(fd.severity == s for fd in items), w) for s, w in ((ERROR, "error"), (WARNING, "warning"), (INFO, "note"))]
    clean = "" if items or skipped else "nothing in this stack is known to break (No findings)"
    tail = "; ".join(x for x in (skipped_summary(list(skipped)), clean) if x)
    lines.append(("" if not lines else "\n") + summary_line(verdict or (ERROR in {f.severity for f in items} and "FAIL")
                                                          or "PASS", ", ".join(n), [], tail,
                                                          paint=lambda t, st: styled(t, st, color)))
    return "\n".join(lines) + "\n"
