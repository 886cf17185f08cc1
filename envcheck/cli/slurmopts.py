"""The options of the commands that can reach the nodes through srun inside a Slurm allocation
(audit, doctor, nccl-test, launch): `--launcher` and `--step-size`, declared once."""
from typing import List, Optional, Sequence

import typer

from envcheck.cli.common import Annotated
from envcheck.errors import UsageError
from envcheck.hostlist import expand_hostlist

LauncherOpt = Annotated[str, typer.Option(
    "--launcher", help="Reach the nodes over ssh, or with srun inside a Slurm allocation (hosts: the job's nodes).")]
StepSizeOpt = Annotated[int, typer.Option(
    "--step-size", metavar="N", min=1, help="With --launcher srun: at most N nodes per job step.")]


def check_launcher(launcher: str) -> None:
    if launcher not in ("ssh", "srun"):
        raise UsageError(f"--launcher {launcher!r} is not ssh or srun", "use --launcher ssh or --launcher srun")


def srun_hosts(hosts: Optional[Sequence[str]]) -> List[str]:
    """Node names from HOSTS arguments (Slurm hostlists expanded); [] = the allocation's."""
    return [n for h in (hosts or []) for n in expand_hostlist(h)]
