"""Run the node-side probe on one host through any Remote and turn its output into facts.

The probe (the parts in envcheck/node/probe/, joined into one script) goes on stdin to the node's own interpreter as
`python3 -c BOOTSTRAP [--deep]` — one remote command per host, nothing copied, nothing left behind but the
probe's own cache in ~/.cache/envcheck (node/probe_loader.py, part kept). The
same function serves the local audit (LocalRemote) and the fleet audit (SSHRemote), so the two
cannot drift apart. Failures are data for callers that fan out: probe_host() never raises.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import shlex
import threading
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from envcheck.errors import RemoteError, UsageError
from envcheck.facts.load import derive, validate
from envcheck.facts.schema import Facts
from envcheck.matrix.load import Matrix
from envcheck.model import HostResult
from envcheck.remote import Remote, RunResult, last_json_object
from envcheck.rules import judge

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
# the interpreters tried on a node, in order: minimal RHEL 8/9 images have no python3 on PATH but
# /usr/libexec/platform-python (the system's own python3); `python` last, for old images
NODE_PYTHONS = ("python3", "/usr/libexec/platform-python", "python")
# How the node's interpreter reads the probe from stdin: whole, as `python3 -c`, then compiles
# only the loader in front of it (envcheck/node/probe_loader.py, up to the `# ---- probe KEY`
# line), which runs the probe from its compiled copy on the node, or compiles it (no loader in
# front: all of stdin is compiled). `python3 -` reads through the tokenizer's file reader, which
# under PYTHONUNBUFFERED=1 (set in many training images and job environments) asks for one byte
# per read(): ~30 ms more CPU for this script (bench/probe_cpu.py), on every probe. sys.argv is
# the same but for [0] ('-c'); Python 2 still gets the probe's own "needs Python >= 3.6" (no
# sys.stdin.buffer there; the loader compiles the probe for any Python < 3.6).
BOOTSTRAP = ('import sys;_envcheck_in=getattr(sys.stdin,"buffer",sys.stdin).read();'
             '_envcheck_at=_envcheck_in.find(b"\\n# ---- probe ")+1;'
             'exec(compile(_envcheck_in[:_envcheck_at] or _envcheck_in,"envcheck-probe","exec"))')
LOADER = PROBE_DIR.parent / "probe_loader.py"


class ProbeError(RemoteError):
    """The probe could not run on a host, or did not print a facts document (exit code 3).
    `reason` is the message without the host, for tables that name the host already."""

    def __init__(self, host: str, reason: str, fix: Optional[str] = None):
        super().__init__(f"{host}: {reason}", fix)
        self.host = host
        self.reason = reason


def probe_parts(sections: Optional[Sequence[str]] = None, deep: bool = False) -> List[Path]:
    """The probe's part files in the order they are joined: each after the parts it imports,
    otherwise A-Z (so base, which imports no part, comes first, and main, which imports them
    all, last). With `sections` (and `deep`), only the parts those sections need: the part
    that registers each, the parts of the sections it needs, and what those import."""
    return [PROBE_DIR / f"{n}.py" for n in _joined(_key(), _wanted(sections, deep))[0]]


def _wanted(sections: Optional[Sequence[str]], deep: bool) -> Optional[Tuple[str, ...]]:
    return None if sections is None else tuple(sections) + (("deep",) if deep else ())


def _key() -> Tuple:
    """What the joined script depends on: the part files as they are now (a test may rewrite one)."""
    try:
        with os.scandir(PROBE_DIR) as it:
            return (str(PROBE_DIR),) + tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size)
                                                    for e in it if e.name.endswith(".py")))
    except OSError:
        return (str(PROBE_DIR), None)


@functools.lru_cache(maxsize=32)
def _joined(key: Tuple, wanted: Optional[Tuple[str, ...]]) -> Tuple[Tuple[str, ...], str]:
    """(the parts, in order; the script joined from them), once per key: an audit ships the same
    script to every host, and joining it costs ~35 ms of the controller's CPU."""
    texts = {p.stem: _read_part(p) for p in sorted(PROBE_DIR.glob("*.py"))}
    imports = {name: _part_imports(text, texts) for name, text in texts.items()}
    needs = {name: {m for m, _, _ in imports[name]} for name in texts}
    order: List[str] = []
    while len(order) < len(texts):
        ready = sorted(n for n in texts if n not in order and needs[n] <= set(order))
        if not ready:  # a cycle: a packaging bug, caught by tests/node/test_probe_parts.py
            raise ProbeError("localhost", "the probe parts import each other in a cycle: "
                             + ", ".join(sorted(n for n in texts if n not in order)))
        order.append(ready[0])
    if wanted is not None:
        keep = _parts_for(wanted, texts, imports)
        order = [n for n in order if n in keep]
    chunks = []
    for name in order:
        lines = texts[name].splitlines(keepends=True)
        for _, (first, last), _ in imports[name]:
            lines[first - 1:last] = [""] * (last - first + 1)
        text = "".join(lines)
        if name + ".py" != PROBE_FIRST:
            text = f"# ---- part {name} " + "-" * 60 + "\n\n" + _PART_HEADER.sub("", text, count=1)
        chunks.append(text.rstrip("\n") + "\n")
    return tuple(order), "\n\n".join(chunks)


