"""The options of the commands that start ranks on the nodes (nccl-test, doctor, launch), where
they mean the same thing in each: built once from their declarations (envcheck/params), as
Annotated types (see hostopts.py for the host options)."""
from typing import Optional

from envcheck import params as P
from envcheck.cli.common import Annotated
from envcheck.cli.options import option

BackendOpt = Annotated[str, option(P.BACKEND)]
NprocOpt = Annotated[Optional[int], option(P.NPROC_PER_NODE)]
MasterAddrOpt = Annotated[Optional[str], option(P.MASTER_ADDR)]
MasterPortOpt = Annotated[Optional[int], option(P.MASTER_PORT)]
IfnameOpt = Annotated[Optional[str], option(P.IFNAME)]
CollectiveTimeoutOpt = Annotated[float, option(P.COLLECTIVE_TIMEOUT)]
MaxBytesOpt = Annotated[int, option(P.MAX_BYTES)]
MinBusbwOpt = Annotated[Optional[float], option(P.MIN_BUSBW)]
MAX_BYTES_DEFAULT = "256M"    # the same in nccl-test and doctor: their busbw compare
