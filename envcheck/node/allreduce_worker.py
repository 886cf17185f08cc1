"""envcheck all-reduce worker: one rank of a bandwidth and correctness sweep, like nccl-tests'
all_reduce_perf, through torch.distributed.

Runs on the nodes: stdlib + torch only, Python >= 3.6, torch APIs that exist since torch 1.1.
Started by allreduce_launcher.py (or by hand) with MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK and
WORLD_SIZE in the environment; rendezvous is env://.

stdout: JSON lines (rank 0 the results; every rank its "rank" record and any failure record),
the records rank_protocol.py lists (written here: under srun the worker runs alone).
stderr: logs. Exit: 0 done, 1 setup error, 3 a collective failed or timed out, 4 orphaned.
Test-only: ENVCHECK_TEST_PERTURB_RANK=N makes rank N contribute one wrong element to the check.
--pairs SPEC: after the sweep (or instead of it, --no-sweep), rounds of concurrent node pairs
(allreduce_pairs.py, shipped beside this file).
"""
import argparse
import datetime
import json
import os
import socket
import sys
import threading
import time

EXIT_SETUP, EXIT_LOST, EXIT_ORPHAN = 1, 3, 4
UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
ELEM_SIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int32": 4}


def emit(record):
    # one os.write per line: ranks share the launcher's stdout pipe, and a single write of less
    # than PIPE_BUF bytes is never interleaved with another process's
    os.write(1, (json.dumps(record, sort_keys=True) + "\n").encode())


def log(msg):
    sys.stderr.write("[allreduce rank %s] %s\n" % (os.environ.get("RANK", "?"), msg))
    sys.stderr.flush()


def parse_size(text):
    text = text.strip().upper().rstrip("B").rstrip("I")
    unit = text[-1] if text and text[-1] in UNITS else ""
    return int(text[:len(text) - len(unit)]) * UNITS[unit]


class Watchdog(object):
    """Bounds every blocking step: gloo and NCCL can wait forever on a dead peer, and the store's
    own timeout was not configurable in old torch. On expiry: a "timeout" record, then _exit(3).
    Also exits when the launcher that started us is gone, so no rank outlives its launcher."""

    def __init__(self, rank):
        self.rank = rank
        self.lock = threading.Lock()
        self.deadline = None
        self.phase = None
        self.nbytes = None
        self.seconds = None
        self.ppid = os.getppid()
        t = threading.Thread(target=self._watch)
        t.daemon = True
        t.start()

    def arm(self, phase, seconds, nbytes=None):
        with self.lock:
            self.phase, self.seconds, self.nbytes = phase, seconds, nbytes
            self.deadline = time.monotonic() + seconds

    def disarm(self):
        with self.lock:
            self.deadline = None

    def _watch(self):
        while True:
            time.sleep(0.2)
            if os.getppid() != self.ppid:
                log("launcher (pid %d) is gone; exiting" % self.ppid)
                os._exit(EXIT_ORPHAN)
            with self.lock:
                expired = self.deadline is not None and time.monotonic() > self.deadline
                rec = {"type": "timeout", "rank": self.rank, "phase": self.phase,
                       "bytes": self.nbytes, "seconds": self.seconds,
                       "host": socket.gethostname()}
            if expired:
                emit(rec)
                log("%s did not finish in %s s; exiting" % (self.phase, self.seconds))
                os._exit(EXIT_LOST)


def get_dtype(torch, name):
    names = {"float32": "float32", "float": "float32", "float16": "float16", "half": "float16",
             "bfloat16": "bfloat16", "float64": "float64", "double": "float64",
             "int32": "int32", "int": "int32"}
    dt = getattr(torch, names.get(name, "?"), None)
    if dt is None:
        raise ValueError("dtype %s is not available in torch %s" % (name, torch.__version__))
    return dt


def pattern(torch, idx, rank, nranks):
    """Rank r contributes (i + r) % 3 at element i: small integers, so the sum over up to 128
    ranks is exact even in bfloat16. Returns (contribution, expected sum)."""
    mine = (idx + rank) % 3
    full, rest = divmod(nranks, 3)
    expected = torch.zeros_like(idx) + 3 * full   # each full cycle of 3 ranks adds 0+1+2
    for k in range(rest):
        expected = expected + (idx + k) % 3
    return mine, expected


