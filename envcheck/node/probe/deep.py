# envcheck probe, part deep: --deep: import torch in a child process and touch every GPU
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import json
import sys
from base import DEEP_FACTOR, Settings, section
from nccl import nccl_code_to_version
from run import run

DEEP = r'''
import json, sys
r = {"torch": None, "torch_cuda": None, "cudnn": None, "nccl": None, "cuda_available": None,
     "device_count": 0, "arch_list": None, "ops": [], "error": None}
def line(e):
    t = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, t[0] if t else "")
try:
    import torch
    r["torch"] = torch.__version__
    r["torch_cuda"] = getattr(torch.version, "cuda", None)
    for key, fn in (("cudnn", lambda: torch.backends.cudnn.version()),
                    ("nccl", lambda: torch.cuda.nccl.version()),
                    ("cuda_available", lambda: torch.cuda.is_available()),
                    ("device_count", lambda: torch.cuda.device_count()),
                    ("arch_list", lambda: torch.cuda.get_arch_list())):
        try:
            r[key] = fn()
        except Exception as e:
            r.setdefault("errors", []).append("%s: %s" % (key, line(e)))
    for i in range(r["device_count"] or 0):
        op = {"device": i, "ok": False, "error": None}
        try:
            op["name"] = torch.cuda.get_device_name(i)
            op["capability"] = "%d.%d" % tuple(torch.cuda.get_device_capability(i))
            x = torch.ones(4, device="cuda:%d" % i)
            op["ok"] = float((x * 2).sum().item()) == 8.0
            torch.cuda.synchronize(i)
        except Exception as e:
            op["error"] = line(e)
        r["ops"].append(op)
except Exception as e:
    r["error"] = line(e)
sys.stdout.write(json.dumps(r, default=str))
'''


@section("deep")
def collect_deep(facts=None):
    res = run([sys.executable, "-c", DEEP], timeout=Settings.timeout * DEEP_FACTOR)
    if res is None:
        return {"error": "importing torch / touching the GPUs did not finish in %g s"
                         % (Settings.timeout * DEEP_FACTOR)}
    try:  # the last line: importing torch may itself print to stdout
        deep = json.loads((res[1].strip().splitlines() or [""])[-1])
        if not isinstance(deep, dict):
            raise ValueError("not an object")
    except ValueError:
        tail = (res[2] or res[1]).strip().splitlines()[-3:]
        return {"error": "torch check crashed (exit %s): %s" % (res[0], " | ".join(tail))}
    nccl = deep.get("nccl")
    if isinstance(nccl, list):
        deep["nccl"] = ".".join(str(x) for x in nccl)
    elif isinstance(nccl, int):
        deep["nccl"] = nccl_code_to_version(nccl)
    return deep
