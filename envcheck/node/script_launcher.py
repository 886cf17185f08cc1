"""envcheck script launcher: the node side of `envcheck launch`, stdlib only, Python >= 3.6.

Starts this node's ranks of the user's own training script and supervises them, the way
torch.distributed.launch did, minus its hangs and strays (the supervision itself is
rank_supervisor.py's, shipped beside this file and shared with allreduce_launcher.py). The
preflight (what a node has: the probe's; the master's reachability: rank_preflight.py's) is the
rank harness's; this file only adds what a user's script needs.

Modes (first argument), JSON lines on stdout:
  check [--chdir D] [--script S]
        the node interpreter's version, whether torch imports (and its version, CUDA build), the
        working directory and the script: one object
  launch --dir D --nproc N --rank-base B --local-world-size N --deadline S --grace G
         [--chdir D] [--local-rank-arg] [--run-id ID] -- SCRIPT [ARGS...]
        N ranks of SCRIPT under this interpreter, with RANK, LOCAL_RANK, LOCAL_WORLD_SIZE and
        GROUP_RANK set (MASTER_ADDR, MASTER_PORT, WORLD_SIZE come from the environment).
        Records: {"type": "start"|"out"|"exit"|"launcher", ...}; "out" carries one line of a
        rank's stdout+stderr. When a rank exits non-zero, when we are signalled, orphaned, our
        stdout (the SSH channel) closes or the deadline passes, every rank still running gets
        SIGTERM, then after --grace seconds SIGKILL, and so does anything else left in our
        process group (a DataLoader worker); then D is removed. At the deadline every rank first
        dumps its Python stacks (SIGUSR1 -> faulthandler), so a hung rank can be named.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

# Every rank runs the user's script through this: Python stacks on SIGUSR1 (faulthandler, in
# the stdlib since 3.3), sys.argv and sys.path[0] as `python SCRIPT ARGS` would have them.
RANK_BOOT = ("import faulthandler,os,runpy,signal,sys\n"
             "faulthandler.register(signal.SIGUSR1,all_threads=True)\n"
             "s=sys.argv[1];sys.argv=sys.argv[1:]\n"
             "sys.path[0]=os.path.dirname(os.path.abspath(s))\n"
             "runpy.run_path(s,run_name='__main__')\n")
LINE_MAX = 16384          # a longer line (a progress bar without newlines) is cut into pieces
_write_lock = threading.Lock()


def out(record):
    """One JSON line on stdout; False when the reader (the controller) is gone."""
    data = (json.dumps(record, sort_keys=True) + "\n").encode()
    with _write_lock:
        try:
            while data:
                data = data[os.write(1, data):]
            return True
        except OSError:
            return False


def check(args):
    doc = {"python": sys.version.split()[0], "executable": sys.executable}
    try:
        import torch
        doc["torch"] = torch.__version__
        doc["torch_cuda"] = getattr(torch.version, "cuda", None)
    except Exception as e:  # any import failure is the answer, not a crash
        doc["torch"] = None
        doc["torch_error"] = "%s: %s" % (type(e).__name__, e)
    if args.chdir:
        doc["chdir_ok"] = os.path.isdir(args.chdir)
    if args.script:
        path = os.path.join(args.chdir or os.getcwd(), args.script)
        doc["script_ok"] = os.path.isfile(path)
    out(doc)
    return 0


class Rank(object):
    def __init__(self, rank, local, proc):
        self.rank, self.local, self.proc = rank, local, proc
        self.reader = None
        self.reported = False


def pump(rank, pipe):
    """Forward one rank's output line by line; the rank blocks when we do, never loses lines."""
    while True:
        line = pipe.readline(LINE_MAX)
        if not line:
            break
        out({"type": "out", "rank": rank, "line": line.decode("utf-8", "replace").rstrip("\n")})
    pipe.close()