class Harness(object):
    """What a workload needs from the worker: every collective bounded by the watchdog, the
    timed loop, the check pattern, the records (used by the sweep and by allreduce_pairs.py)."""

    def __init__(self, torch, dist, dog, device, dtype, elem, rank, timeout):
        self.torch, self.dist, self.dog, self.device = torch, dist, dog, device
        self.dtype, self.elem, self.rank, self.timeout = dtype, elem, rank, timeout
        # ReduceOp since torch 1.0; reduce_op is the older, later removed spelling
        self.ops = getattr(dist, "ReduceOp", None) or getattr(dist, "reduce_op")
        perturb = os.environ.get("ENVCHECK_TEST_PERTURB_RANK")
        self.perturb = perturb is not None and int(perturb) == rank
        self.emit, self.pattern = emit, pattern

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def collective(self, phase, tensor, op, nbytes, group=None):
        self.dog.arm(phase, self.timeout, nbytes)
        if group is None:
            self.dist.all_reduce(tensor, op=op)
        else:
            self.dist.all_reduce(tensor, op=op, group=group)
        self.sync()
        self.dog.disarm()

    def time_loop(self, buf, iters, nbytes, group=None):
        """This rank's seconds per all-reduce over `iters` back-to-back ones (nothing between)."""
        kw = {} if group is None else {"group": group}
        self.dog.arm("timed loop", self.timeout * max(iters, 1), nbytes)
        self.sync()
        t0 = time.perf_counter()
        for _ in range(iters):
            self.dist.all_reduce(buf, op=self.ops.SUM, **kw)
        self.sync()
        mine = (time.perf_counter() - t0) / max(iters, 1)
        self.dog.disarm()
        return mine


