# envcheck probe, part pip_cudnn: the cuDNN libraries pip installed (nvidia-cudnn-cu*) on this interpreter's path
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import sys
from base import section
from run import ls


@section("pip_cudnn", default=[])
def collect_pip_cudnn(facts=None):
    """The libcudnn.so.* under nvidia/cudnn/lib in each sys.path entry, in sys.path order: the
    copy torch's RUNPATH names, which a system cuDNN on LD_LIBRARY_PATH would shadow."""
    found = []
    for d in sys.path:
        for p in ls(os.path.join(d, "nvidia", "cudnn", "lib"), re.compile(r"^libcudnn\.so\..")):
            if p not in found:
                found.append(p)
    return found
