"""Figures for fix verification (envcheck/rules/fixcheck.py): what trying every error's fix
costs an audit of HOSTS hosts, against judging them without it, and how many times the rules
ran per host (bounded by fixcheck.BUDGET). Prints; asserts nothing.

    python bench/fix_check.py [HOSTS] [--quick]    (--quick: 5 hosts, what CI runs)

The hosts are probe-shaped facts with several errors each (a torch built for CUDA 11.7 beside
nvcc 12.1, gcc 12, a driver too old for both, on A100s or an RTX 4090), the worst case short of
a host where nothing is right.
"""
from __future__ import annotations

import sys
import time

import envcheck.rules as rules
from envcheck.matrix.load import load_matrix
from envcheck.rules import fixcheck, judge

GPUS = ("NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090")
DRIVERS = ("470.182.03", "510.47.03", "535.104.05")


def facts(i: int) -> dict:
    root = "/usr/local/cuda-12.1"
    return {
        "schema": 1, "origin": "probe", "hostname": f"n{i:03d}", "python": {"version": "3.10.12"},
        "driver": {"version": DRIVERS[i % 3]},
        "gpus": [{"index": g, "name": GPUS[i % 2], "compute_capability": None} for g in range(8)],
        "cuda": {"toolkits": [{"path": root, "version": "12.1.1"}],
                 "symlink": {"path": "/usr/local/cuda", "target": root},
                 "nvcc": {"path": f"{root}/bin/nvcc", "version": "12.1.1",
                          "host_compiler": {"path": "/usr/bin/gcc", "version": "12.2.0", "how": "PATH"}},
                 "version": "12.1.1"},
        "cudnn": {"version": "8.9.7", "headers": [{"path": f"{root}/include/cudnn_version.h", "version": "8.9.7"}],
                  "libs": [{"path": f"{root}/lib64/libcudnn.so.8", "version": "8.9.7"}]},
        "packages": {"torch": {"version": "1.13.1+cu117"}, "torchvision": {"version": "0.14.1+cu117"}},
        "torch": {"version": "1.13.1", "local": "cu117", "cuda": "11.7", "cuda_source": "local-tag"},
        "gcc": {"version": "12.2.0", "path": "/usr/bin/gcc"},
        "env": {"PATH": f"{root}/bin:/usr/bin", "CUDA_HOME": root, "LD_LIBRARY_PATH": f"{root}/lib64"},
        "interfaces": [{"name": "eth0", "addrs": ["10.0.0.1/24"]}],
    }


def timed(docs, m, verify: bool):
    t = time.perf_counter()
    out = [judge(d, m, verify_fixes=verify) for d in docs]
    return time.perf_counter() - t, out


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--quick"]
    hosts = 5 if "--quick" in sys.argv[1:] else int(args[0]) if args else 100
    m = load_matrix()
    docs = [facts(i) for i in range(hosts)]
    timed(docs[:3], m, True)  # warm the matrix's caches
    plain, _ = timed(docs, m, False)
    runs = []
    original = rules._run

    def counting(f, matrix):
        runs.append(1)
        return original(f, matrix)

    rules._run = counting
    try:
        per_host = []
        for d in docs:
            before = len(runs)
            judge(d, m)
            per_host.append(len(runs) - before)
    finally:
        rules._run = original
    checked, out = timed(docs, m, True)
    errors = sum(1 for j in out for f in j.findings if f.severity == "error")
    status = {}
    for j in out:
        for f in j.findings:
            if f.fix_check:
                status[f.fix_check.status] = status.get(f.fix_check.status, 0) + 1
    print(f"{hosts} hosts, {errors} error findings ({errors / hosts:.1f} per host); fixes: "
          + ", ".join(f"{n} {s}" for s, n in sorted(status.items())))
    print(f"judge without fix checks: {plain * 1000:.0f} ms ({plain / hosts * 1000:.2f} ms per host)")
    print(f"judge with fix checks:    {checked * 1000:.0f} ms ({checked / hosts * 1000:.2f} ms per host)")
    print(f"rule runs per host: max {max(per_host)}, mean {sum(per_host) / hosts:.1f} "
          f"(bound: 1 + fixcheck.BUDGET = {1 + fixcheck.BUDGET})")


if __name__ == "__main__":
    main()
