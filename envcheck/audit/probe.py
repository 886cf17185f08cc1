"""Run the node-side probe on one host through any Remote and turn its output into facts.

The probe (the parts in envcheck/node/probe/, joined into one script) goes on stdin to the node's own interpreter as
`python3 - [--deep]` — one remote command per host, nothing copied, nothing left behind. The
same function serves the local audit (LocalRemote) and the fleet audit (SSHRemote), so the two
cannot drift apart. Failures are data for callers that fan out: probe_host() never raises.
"""
from __future__ import annotations

import ast
import re
import shlex
import threading
from pathlib import Path
from typing import List, Optional, Tuple

from envcheck.errors import RemoteError
from envcheck.facts.schema import SCHEMA, Facts
from envcheck.matrix.pci import annotate as annotate_pci_gpus
from envcheck.matrix.load import Matrix
from envcheck.model import HostResult
from envcheck.remote import Remote, RunResult, last_json_object
from envcheck.rules import judge
from envcheck.rules.cudnn import annotate as annotate_cudnn
from envcheck.rules.nccl import annotate as annotate_nccl

_AST_LOCK = threading.Lock()   # audits of many hosts build the probe's text at once

# The probe is several readable files shipped as ONE stdlib script: one part per component of the
# node (envcheck/node/probe/<component>.py), each importing what it uses from the others. Joined,
# a part comes after the parts it imports (base first, main last) and those imports are dropped:
# the script shares one namespace, like one file would.
PROBE_DIR = Path(__file__).resolve().parent.parent / "node" / "probe"
PROBE_FIRST = "base.py"
_PART_HEADER = re.compile(r"\A(?:#[^\n]*\n)+\n")

PROBE_TIMEOUT = 60.0        # the whole probe, connection excluded; each command in it has 15 s
DEEP_PROBE_TIMEOUT = 240.0  # --deep imports torch and initialises CUDA on every GPU
EXIT_NOT_FOUND = 127        # what sh says when the interpreter is not there


class ProbeError(RemoteError):
    """The probe could not run on a host, or did not print a facts document (exit code 3).
    `reason` is the message without the host, for tables that name the host already."""

    def __init__(self, host: str, reason: str, fix: Optional[str] = None):
        super().__init__(f"{host}: {reason}", fix)
        self.host = host
        self.reason = reason


def probe_parts() -> List[Path]:
    """The probe's part files in the order they are joined: each after the parts it imports,
    otherwise A-Z (so base, which imports no part, comes first, and main, which imports them
    all, last)."""
    texts = {p.stem: _read_part(p) for p in sorted(PROBE_DIR.glob("*.py"))}
    needs = {name: {m for m, _ in _part_imports(text, texts)} for name, text in texts.items()}
    order: List[str] = []
    while len(order) < len(texts):
        ready = sorted(n for n in texts if n not in order and needs[n] <= set(order))
        if not ready:  # a cycle: a packaging bug, caught by tests/node/test_probe_parts.py
            raise ProbeError("localhost", "the probe parts import each other in a cycle: "
                             + ", ".join(sorted(n for n in texts if n not in order)))
        order.append(ready[0])
    return [PROBE_DIR / f"{n}.py" for n in order]


