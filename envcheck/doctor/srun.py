"""Start the all-reduce workers with Slurm's srun instead of SSH (`doctor --launcher srun`).

Inside an allocation srun already knows the nodes, starts one task per GPU, and, with
--kill-on-bad-exit and --wait, kills every task when one dies instead of letting the others
wait forever. The worker goes on the command line (`python3 -c SOURCE`), so nothing has to be
copied to the nodes and nothing is left there. srun numbers tasks in SLURM_PROCID /
SLURM_LOCALID / SLURM_NTASKS; the worker reads torch's RANK / LOCAL_RANK / WORLD_SIZE, so a
tiny sh wrapper maps one onto the other per task.

What needs a real Slurm (not tested here): that the allocation covers the nodes, GPU binding
(--gpus-per-task), and srun's own signal handling on timeout.
"""
from __future__ import annotations

import math
import shlex
from typing import Dict, List, Mapping, Optional, Sequence

from envcheck.errors import UsageError

# $0 is the script name given after the -c string; "$@" the worker command, passed through
# untouched so the worker source needs no quoting at all
# (the first task also names the step, for reports: `@ENVCHECK step JOB.STEP`)
_WRAPPER = ('[ "$SLURM_PROCID" != 0 ] || echo "@ENVCHECK step $SLURM_JOB_ID.$SLURM_STEP_ID"; '
            'RANK="$SLURM_PROCID" LOCAL_RANK="$SLURM_LOCALID" WORLD_SIZE="$SLURM_NTASKS" '
            'LOCAL_WORLD_SIZE="$SLURM_NTASKS_PER_NODE" GROUP_RANK="$SLURM_NODEID" exec "$@"')


def srun_argv(hosts: Sequence[str], *, nproc_per_node: int, worker_source: str = "",
              worker_args: Sequence[str] = (), python: str = "python3", master_addr: str,
              master_port: int, timeout_s: float, env: Optional[Mapping[str, str]] = None,
              srun: str = "srun", program: Optional[Sequence[str]] = None,
              job_name: str = "envcheck-allreduce", extra: Sequence[str] = ()) -> List[str]:
    """The srun command line (argv, no shell) that runs one worker per process slot: `python -c
    worker_source worker_args`, or `python program…` (launch: the user's script and its args);
    `extra`: more srun options (--label, --chdir=…)."""
    if not hosts:
        raise UsageError("srun: no hosts", "run inside an allocation (SLURM_JOB_NODELIST) or name the hosts")
    if nproc_per_node < 1:
        raise UsageError(f"srun: --nproc-per-node must be >= 1, not {nproc_per_node}", "give a positive count")
    if not (0 < int(master_port) < 65536):
        raise UsageError(f"srun: master port {master_port} out of range", "give a port 1-65535")
    exports: Dict[str, str] = {"MASTER_ADDR": master_addr, "MASTER_PORT": str(int(master_port))}
    for k, v in (env or {}).items():
        if "," in str(v) or "=" in k:
            # --export splits on commas; such values cannot be passed that way
            raise UsageError(f"srun: environment value {k}={v!r} contains a comma", "pass it without commas")
        exports[k] = str(v)
    minutes = max(1, math.ceil(timeout_s / 60.0))
    argv = [
        srun,
        f"--nodes={len(hosts)}",
        f"--ntasks={len(hosts) * nproc_per_node}",
        f"--ntasks-per-node={nproc_per_node}",
        f"--nodelist={','.join(hosts)}",
        "--kill-on-bad-exit=1",      # one task failing kills the step: no rank waits forever
        "--wait=10",                 # and once one task ends, the rest get 10 s, then are killed
        f"--time={minutes}",
        "--export=ALL," + ",".join(f"{k}={v}" for k, v in exports.items()),
        f"--job-name={job_name}", *extra,
        "sh", "-c", _WRAPPER, "envcheck-worker",
        *([python, *program] if program is not None else [python, "-c", worker_source, *worker_args]),
    ]
    return argv


def describe(argv: Sequence[str]) -> str:
    """The command line as a user could paste it, with the worker source elided."""
    shown = list(argv)
    if "-c" in shown:
        i = len(shown) - 1 - shown[::-1].index("-c")
        if i + 1 < len(shown) and "\n" in shown[i + 1]:
            shown[i + 1] = "<allreduce_worker.py>"
    return " ".join(shlex.quote(a) for a in shown)
