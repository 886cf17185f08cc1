"""`envcheck audit`: probe nodes and judge what they have. With no HOSTS, this machine."""
from __future__ import annotations

from typing import List, Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, guard, print_json
from envcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREACHABLE, UsageError
from envcheck.matrix import load_matrix
from envcheck.model import HostResult, has_errors
from envcheck.probe_runner import audit_host
from envcheck.remote import LocalRemote
from envcheck.report import audit_json, render_audit


def exit_code(results: List[HostResult]) -> int:
    """3 when a host could not be audited (nothing can be vouched for there), else 1 when an
    error finding exists, else 0."""
    if any(r.error for r in results):
        return EXIT_UNREACHABLE
    return EXIT_FINDINGS if any(has_errors(r.findings) for r in results) else EXIT_OK


@app.command("audit")
@guard
def audit(
    hosts: Annotated[Optional[List[str]], typer.Argument(
        metavar="HOSTS", show_default=False,
        help="Nodes to audit over SSH, as user@host:port (user and port optional). "
             "None: this machine.")] = None,
    deep: Annotated[bool, typer.Option(
        "--deep", help="Also import torch on the node and run a tiny op on every GPU (slower).")] = False,
    node_python: Annotated[Optional[str], typer.Option(
        "--node-python", metavar="PATH",
        help="Interpreter that runs the probe; torch's facts are read from its environment "
             "(default: python3, else python).")] = None,
    timeout: Annotated[Optional[float], typer.Option(
        "--timeout", metavar="SECONDS", min=1,
        help="Give up on the probe after this long (default 60, with --deep 240).")] = None,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Probe a node and report its driver, GPUs, CUDA, cuDNN, torch, NCCL, Python, gcc and
    environment, with what will break. Example: envcheck audit --json"""
    if hosts:
        raise UsageError(f"auditing remote hosts ({hosts[0]} ...) is not available in this build yet",
                         "run `envcheck audit` with no hosts on each node")
    m = load_matrix(matrix)
    results = [audit_host(LocalRemote("localhost"), m, deep=deep, node_python=node_python,
                          timeout=timeout)]
    if json_out:
        print_json(audit_json(results))
    else:
        typer.echo(render_audit(results))
    raise typer.Exit(exit_code(results))