def _read_part(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:  # a broken install, not a host problem
        raise ProbeError("localhost", f"cannot read the probe part {path}: {e.strerror}",
                         "reinstall envcheck (pip install --force-reinstall envcheck)") from e


def _part_imports(text: str, parts) -> List[Tuple[str, Tuple[int, int]]]:
    """(part, (first line, last line)) of each top-level import of another part in `text`:
    `from <part> import a, b` or `import <part>, ...` (where every name is a part)."""
    out = []
    with _AST_LOCK:   # CPython 3.11's ast.parse is not thread-safe ('AST constructor recursion depth mismatch')
        body = ast.parse(text).body
    for node in body:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in parts:
            out.append((node.module, (node.lineno, node.end_lineno)))
        elif isinstance(node, ast.Import) and all(a.name in parts for a in node.names):
            out += [(a.name, (node.lineno, node.end_lineno)) for a in node.names]
    return out


def probe_source() -> str:
    """The probe's text, exactly as shipped: its parts (read from the installed package) joined
    into one script, each after a `# ---- part NAME ----` line in place of its own header, with
    its imports of other parts dropped (the names are already defined above it). Its stdlib
    imports stay: each part's text stands on its own in the script too."""
    parts = probe_parts()
    stems = {p.stem for p in parts}
    chunks = []
    for path in parts:
        text = _read_part(path)
        lines = text.splitlines(keepends=True)
        for _, (first, last) in _part_imports(text, stems):
            lines[first - 1:last] = [""] * (last - first + 1)
        text = "".join(lines)
        if path.name != PROBE_FIRST:
            text = f"# ---- part {path.stem} " + "-" * 60 + "\n\n" + _PART_HEADER.sub("", text, count=1)
        chunks.append(text.rstrip("\n") + "\n")
    return "\n\n".join(chunks)


def probe_command(*, deep: bool = False, node_python: Optional[str] = None) -> str:
    """The one command line that runs the probe from stdin.

    Wrapped in `sh -c` because over SSH it runs in the user's login shell, which may be csh or
    fish; python3 first, then `python` for old images where only that name exists.
    """
    args = ["--deep"] if deep else []
    if node_python:
        return " ".join(shlex.quote(a) for a in [node_python, "-", *args])
    script = ('if command -v python3 >/dev/null 2>&1; then exec python3 - "$@"; '
              'else exec python - "$@"; fi')
    return " ".join(shlex.quote(a) for a in ["sh", "-c", script, "envcheck-probe", *args])


def run_probe(remote: Remote, *, deep: bool = False, node_python: Optional[str] = None,
              timeout: Optional[float] = None) -> Facts:
    """Run the probe on `remote` and return its facts. Raises ProbeError naming the host and
    why: unreachable, timed out, no interpreter, crashed (with the tail of stderr), no JSON."""
    if timeout is None:
        timeout = DEEP_PROBE_TIMEOUT if deep else PROBE_TIMEOUT
    command = probe_command(deep=deep, node_python=node_python)
    result = remote.run(command, stdin=probe_source(), timeout=timeout)
    return parse_probe_result(remote.name, result, node_python=node_python)


def parse_probe_result(host: str, result: RunResult, node_python: Optional[str] = None) -> Facts:
    """The facts in a finished probe run, or ProbeError saying why there are none."""
    if result.error:
        raise ProbeError(host, f"probe did not run: {result.error}")
    if result.exit_code == EXIT_NOT_FOUND:
        which = node_python or "python3 (or python)"
        raise ProbeError(host, f"{which} not found: {_tail(result.stderr, 2)}",
                         "install python3 on the node, or name its interpreter with --node-python PATH")
    if result.exit_code != 0:
        raise ProbeError(host, f"probe crashed (exit {result.exit_code}): "
                         f"{_tail(result.stderr or result.stdout)}")
    facts = last_json_object(result.stdout)
    if facts is None:
        raise ProbeError(host, f"probe printed no JSON: {_head(result.stdout) or '(nothing)'}"
                         + (f"; stderr: {_tail(result.stderr)}" if result.stderr.strip() else ""))
    if facts.get("schema") != SCHEMA:
        raise ProbeError(host, f"probe printed facts of schema {facts.get('schema')!r}, "
                         f"this envcheck reads schema {SCHEMA}", "use the same envcheck version everywhere")
    return facts


def probe_host(remote: Remote, *, deep: bool = False, node_python: Optional[str] = None,
               timeout: Optional[float] = None) -> HostResult:
    """run_probe() for fan-out: a failure becomes the HostResult's error, never an exception."""
    try:
        facts = run_probe(remote, deep=deep, node_python=node_python, timeout=timeout)
    except ProbeError as e:
        return HostResult(host=remote.name, error=e.reason + (f" (fix: {e.fix})" if e.fix else ""))
    except RemoteError as e:
        return HostResult(host=remote.name, error=e.one_line())
    return HostResult(host=remote.name, facts=facts)


def audit_host(remote: Remote, matrix: Matrix, *, deep: bool = False,
               node_python: Optional[str] = None, timeout: Optional[float] = None) -> HostResult:
    """Probe one host and judge its facts with the rules; never raises for a host problem."""
    result = probe_host(remote, deep=deep, node_python=node_python, timeout=timeout)
    if result.facts is not None:
        annotate_pci_gpus(result.facts, matrix)
        annotate_nccl(result.facts, matrix)
        annotate_cudnn(result.facts, matrix)
        verdict = judge(result.facts, matrix)
        result.findings, result.skipped = verdict.findings, verdict.skipped
    return result




def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(l.strip() for l in (text or "").strip().splitlines()[-lines:] if l.strip())[:600]


def _head(text: str, chars: int = 200) -> str:
    return " ".join((text or "").split())[:chars]
