"""The options of the commands that can reach the nodes through srun inside a Slurm allocation
(audit, doctor, nccl-test, launch): `--launcher` and `--step-size`, declared once."""
from typing import List, Optional, Sequence

from envcheck import params as P
from envcheck.cli.common import Annotated
from envcheck.cli.options import option
from envcheck.errors import UsageError
from envcheck.hostlist import expand_hostlist

LauncherOpt = Annotated[str, option(P.LAUNCHER)]
StepSizeOpt = Annotated[int, option(P.STEP_SIZE)]


def check_launcher(launcher: str) -> None:
    if launcher not in ("ssh", "srun"):
        raise UsageError(f"--launcher {launcher!r} is not ssh or srun", "use --launcher ssh or --launcher srun")


def srun_hosts(hosts: Optional[Sequence[str]]) -> List[str]:
    """Node names from HOSTS arguments (Slurm hostlists expanded); [] = the allocation's."""
    return [n for h in (hosts or []) for n in expand_hostlist(h)]
