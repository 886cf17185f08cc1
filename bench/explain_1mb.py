"""Time to answer `envcheck explain` for a 1 MB log (target: well under a second). Two logs:
a training log (progress and NCCL INFO lines) with the failure at its end, and a worst case made
only of the corpus's error texts, so nearly every wording's anchor occurs and its regex runs.
Prints the library time (cold: the catalogue and the signature table loaded and compiled; warm),
a one-line text's whole command, and the whole
command's time (`envcheck explain - < log`, interpreter start included), wall and CPU (the CPU
figure is the one to compare on a loaded machine). Asserts nothing.

    python bench/explain_1mb.py [SIZE_MB] [--quick]    (--quick: a 0.05 MB log, what CI runs)
"""
from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "errors"
TAIL = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
        "    model = DDP(model, device_ids=[local_rank])\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version 2.19.3\n")


def training_log(size: int) -> str:
    lines, n, i = [], 0, 0
    while n < size:
        line = (f"node{i % 16:02d}:{4000 + i % 8}:{4100 + i % 8} [{i % 8}] NCCL INFO Channel {i % 32:02d}/0 : "
                f"{i % 8}[{i % 8}] -> {(i + 1) % 8}[{(i + 1) % 8}] via P2P/IPC\n" if i % 3 == 0 else
                f"Epoch {i // 500}: {i % 500}/500 [{i // 60:02d}:{i % 60:02d}<00:00, 3.1it/s, loss={1 / (i + 1):.4f}]\n")
        lines.append(line)
        n += len(line)
        i += 1
    return "".join(lines) + TAIL


def corpus_log(size: int) -> str:
    texts = [item["text"] for f in sorted(CORPUS.glob("*.yaml")) for item in yaml.safe_load(f.read_text())]
    out, n = [], 0
    while n < size:
        for t in texts:
            out.append(t)
            n += len(t)
    return "".join(out)[:size]


def timed(fn, *a):
    """(wall s, CPU s, result): on a shared machine the CPU time is the figure that travels."""
    t, c = time.perf_counter(), time.process_time()
    r = fn(*a)
    return time.perf_counter() - t, time.process_time() - c, r


def child_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--quick"]
    size = 50_000 if "--quick" in sys.argv[1:] else int(float(args[0]) * 1_000_000) if args else 1_000_000
    from envcheck.explain import catalogue
    from envcheck.explain.match import explain
    logs = {"training log": training_log(size), "corpus only (worst case)": corpus_log(size)}
    cat, cat_cpu, _ = timed(catalogue.table)
    print(f"catalogue load+index (json, {catalogue.DATA.stat().st_size // 1024} KiB): "
          f"{cat * 1000:.0f} ms wall, {cat_cpu * 1000:.0f} ms CPU")
    cold, cold_cpu, _ = timed(explain, "warm-up: CUDA error: unknown error")
    print(f"signature table load+compile (first call): {cold * 1000:.0f} ms wall, {cold_cpu * 1000:.0f} ms CPU")
    t, c0 = time.perf_counter(), child_cpu()
    subprocess.run([sys.executable, "-m", "envcheck", "explain", "CUDA error: misaligned address"], capture_output=True)
    print(f"`envcheck explain \"CUDA error: misaligned address\"`: {(time.perf_counter() - t) * 1000:.0f} ms wall / "
          f"{(child_cpu() - c0) * 1000:.0f} ms CPU")
    for name, log in logs.items():
        warm, warm_cpu, found = timed(explain, log)
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as fh:
            fh.write(log)
        t, c0 = time.perf_counter(), child_cpu()
        with open(fh.name) as stdin:
            p = subprocess.run([sys.executable, "-m", "envcheck", "explain", "-"], stdin=stdin,
                               capture_output=True, text=True)
        wall, cpu = time.perf_counter() - t, child_cpu() - c0
        Path(fh.name).unlink()
        print(f"{name}: {len(log) / 1e6:.2f} MB, {len(found)} causes (first: {found[0].id}); "
              f"explain() {warm * 1000:.0f} ms wall / {warm_cpu * 1000:.0f} ms CPU; "
              f"`envcheck explain - < log` {wall * 1000:.0f} ms wall / {cpu * 1000:.0f} ms CPU (exit {p.returncode})")


if __name__ == "__main__":
    main()
