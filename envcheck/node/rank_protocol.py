"""envcheck rank protocol: the records a node launcher writes on its stdout, one JSON object a
line; stdlib only, Python >= 3.6. Shipped beside the launchers in the run's own directory and
imported by both (allreduce_launcher.py, script_launcher.py); the controller parses every
record once, into the typed records of envcheck/ranks/records.py (a test holds the two to the
same types and fields).

The launcher's records, the same for every workload:
  start     {rank, local_rank, pid, time}           a rank started
  out       {rank, line}                            one line of a rank's stdout+stderr
  exit      {rank, local_rank, code, time, stopped} a rank ended (code < 0: killed by that signal;
                                                    stopped: because the run was being stopped);
                                                    time is when the launcher saw it end
  launcher  {status, why, host, running}            the launcher itself: status "stopped" (a
                                                    signal), "deadline" (running: the ranks still
                                                    running then), "error" (a rank could not
                                                    start), "done" (its last record)
  beat      {}                                      a heartbeat (a blank line serves as well)

The all-reduce worker's records (allreduce_worker.py writes them itself: it also runs alone,
started by srun, with no launcher and no run directory beside it):
  rank      {rank, local_rank, world_size, host, device, pid, torch, backend}  joined the group
  sweep     {world_size, backend, dtype, warmup, iters, torch}                 the sweep begins
  result    {bytes, count, dtype, time_us, world, wrong}                       one size, rank 0
  timeout   {rank, phase, bytes, seconds, host}     a bounded step did not finish: it gives up
  error     {rank, phase, message, bytes, host}     a step raised (phase "setup": never started)
  done      {world_size}
  pair      {round, attempt, group, ranks, bytes, time_us, first_bytes, first_us, lat_us, iters,
             stopped, wrong}                        a node pair's figures (allreduce_pairs.py)
"""
import json
import os
import threading

LAUNCHER_RECORDS = {
    "start": ("rank", "local_rank", "pid", "time"),
    "out": ("rank", "line"),
    "exit": ("rank", "local_rank", "code", "time", "stopped"),
    "launcher": ("status", "why", "host", "running"),
    "beat": (),
}
WORKER_RECORDS = {
    "rank": ("rank", "local_rank", "world_size", "host", "device", "pid", "torch", "backend"),
    "sweep": ("world_size", "backend", "dtype", "warmup", "iters", "torch"),
    "result": ("bytes", "count", "dtype", "time_us", "world", "wrong"),
    "timeout": ("rank", "phase", "bytes", "seconds", "host"),
    "error": ("rank", "phase", "message", "bytes", "host"),
    "done": ("world_size",),
    "pair": ("round", "attempt", "group", "ranks", "bytes", "time_us", "first_bytes", "first_us",
             "lat_us", "iters", "stopped", "wrong"),
}
LAUNCHER_STATUS = ("stopped", "deadline", "error", "done")

_lock = threading.Lock()


def write(kind, **fields):
    """One record on stdout, whole (a rank's output pump and the supervisor write concurrently);
    False when the reader, the controller, is gone (EPIPE): the caller's cleanup must still run."""
    rec = dict(fields, type=kind)
    data = (json.dumps(rec, sort_keys=True) + "\n").encode()
    with _lock:
        try:
            while data:
                data = data[os.write(1, data):]
            return True
        except OSError:
            return False


def started(rank, local_rank, pid, when):
    return write("start", rank=rank, local_rank=local_rank, pid=pid, time=when)


def output(rank, line):
    return write("out", rank=rank, line=line)


def exited(rank, local_rank, code, when, stopped):
    return write("exit", rank=rank, local_rank=local_rank, code=code, time=when,
                 stopped=bool(stopped))


def launcher(status, why=None, host=None, running=None):
    fields = {"status": status}
    for k, v in (("why", why), ("host", host), ("running", running)):
        if v is not None:
            fields[k] = v
    return write("launcher", **fields)


def beat():
    return write("beat")
