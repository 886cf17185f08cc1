"""The options of the commands that start ranks on the nodes (nccl-test, doctor, launch), where
they mean the same thing in each: declared once, as Annotated types (see hostopts.py for the
host options). An option whose help or bounds differ per command is declared by that command."""
from typing import Optional

import typer

from envcheck.cli.common import Annotated

BackendOpt = Annotated[str, typer.Option(
    "--backend", help="nccl, gloo, or auto (nccl when every node has a GPU).")]
# nccl-test and doctor; launch's own says 1 rank on a host without GPUs
WorkerNprocOpt = Annotated[Optional[int], typer.Option(
    "--nproc-per-node", help="Ranks per host (default: its GPU count; 2 without GPUs).",
    min=1, max=1024)]
MasterAddrOpt = Annotated[Optional[str], typer.Option(
    "--master-addr", help="MASTER_ADDR (default: the first host's address).")]
# nccl-test and launch; doctor's --master-port is checked by the guard (cli/common.check_numbers)
MasterPortOpt = Annotated[Optional[int], typer.Option(
    "--master-port", min=1, max=65535, help="MASTER_PORT (default: a free one).")]
