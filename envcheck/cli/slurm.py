"""`envcheck slurm-check`: the node-local hook for Slurm's HealthCheckProgram, Prolog and Epilog
(envcheck/slurm/hook.py), and `--print-config`, the script that installs it (envcheck/slurm/config.py)."""
import os
import shutil
import socket
import sys
import threading
from typing import Optional

import typer

from envcheck import params as P
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, guard, print_json
from envcheck.cli.options import option
from envcheck.errors import UsageError
from envcheck.matrix.load import load_matrix
from envcheck.slurm import config

# past the deadline, this much more before the process stops itself whatever it is doing
HARD_STOP_GRACE = 3.0


def _mode(mode: Optional[str]) -> str:
    if mode is None:
        ctx = os.environ.get("SLURM_SCRIPT_CONTEXT", "")
        return {"prolog_slurmd": "prolog", "epilog_slurmd": "epilog"}.get(ctx, "healthcheck")
    if mode not in config.MODES:
        raise UsageError(f"--mode {mode!r} is not one of {', '.join(config.MODES)}",
                         "use --mode healthcheck (HealthCheckProgram), prolog or epilog")
    return mode


def _hard_stop(seconds: float, code: int) -> None:
    """The last line of defence against a hang the per-call timeouts missed: Slurm kills the hook
    at 60 s and, for a Prolog, drains the node for it; this stops it first, with a line saying so."""
    def stop() -> None:
        sys.stderr.write(f"envcheck: slurm-check stopped itself at its deadline ({seconds:g} s)\n")
        sys.stderr.flush()
        os._exit(code)

    t = threading.Timer(seconds, stop)
    t.daemon = True
    t.start()


@app.command("slurm-check")
@guard
def slurm_check(
    mode: Annotated[Optional[str], option(P.HOOK_MODE)] = None,
    print_config: Annotated[bool, typer.Option("--print-config", help="Print a script that installs the hook's wrapper (run it as root on every node), with the slurm.conf lines in its comments, and exit.")] = False,
    wrapper: Annotated[str, option(P.HOOK_WRAPPER)] = "/usr/local/sbin/envcheck-slurm-hook",
    interval: Annotated[int, option(P.HOOK_INTERVAL)] = 300,
    node: Annotated[Optional[str], option(P.SLURM_NODE)] = None,
    deadline: Annotated[float, option(P.HOOK_DEADLINE)] = 40.0,
    strict: Annotated[bool, typer.Option("--strict", help="A WARN verdict drains too.")] = False,
    drain_unknown: Annotated[bool, typer.Option("--drain-unknown", help="A probe that crashed or timed out (UNKNOWN) drains too.")] = False,
    expect_gpus: Annotated[bool, typer.Option("--expect-gpus/--no-expect-gpus", help="--no-expect-gpus: a CPU-only node; a missing NVIDIA driver is then not a warning.")] = True,
    xid_since: Annotated[str, option(P.XID_SINCE)] = "24h",
    state_dir: Annotated[str, option(P.STATE_DIR)] = "/var/lib/envcheck",
    scontrol: Annotated[str, option(P.SCONTROL)] = "scontrol",
    scontrol_timeout: Annotated[float, option(P.SCONTROL_TIMEOUT)] = 5.0,
    node_python: Annotated[Optional[str], option(P.NODE_PYTHON, help="Interpreter that runs the probe (default: envcheck's own).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be done; never call scontrol update nor write the local record.")] = False,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check this node as Slurm's HealthCheckProgram, Prolog or Epilog: drain it with an
    `envcheck:` reason when it fails, resume it when envcheck drained it and it passes.
    Example: envcheck slurm-check --print-config | sh

    The node-local hook for Slurm's HealthCheckProgram, Prolog and Epilog: the same local check as
    doctor, and the node drained with an `envcheck:` reason when it fails, resumed when envcheck
    drained it and it passes; never touches a reason it did not write; `--print-config` installs
    it."""
    the_mode = _mode(mode)
    since = config.parse_duration(xid_since, "--xid-since")
    hook_args = ((["--strict"] if strict else []) + (["--drain-unknown"] if drain_unknown else [])
                 + ([] if expect_gpus else ["--no-expect-gpus"])
                 + ["--xid-since", xid_since, "--state-dir", str(state_dir), "--deadline", f"{deadline:g}"])
    if print_config:
        # the hook runs with almost no environment: what it needs is named by absolute path
        if node_python:
            found = shutil.which(node_python)
            if not found:
                raise UsageError(f"--node-python: {node_python!r} is not an executable here",
                                 "give the absolute path of the interpreter the probe runs under on the nodes")
            hook_args += ["--node-python", os.path.abspath(found)]
        if matrix:
            hook_args += ["--matrix", os.path.abspath(str(matrix))]
        typer.echo(config.print_config(sys.executable, hook_args, wrapper, interval,
                                       scontrol if os.path.isabs(scontrol) else None,
                                       os.environ.get("SLURM_CONF")), nl=False)
        raise typer.Exit(0)
    # Slurm gives a HealthCheckProgram no PATH at all: the probe and scontrol need one
    os.environ.setdefault("PATH", config.DEFAULT_PATH)
    # lazy: the hook (probe runner, rules, doctor's verdicts) costs ~70 ms CPU at start-up (-X importtime, issue 26); only slurm-check needs it
    from envcheck.slurm.hook import HookOptions, run_hook
    from envcheck.slurm.render import render_hook

    _hard_stop(deadline + HARD_STOP_GRACE, 1 if (drain_unknown and the_mode != "healthcheck") else
               (3 if the_mode == "healthcheck" else 0))
    opts = HookOptions(the_mode, node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0],
                       deadline=deadline, strict=strict, drain_unknown=drain_unknown, expect_gpus=expect_gpus,
                       xid_since=since, state_dir=str(state_dir), scontrol=scontrol,
                       scontrol_timeout=scontrol_timeout, node_python=node_python or sys.executable,
                       job_id=os.environ.get("SLURM_JOB_ID", ""), dry_run=dry_run)
    rep = run_hook(opts, load_matrix(matrix))
    if json_out:
        print_json(rep.to_dict())
    else:
        typer.echo(render_hook(rep), nl=False)
    raise typer.Exit(rep.exit_code)
