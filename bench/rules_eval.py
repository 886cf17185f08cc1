"""Figures for the matrix and the rules: load+validate time of compat_matrix.yaml, and the time
to judge one host's facts (a fleet audit judges every host). Prints; asserts nothing.

    python bench/rules_eval.py [HOSTS] [--quick]    (--quick: 10 hosts, what CI runs)
"""
from __future__ import annotations

import sys
import time

from envcheck.matrix.load import load_matrix
from envcheck.rules import REGISTRY, evaluate


def facts(i: int) -> dict:
    return {
        "schema": 1, "origin": "probe", "hostname": f"n{i}", "python": {"version": "3.7.3"},
        "driver": {"version": "410.48"}, "gpus": [{"index": g, "name": "Tesla V100-SXM2-16GB",
                                                    "compute_capability": None} for g in range(8)],
        "cuda": {"toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130"}],
                 "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-10.0"},
                 "nvcc": {"path": "/usr/local/cuda-10.0/bin/nvcc", "version": "10.0.130"}, "version": "10.0.130"},
        "cudnn": {"version": "7.6.5", "libs": [{"path": "/usr/local/cuda-10.0/lib64/libcudnn.so.7"}]},
        "packages": {"torch": {"version": "1.1.0"}, "torchvision": {"version": "0.3.0"}},
        "torch": {"version": "1.1.0", "local": None, "cuda": "10.0.130", "cuda_source": "deep"},
        "gcc": {"version": "7.5.0"},
        "env": {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
                "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64", "NCCL_SOCKET_IFNAME": "eth0"},
        "interfaces": [{"name": "eth0", "addrs": ["10.0.0.1/24"]}],
    }


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--quick"]
    hosts = 10 if "--quick" in sys.argv[1:] else int(args[0]) if args else 300
    t = time.perf_counter()
    m = load_matrix()
    load = time.perf_counter() - t
    docs = [facts(i) for i in range(hosts)]
    t = time.perf_counter()
    n = sum(len(evaluate(d, m)) for d in docs)
    judge = time.perf_counter() - t
    print(f"load+validate compat_matrix.yaml: {load * 1000:.0f} ms")
    print(f"{len(REGISTRY)} rules over {hosts} hosts: {judge * 1000:.0f} ms "
          f"({judge / hosts * 1000:.2f} ms per host, {n} findings)")


if __name__ == "__main__":
    main()