def _parts_for(wanted: Sequence[str], texts, imports) -> set:
    """The parts the sections `wanted` need: base and main, the part registering each section
    and each section it needs, and every part those import with `from PART import ...` (main's
    bare `import PART, ...` lines only register sections when it runs on its own)."""
    registered = _sections(texts)
    todo, seen = list(wanted), set()
    while todo:
        name = todo.pop()
        if name in registered and name not in seen:
            seen.add(name)
            todo += registered[name][1]
    keep, todo = set(), [PROBE_FIRST[:-3], "main"] + [registered[s][0] for s in seen]
    while todo:
        part = todo.pop()
        if part in texts and part not in keep:
            keep.add(part)
            todo += [m for m, _, bare in imports[part] if not bare]
    return keep


def _sections(texts) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """section -> (the part registering it, the sections it needs), from each part's
    @section("name", ..., needs=(...)) decorators."""
    out = {}
    for part, text in texts.items():
        for node in _parse(text).body:
            for d in getattr(node, "decorator_list", []):
                if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "section" and d.args:
                    needs = [ast.literal_eval(k.value) for k in d.keywords if k.arg == "needs"]
                    out[ast.literal_eval(d.args[0])] = (part, tuple(needs[0]) if needs else ())
    return out


def document_sections() -> Tuple[str, ...]:
    """main.DOCUMENT: the sections an audit reads, what runs without --only."""
    return _document(_key())