def fit_budget(h, buf, nbytes, args):
    """The first warmup all-reduce, timed and agreed on (the slowest rank's time: every rank
    must run the same count): how many more warmups and timed iterations fit --budget. Through a
    link 20x slower than it should be, 64M all-reduces cost seconds each."""
    t = h.time_loop(buf, 1, nbytes)
    m = h.torch.tensor([t], dtype=h.torch.float64, device=h.device)
    h.collective("time", m, h.ops.MAX, nbytes)
    t = max(float(m.item()), 1e-9)
    return (max(0, min(args.warmup - 1, int(args.budget / 4 / t))),
            max(1, min(args.iters, int(args.budget / t))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="gloo", choices=["nccl", "gloo"])
    ap.add_argument("--min-bytes", default="8")
    ap.add_argument("--max-bytes", default="256M")
    ap.add_argument("--factor", type=int, default=2)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per collective")
    ap.add_argument("--rendezvous-timeout", type=float, default=60.0)
    ap.add_argument("--run-id", default="", help="a marker, for finding this run's processes")
    ap.add_argument("--pairs", default=None,
                    help="a pair-rounds spec (JSON file, see allreduce_pairs.py) to run after the sweep")
    ap.add_argument("--no-sweep", action="store_true", help="only the pair rounds")
    ap.add_argument("--budget", type=float, default=0.0,
                    help="seconds of timed loop per size: fewer iterations where one takes long "
                         "(the first warmup, timed, decides; 0: exactly --warmup and --iters)")
    args = ap.parse_args(argv)

    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dog = Watchdog(rank)
    try:
        import torch
        import torch.distributed as dist
        dtype = get_dtype(torch, args.dtype)
        elem = ELEM_SIZE[str(dtype).split(".")[-1]]   # no element_size(): age unclear
        device = torch.device("cpu")
        devname = "cpu"
        if args.backend == "nccl":
            if not torch.cuda.is_available():
                raise RuntimeError("backend nccl but torch.cuda.is_available() is False "
                                   "(torch %s, CUDA build %s): use --backend gloo, or a CUDA "
                                   "build of torch that this driver supports"
                                   % (torch.__version__, torch.version.cuda))
            if local_rank >= torch.cuda.device_count():
                raise RuntimeError("local rank %d but only %d GPU(s) visible"
                                   % (local_rank, torch.cuda.device_count()))
            torch.cuda.set_device(local_rank)   # one GPU per rank: never two ranks on a GPU
            device = torch.device("cuda", local_rank)
            devname = "cuda:%d %s" % (local_rank, torch.cuda.get_device_name(local_rank))
    except Exception as e:  # noqa: BLE001 - reported as a record, the launcher names the rank
        emit({"type": "error", "rank": rank, "phase": "setup", "message": str(e)})
        log("setup failed: %s" % e)
        return EXIT_SETUP

    dog.arm("rendezvous", args.rendezvous_timeout)
    try:
        kw = {"backend": args.backend, "init_method": "env://", "world_size": world,
              "rank": rank}
        try:
            dist.init_process_group(timeout=datetime.timedelta(seconds=args.timeout), **kw)
        except TypeError:   # a torch without the timeout kwarg: the watchdog still bounds it
            dist.init_process_group(**kw)
    except Exception as e:  # noqa: BLE001
        emit({"type": "error", "rank": rank, "phase": "rendezvous", "message": str(e)})
        log("rendezvous failed: %s" % e)
        return EXIT_LOST
    dog.disarm()
    emit({"type": "rank", "rank": rank, "local_rank": local_rank, "world_size": world,
          "host": socket.gethostname(), "device": devname, "pid": os.getpid(),
          "torch": torch.__version__, "backend": args.backend})
    log("joined: rank %d/%d on %s (%s)" % (rank, world, socket.gethostname(), devname))

    h = Harness(torch, dist, dog, device, dtype, elem, rank, args.timeout)
    try:
        lo, hi = parse_size(args.min_bytes), parse_size(args.max_bytes)
        size = hi + 1 if args.no_sweep else max(lo, 1)
        if rank == 0:
            emit({"type": "sweep", "world_size": world, "backend": args.backend,
                  "dtype": args.dtype, "warmup": args.warmup, "iters": args.iters,
                  "torch": torch.__version__})
        collective, ops, perturb = h.collective, h.ops, h.perturb
        while size <= hi:
            count = size // elem
            size *= args.factor
            if count == 0:
                continue
            nbytes = count * elem
            buf = torch.zeros(count, dtype=dtype, device=device)  # zeros: sums never overflow
            warmup, iters = fit_budget(h, buf, nbytes, args) if args.budget else (args.warmup, args.iters)
            for _ in range(warmup):
                collective("warmup", buf, ops.SUM, nbytes)
            mine = h.time_loop(buf, iters, nbytes)
            # the slowest rank's time is the operation's time
            t = torch.tensor([mine], dtype=torch.float64, device=device)
            collective("time", t, ops.MAX, nbytes)
            seconds = float(t.item())

            idx = torch.arange(count, device=device, dtype=torch.int32)
            contrib, expected = pattern(torch, idx, rank, world)
            data = contrib.to(dtype)
            if perturb:
                data[count // 2] += 1
            collective("check", data, ops.SUM, nbytes)
            bad = torch.tensor([int((data != expected.to(dtype)).sum().item())],
                               dtype=torch.float64, device=device)
            collective("check", bad, ops.SUM, nbytes)   # #wrong over all ranks
            del buf, data, idx, contrib, expected
            if rank == 0:
                # measurements only: algbw/busbw are derived once, by the controller
                # (envcheck/allreduce/bandwidth.py, nccl-tests' definitions)
                emit({"type": "result", "bytes": nbytes, "count": count, "dtype": args.dtype,
                      "time_us": seconds * 1e6, "world": world, "wrong": int(bad.item()),
                      "iters": iters})
        if args.pairs:
            # shipped beside us (allreduce_pairs.py); found under PYTHONSAFEPATH/-P too
            here = os.path.dirname(os.path.abspath(__file__))
            sys.path.insert(0, here)
            import allreduce_pairs
            allreduce_pairs.run_rounds(h, allreduce_pairs.load(os.path.join(here, args.pairs)))
        dog.arm("barrier", args.timeout)
        dist.barrier()
        dog.disarm()
    except Exception as e:  # noqa: BLE001 - gloo raises when a peer's connection closes
        emit({"type": "error", "rank": rank, "phase": dog.phase, "bytes": dog.nbytes,
              "message": str(e), "host": socket.gethostname()})
        log("collective failed: %s" % e)
        os._exit(EXIT_LOST)   # no destroy: it could block on the dead peer
    if rank == 0:
        emit({"type": "done", "world_size": world})
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001 - the result is already out
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
