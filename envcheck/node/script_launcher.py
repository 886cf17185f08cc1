"""envcheck script launcher: the node side of `envcheck launch`, stdlib only, Python >= 3.6.

Starts this node's ranks of the user's own training script and supervises them, the way
torch.distributed.launch did, minus its hangs and strays (the supervision itself is
rank_supervisor.py's, shipped beside this file and shared with allreduce_launcher.py). The
preflight (what a node has: the probe's; the master's reachability: rank_preflight.py's) is the
rank harness's; this file only adds what a user's script needs.

Mode (first argument), rank_protocol.py's records on stdout (whether torch imports and the
script is there is checked before, by rank_preflight.py's `check`):
  launch --dir D --nproc N --rank-base B --local-world-size N --deadline S --grace G
         [--chdir D] [--local-rank-arg] [--run-id ID] -- SCRIPT [ARGS...]
        N ranks of SCRIPT under this interpreter, with RANK, LOCAL_RANK, LOCAL_WORLD_SIZE and
        GROUP_RANK set (MASTER_ADDR, MASTER_PORT, WORLD_SIZE come from the environment).
        Records: start, out (one line of a rank's stdout+stderr), exit, launcher. When a rank
        exits non-zero, when we are signalled, orphaned, our stdout (the SSH channel) closes or
        the deadline passes, every rank still running gets SIGTERM, then after --grace seconds
        SIGKILL, and so does anything else left in our process group (a DataLoader worker); then
        D is removed. At the deadline every rank first dumps its Python stacks (SIGUSR1 ->
        faulthandler), so a hung rank can be named.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

# shipped beside us in the run directory; found under PYTHONSAFEPATH/-P too
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rank_protocol as rp  # noqa: E402
import rank_supervisor as rs  # noqa: E402

# Every rank runs the user's script through this: Python stacks on SIGUSR1 (faulthandler, in
# the stdlib since 3.3), sys.argv and sys.path[0] as `python SCRIPT ARGS` would have them.
RANK_BOOT = ("import faulthandler,os,runpy,signal,sys\n"
             "faulthandler.register(signal.SIGUSR1,all_threads=True)\n"
             "s=sys.argv[1];sys.argv=sys.argv[1:]\n"
             "sys.path[0]=os.path.dirname(os.path.abspath(s))\n"
             "runpy.run_path(s,run_name='__main__')\n")
LINE_MAX = 16384          # a longer line (a progress bar without newlines) is cut into pieces


def pump(rank, pipe):
    """Forward one rank's output line by line; the rank blocks when we do, never loses lines."""
    while True:
        line = pipe.readline(LINE_MAX)
        if not line:
            break
        rp.output(rank, line.decode("utf-8", "replace").rstrip("\n"))
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
        reader = threading.Thread(target=pump, args=(rank, p.stdout))
        reader.daemon = True
        reader.start()
        ranks.append(rs.Rank(rank, local, p, reader))
        rp.started(rank, local, p.pid, time.time())
    return ranks


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


def supervise(args, ranks, host):
    """Wait for the ranks; the first reason to stop wins. Returns our exit code."""
    stop = rs.catch_stop_signals()

    def poll():
        if rs.report_exits(ranks, False):
            return 1
        return 0 if all(r.reported for r in ranks) else None

    def on_deadline():
        running = dump_stacks(ranks)
        rp.launcher("deadline", why="ran past %gs" % args.deadline, host=host, running=running)

    # the heartbeat: with the controller's connection gone it fails (EPIPE), and we stop
    return rs.watch(stop, args.deadline, poll,
                    lambda why: rp.launcher("stopped", why=why, host=host), on_deadline, rp.beat, 0.02)


def launch(args):
    rs.lead_process_group(args.dir)
    host = socket.gethostname()
    script_args = [a for a in args.script_args]
    if script_args and script_args[0] == "--":
        script_args = script_args[1:]
    ranks = []
    code = 3
    try:
        ranks = start_ranks(args, script_args)
        code = supervise(args, ranks, host)
    except OSError as e:
        rp.launcher("error", why="cannot start a rank: %s" % e, host=host)
    finally:
        rs.stop_all([r.proc for r in ranks], args.grace, kill_group=True)
        rs.report_exits(ranks, True)
        # before anything else that writes: with the controller gone a write fails (EPIPE)
        shutil.rmtree(args.dir, ignore_errors=True)
        rp.launcher("done", host=host)
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck script launcher")
    sub = ap.add_subparsers(dest="mode")
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
    modes = {"launch": launch}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
