"""envcheck all-reduce launcher: the node side of `envcheck nccl-test`, stdlib only, Python >= 3.6.

Mode (first argument), rank_protocol.py's records on stdout, the launcher's (start, exit,
launcher) and its ranks' own (what a node has is read by the node probe, envcheck/node/probe/;
whether it reaches the master, by rank_preflight.py: the rank harness's):
  launch --dir D --nproc N --rank-base B [--deadline S] -- WORKER ARGS
                                start N ranks of D/allreduce_worker.py as children and supervise
                                them: when one fails, when we are signalled, orphaned, our stdout
                                closes or the deadline passes, every child is killed, D removed.
                                The supervision is D/rank_supervisor.py's, shared with
                                script_launcher.py (envcheck launch).
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import time

# shipped beside us in the run directory; found under PYTHONSAFEPATH/-P too
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rank_protocol as rp  # noqa: E402
import rank_supervisor as rs  # noqa: E402


def launch(args):
    rs.lead_process_group(args.dir)
    stop = rs.catch_stop_signals()
    worker = os.path.join(args.dir, "allreduce_worker.py")
    wargs = [a for a in args.worker_args if a != "--"]
    ranks = []
    code = 0
    host = socket.gethostname()

    def poll():
        failed = rs.report_exits(ranks, False)
        if failed:
            # a dead peer makes the survivors' collectives fail moments later: report those
            # exits too, with their times, before stopping the rest, so the controller's rule
            # (envcheck/ranks/failure.py) can tell the rank that went first from its victims
            time.sleep(0.3)
            failed += rs.report_exits(ranks, False)
            rc = sorted(failed, key=lambda r: 0 if r.proc.returncode < 0 else 1)[0].proc.returncode
            return rc if rc in (1, 3) else 3
        return 0 if all(r.reported for r in ranks) else None

    try:
        for local in range(args.nproc):
            rank = args.rank_base + local
            env = dict(os.environ)
            env["RANK"] = str(rank)
            env["LOCAL_RANK"] = str(local)
            logf = open(os.path.join(args.dir, "rank%d.log" % rank), "wb")
            p = subprocess.Popen([sys.executable, worker] + wargs, env=env, stdout=None,
                                 stderr=logf, stdin=subprocess.DEVNULL)
            ranks.append(rs.Rank(rank, local, p, log=logf))
            rp.started(rank, local, p.pid, time.time())
        code = rs.watch(stop, args.deadline, poll,
                        lambda why: rp.launcher("stopped", why=why, host=host),
                        lambda: rp.launcher("deadline", why="ran past %gs" % args.deadline, host=host),
                        rp.beat, 0.05)
    except OSError:
        code = 3
    finally:
        rs.stop_all([r.proc for r in ranks], 2.0)
        rs.report_exits(ranks, True)
        logs = rank_logs(ranks, host, args.log_lines)
        # remove the run directory before writing anything: with the controller gone, the
        # write fails (EPIPE) and nothing after it would run
        shutil.rmtree(args.dir, ignore_errors=True)
        try:
            sys.stderr.write(logs)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        rp.launcher("done", host=host)
    return code


def rank_logs(ranks, host, lines):
    """The last `lines` of every rank's log, each line prefixed with its host and rank."""
    text = []
    for r in ranks:
        r.log.close()
        try:
            with open(r.log.name, "rb") as f:
                tail = f.read().decode("utf-8", "replace").splitlines()[-lines:]
            text.extend("[%s rank %d] %s\n" % (host, r.rank, line) for line in tail)
        except OSError:
            pass
    return "".join(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck all-reduce launcher")
    sub = ap.add_subparsers(dest="mode")
    p = sub.add_parser("launch")
    p.add_argument("--dir", required=True)
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--rank-base", type=int, default=0)
    p.add_argument("--deadline", type=float, default=3600)
    p.add_argument("--log-lines", type=int, default=200)
    p.add_argument("--run-id", default="")
    p.add_argument("worker_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    modes = {"launch": launch}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
