"""What `envcheck launch` checks before any rank starts, beyond the rank harness's preflight (node
facts, --ifname, MASTER_ADDR reachability: envcheck/ranks/preflight.py): torch importable under the
node interpreter, the working directory and the script present on every node, the files the
user asked to --sync copied there, and the audit's errors across the hosts."""
from __future__ import annotations

import io
import os
import shlex
import tarfile
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from envcheck.audit.fleet import audit_fleet
from envcheck.doctor.checks import GPU_ONLY_CODES
from envcheck.errors import UsageError
from envcheck.matrix.load import load_matrix
from envcheck.model import ERROR
from envcheck.ranks.plan import PreflightError
from envcheck.ranks.preflight import node_cmd
from envcheck.ranks.start import node_files
from envcheck.remote import Remote, RunResult, fan_out, last_json_object

def node_sources() -> Dict[str, str]:
    """The node scripts a launch ships into the run's directory: ours, and the supervision and
    the record protocol it shares with nccl-test's launcher."""
    return node_files("script_launcher.py", "rank_supervisor.py", "rank_protocol.py")


def _crashed(r: Remote, e: BaseException) -> RunResult:
    return RunResult(r.name, "", None, error=f"internal error: {type(e).__name__}: {e}")


@dataclass
class NodeCheck:
    host: str
    python: str = ""
    executable: str = ""
    torch: Optional[str] = None
    error: Optional[str] = None


def check_nodes(remotes: Sequence[Remote], python: Optional[str], chdir: str, script: str,
                timeout: float, forks: int) -> Tuple[List[NodeCheck], List[PreflightError]]:
    """Import torch under the node interpreter, look for the directory and the script (the
    harness's node preflight, rank_preflight.py's `check`)."""
    launcher_src = node_files("rank_preflight.py")["rank_preflight.py"]

    def one(r: Remote) -> RunResult:
        return r.run(node_cmd(python, "check", "--chdir", chdir, "--script", script),
                     stdin=launcher_src, timeout=timeout)

    checks, errs = [], []
    for r, res in zip(remotes, fan_out(list(remotes), one, forks).values_or(_crashed)):
        doc = last_json_object(res.stdout)
        if doc is None:
            why = res.error or res.tail(3) or f"exit {res.exit_code}"
            errs.append(PreflightError(f"{r.name}: cannot run {python or 'python3'}: {why}",
                                       r.name, "install Python or pass --node-python PATH"))
            continue
        c = NodeCheck(r.name, doc.get("python", ""), doc.get("executable", ""), doc.get("torch"))
        checks.append(c)
        if not c.torch:
            errs.append(PreflightError(
                f"{r.name}: torch does not import under {c.executable or python}: "
                f"{doc.get('torch_error')}", r.name,
                "pass --node-python with the venv or conda env that has torch, or install it"))
        if chdir and doc.get("chdir_ok") is False:
            errs.append(PreflightError(f"{r.name}: working directory {chdir} does not exist",
                                       r.name, "pass --chdir DIR, or --sync the directory"))
        elif doc.get("script_ok") is False:
            errs.append(PreflightError(
                f"{r.name}: script {script} is not in {chdir or 'the login directory'}", r.name,
                f"copy it there with --sync {shlex.quote(script)}, or use a shared filesystem"))
    return checks, errs


# what --sync holds in memory (gzip'd) and sends to every host: a script, its config, a small
# package; past this it is a job for rsync or a shared filesystem (`--sync /usr` is a typo)
MAX_SYNC_BYTES = 1 << 30
MAX_SYNC_FILES = 100_000


def _check_sync_size(full: str, shown: str) -> None:
    """Refuse a tree over the bounds by walking it, stopping at the bound (never the whole /usr)."""
    total = files = 0
    walk = os.walk(full) if os.path.isdir(full) else [(os.path.dirname(full), [], [os.path.basename(full)])]
    for root, dirs, names in walk:
        for n in names + dirs:
            files += 1
            try:
                total += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                continue
            if total > MAX_SYNC_BYTES or files > MAX_SYNC_FILES:
                raise UsageError(f"--sync {shown}: more than {MAX_SYNC_BYTES >> 30} GiB or {MAX_SYNC_FILES} "
                                 "files, which envcheck would hold in memory and send to every host",
                                 "--sync only the script and what it reads; copy large trees with rsync "
                                 "or use a shared filesystem")


def sync_archive(paths: Sequence[str]) -> Tuple[bytes, List[str]]:
    """One gzip'd tar of the files and directories to copy, each at its absolute path; bounded."""
    for p in paths:
        if not os.path.exists(os.path.abspath(p)):
            raise UsageError(f"--sync {p}: no such file or directory",
                             "name a file or directory on this machine")
        _check_sync_size(os.path.abspath(p), p)
    buf = io.BytesIO()
    names = []
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in paths:
            full = os.path.abspath(p)
            tar.add(full, arcname=full.lstrip("/"))
            names.append(full)
    return buf.getvalue(), names


def sync(remotes: Sequence[Remote], paths: Sequence[str], timeout: float,
         forks: int) -> List[PreflightError]:
    """Copy the paths to the same absolute paths on every remote host (this machine already
    has them, so with no other host nothing is built): tar over the command's stdin, one exec
    per host."""
    far = [r for r in remotes if not r.is_local]
    if not far:
        return []
    data, names = sync_archive(paths)
    cmd = "tar -xzf - --no-same-owner -C /"

    def one(r: Remote) -> RunResult:
        return r.run(cmd, stdin=data, timeout=timeout)

    errs = []
    for r, res in zip(far, fan_out(far, one, forks).values_or(_crashed)):
        if not res.ok:
            why = res.error or res.tail(3) or f"exit {res.exit_code}"
            errs.append(PreflightError(f"{r.name}: --sync of {', '.join(names)} failed: {why}",
                                       r.name, "check the disk and the permissions there"))
    return errs


def audit_errors(remotes: Sequence[Remote], python: Optional[str], matrix_path: Optional[str],
                 gpu_less: bool, timeout: float, forks: int) -> List[Dict[str, Any]]:
    """The audit's error findings across the hosts (GPU-only ones skipped on GPU-less nodes,
    where the ranks run on CPU), as dicts for the report."""

    matrix = load_matrix(matrix_path)
    audit = audit_fleet(remotes, matrix, node_python=python, timeout=timeout, forks=forks)
    out = [{"host": r.host, "code": "unreachable", "message": r.error,
            "fix": "check that the host is up and sshd answers"} for r in audit.unreachable]
    skip = set(GPU_ONLY_CODES) if gpu_less else set()
    found = [(r.host, f) for r in audit.results for f in r.findings] + \
        [(f.host, f) for f in audit.fleet]
    for host, f in found:
        if f.severity == ERROR and f.code not in skip:
            out.append({"host": f.host or host, "code": f.code, "message": f.message,
                        "fix": f.fix})
    return out