def start_ranks(args, script_args):
    ranks = []
    for local in range(args.nproc):
        rank = args.rank_base + local
        env = dict(os.environ)
        env.update({"RANK": str(rank), "LOCAL_RANK": str(local),
                    "LOCAL_WORLD_SIZE": str(args.local_world_size),
                    "GROUP_RANK": str(args.node_rank), "PYTHONUNBUFFERED": "1"})
        extra = ["--local_rank=%d" % local] if args.local_rank_arg else []
        # where torch.distributed.launch put it: first, before the script's own arguments
        argv = [sys.executable, "-u", "-c", "#%s\n%s" % (args.run_id, RANK_BOOT),
                script_args[0]] + extra + script_args[1:]
        p = subprocess.Popen(argv, env=env, cwd=args.chdir or None, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        r = Rank(rank, local, p)
        r.reader = threading.Thread(target=pump, args=(rank, p.stdout))
        r.reader.daemon = True
        r.reader.start()
        ranks.append(r)
        out({"type": "start", "rank": rank, "local_rank": local, "pid": p.pid,
             "time": time.time()})
    return ranks


def report_exits(ranks, stopping):
    """An "exit" record for every rank that ended since the last call (after its output). The
    time is when we saw it end: across ranks it says which one failed first."""
    ended = [(r, time.time()) for r in ranks if not r.reported and r.proc.poll() is not None]
    failed = []
    for r, when in ended:
        r.reader.join(2)
        r.reported = True
        out({"type": "exit", "rank": r.rank, "code": r.proc.returncode, "time": when,
             "stopped": bool(stopping)})
        if r.proc.returncode != 0:
            failed.append(r)
    return failed


def dump_stacks(ranks):
    """Ask every running rank for its Python stacks (RANK_BOOT's faulthandler), let them flow."""
    live = [r for r in ranks if r.proc.poll() is None]
    for r in live:
        try:
            r.proc.send_signal(signal.SIGUSR1)
        except OSError:
            pass
    time.sleep(1.0 if live else 0)
    return [r.rank for r in live]


def supervise(rs, args, ranks):
    """Wait for the ranks; the first reason to stop wins. Returns our exit code."""
    stop = rs.catch_stop_signals()

    def poll():
        if report_exits(ranks, False):
            return 1
        return 0 if all(r.reported for r in ranks) else None

    def on_deadline():
        running = dump_stacks(ranks)
        out({"type": "launcher", "status": "deadline", "running": running,
             "why": "ran past %gs" % args.deadline})

    # the heartbeat: with the controller's connection gone it fails (EPIPE), and we stop
    return rs.watch(stop, args.deadline, poll,
                    lambda why: out({"type": "launcher", "status": "stopped", "why": why}),
                    on_deadline, lambda: out({"type": "beat"}), 0.02)


def launch(args):
    sys.path.insert(0, args.dir)   # shipped beside us; found under PYTHONSAFEPATH/-P too
    import rank_supervisor as rs
    rs.lead_process_group(args.dir)
    script_args = [a for a in args.script_args]
    if script_args and script_args[0] == "--":
        script_args = script_args[1:]
    ranks = []
    code = 3
    try:
        ranks = start_ranks(args, script_args)
        code = supervise(rs, args, ranks)
    except OSError as e:
        out({"type": "launcher", "status": "error", "why": "cannot start a rank: %s" % e})
    finally:
        rs.stop_all([r.proc for r in ranks], args.grace, kill_group=True)
        report_exits(ranks, True)
        # before anything else that writes: with the controller gone a write fails (EPIPE)
        shutil.rmtree(args.dir, ignore_errors=True)
        out({"type": "launcher", "status": "done", "host": socket.gethostname()})
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck script launcher")
    sub = ap.add_subparsers(dest="mode")
    p = sub.add_parser("check")
    p.add_argument("--chdir", default="")
    p.add_argument("--script", default="")
    p = sub.add_parser("launch")
    p.add_argument("--dir", required=True)
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--rank-base", type=int, default=0)
    p.add_argument("--node-rank", type=int, default=0)
    p.add_argument("--local-world-size", type=int, required=True)
    p.add_argument("--deadline", type=float, default=3600)
    p.add_argument("--grace", type=float, default=5)
    p.add_argument("--chdir", default="")
    p.add_argument("--local-rank-arg", action="store_true")
    p.add_argument("--run-id", default="")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    modes = {"check": check, "launch": launch}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