@functools.lru_cache(maxsize=8)
def _document(key: Tuple) -> Tuple[str, ...]:
    for node in _parse(_read_part(PROBE_DIR / "main.py")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["DOCUMENT"]:
            return tuple(ast.literal_eval(node.value))
    raise ProbeError("localhost", "the probe's main part has no DOCUMENT")


def _read_part(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:  # a broken install, not a host problem
        raise ProbeError("localhost", f"cannot read the probe part {path}: {e.strerror}",
                         "reinstall envcheck (pip install --force-reinstall envcheck)") from e


# ast.parse from several threads at once (a fan-out's threads each joining the probe) fails now
# and then on CPython 3.11 with "SystemError: AST constructor recursion depth mismatch": seen
# when eight hosts' rank preflight joined it together on 3.11.7. Every parse here takes the lock.
_AST_LOCK = threading.Lock()


def _parse(text: str) -> ast.Module:
    with _AST_LOCK:
        return ast.parse(text)


def _part_imports(text: str, parts) -> List[Tuple[str, Tuple[int, int], bool]]:
    """(part, (first line, last line), bare) of each top-level import of another part in
    `text`: `from <part> import a, b`, or `import <part>, ...` (bare: where every name is a part)."""
    out = []
    for node in _parse(text).body:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in parts:
            out.append((node.module, (node.lineno, node.end_lineno), False))
        elif isinstance(node, ast.Import) and all(a.name in parts for a in node.names):
            out += [(a.name, (node.lineno, node.end_lineno), True) for a in node.names]
    return out


def probe_source(sections: Optional[Sequence[str]] = None, deep: bool = False) -> str:
    """The probe's text, exactly as shipped: its parts (read from the installed package) joined
    into one script, each after a `# ---- part NAME ----` line in place of its own header, with
    its imports of other parts dropped (the names are already defined above it). Its stdlib
    imports stay: each part's text stands on its own in the script too. All the parts, or with
    `sections` (and `deep`) only those they need: a node compiles every line it is sent, ~10 ms
    of CPU for the whole probe."""
    return _joined(_key(), _wanted(sections, deep))[1]


def shipped_source(only: Sequence[str] = (), deep: bool = False) -> str:
    """The script a command sends: the parts of the sections it asks for, or of the audit's
    document when it asks for none, behind the loader (see framed())."""
    return framed(probe_source(tuple(only) or tuple(n for n in document_sections() if n != "deep"), deep))


def framed(source: str) -> str:
    """`source` as shipped: the loader (envcheck/node/probe_loader.py), then a
    `# ---- probe KEY ----` line, KEY a hash of `source`, under which the node keeps the probe
    compiled; then `source`. Saved to a file it runs as it is (the loader does nothing then)."""
    return _framed(_read_part(LOADER), source)


@functools.lru_cache(maxsize=32)
def _framed(loader: str, source: str) -> str:
    key = hashlib.sha256(source.encode("utf-8")).hexdigest()[:32]
    return f"{loader.rstrip()}\n\n\n# ---- probe {key} {'-' * 56}\n{source}"


def probe_args(*, deep: bool = False, only: Sequence[str] = (), paths: Sequence[str] = (),
               files: Sequence[str] = ()) -> List[str]:
    """The probe's own arguments: --deep, the sections asked for (none: the audit's document),
    the places the disk, toolkit, manifest and owner sections look at, the start-up files the
    rcfile section reads."""
    return (["--deep"] if deep else []) + (["--only", ",".join(only)] if only else []) + \
        [a for p in paths for a in ("--path", p)] + [a for p in files for a in ("--file", p)]


def probe_command(*, deep: bool = False, node_python: Optional[str] = None,
                  only: Sequence[str] = (), paths: Sequence[str] = (), files: Sequence[str] = ()) -> str:
    """The one command line that runs the probe from stdin.

    Wrapped in `sh -c` because over SSH it runs in the user's login shell, which may be csh or
    fish; the first of NODE_PYTHONS there runs it (python for old images where only that name
    exists, platform-python on minimal RHEL images that have no python3 on PATH).
    """
    args = probe_args(deep=deep, only=only, paths=paths, files=files)
    if node_python:
        return " ".join(shlex.quote(a) for a in [node_python, "-c", BOOTSTRAP, *args])
    tries = " ".join(shlex.quote(p) for p in NODE_PYTHONS)
    script = (f'boot=$1; shift; for p in {tries}; do if command -v "$p" >/dev/null 2>&1; then '
              f'exec "$p" -c "$boot" "$@"; fi; done; '
              f'echo "envcheck-probe: none of {", ".join(NODE_PYTHONS)} here" >&2; exit {EXIT_NOT_FOUND}')
    return " ".join(shlex.quote(a) for a in ["sh", "-c", script, "envcheck-probe", BOOTSTRAP, *args])


def show_probe(*, deep: bool = False, node_python: Optional[str] = None, only: Sequence[str] = (),
               paths: Sequence[str] = (), files: Sequence[str] = ()) -> Tuple[str, str]:
    """Exactly what runs on a node for a command (`--show-probe`): (the command line, the script
    it reads on stdin)."""
    return (probe_command(deep=deep, node_python=node_python, only=only, paths=paths, files=files),
            shipped_source(only, deep))


def run_probe(remote: Remote, *, deep: bool = False, node_python: Optional[str] = None,
              timeout: Optional[float] = None, only: Sequence[str] = (), paths: Sequence[str] = (),
              files: Sequence[str] = ()) -> Facts:
    """Run the probe on `remote` and return its facts (with `only`: those sections, and the
    ones they need). Raises ProbeError naming the host and why: unreachable, timed out, no
    interpreter, crashed (with the tail of stderr), no JSON."""
    if timeout is None:
        timeout = DEEP_PROBE_TIMEOUT if deep else PROBE_TIMEOUT
    command, script = show_probe(deep=deep, node_python=node_python, only=only, paths=paths, files=files)
    result = remote.run(command, stdin=script, timeout=timeout)
    return parse_probe_result(remote.name, result, node_python=node_python)


def parse_probe_result(host: str, result: RunResult, node_python: Optional[str] = None) -> Facts:
    """The facts in a finished probe run, or ProbeError saying why there are none."""
    if result.error:
        raise ProbeError(host, f"probe did not run: {result.error}")
    if result.exit_code == EXIT_NOT_FOUND:
        which = node_python or " or ".join(NODE_PYTHONS)
        raise ProbeError(host, f"{which} not found: {_tail(result.stderr, 2)}",
                         "install python3 on the node, or name its interpreter with --node-python PATH")
    if result.exit_code != 0:
        raise ProbeError(host, f"probe crashed (exit {result.exit_code}): "
                         f"{_tail(result.stderr or result.stdout)}")
    facts = last_json_object(result.stdout)
    if facts is None:
        raise ProbeError(host, f"probe printed no JSON: {_head(result.stdout) or '(nothing)'}"
                         + (f"; stderr: {_tail(result.stderr)}" if result.stderr.strip() else ""))
    try:
        return validate(facts, "the probe printed facts that", schema_required=True)
    except UsageError as e:
        raise ProbeError(host, e.message, "use the same envcheck version everywhere") from e


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
    return judge_result(probe_host(remote, deep=deep, node_python=node_python, timeout=timeout), matrix)


def judge_result(result: HostResult, matrix: Matrix) -> HostResult:
    """Name the probed host's facts from the matrix and judge them with the rules (in place; a
    host that could not be probed is returned as it is)."""
    if result.facts is not None:
        derive(result.facts, matrix)
        verdict = judge(result.facts, matrix)
        result.findings, result.skipped = verdict.findings, verdict.skipped
    return result




def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(l.strip() for l in (text or "").strip().splitlines()[-lines:] if l.strip())[:600]


def _head(text: str, chars: int = 200) -> str:
    return " ".join((text or "").split())[:chars]
