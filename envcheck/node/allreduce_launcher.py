"""envcheck all-reduce launcher: the node side of `envcheck nccl-test`, stdlib only, Python >= 3.6.

Modes (first argument), each printing JSON on stdout (what a node has, GPUs, interfaces, a
free port, is read by the node probe, envcheck/node/probe/, like every other fact):
  listen --addr A --port P --expect N --timeout T
                                the preflight listener on the master: accepts N connections
  connect --addr A --port P --timeout T
                                the preflight probe on every node: can it reach MASTER_ADDR:PORT?
  launch --dir D --nproc N --rank-base B [--deadline S] -- WORKER ARGS
                                start N ranks of D/allreduce_worker.py as children and supervise
                                them: when one fails, when we are signalled, orphaned, our stdout
                                closes or the deadline passes, every child is killed, D removed.
                                The supervision is D/rank_supervisor.py's, shared with
                                script_launcher.py (envcheck launch).
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time


def out(record):
    try:
        os.write(1, (json.dumps(record, sort_keys=True) + "\n").encode())
    except OSError:   # the controller is gone: the caller's cleanup must still run
        pass


def listen(args):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind((args.addr, args.port))
        s.listen(64)
    except OSError as e:
        out({"ok": False, "error": "cannot listen on %s:%d on the master host: %s"
             % (args.addr, args.port, e.strerror or e)})
        return 1
    peers = []
    end = time.monotonic() + args.timeout
    while len(peers) < args.expect and time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            conn, addr = s.accept()
        except socket.timeout:
            break
        # wait for the peer to close first, so TIME_WAIT stays on its side and the rendezvous
        # can bind this port again at once
        conn.settimeout(2)
        try:
            conn.recv(1)
        except OSError:
            pass
        conn.close()
        peers.append(addr[0])
    s.close()
    out({"ok": len(peers) >= args.expect, "peers": peers})
    return 0


def connect(args):
    end = time.monotonic() + args.timeout
    err = None
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        try:
            c = socket.create_connection((args.addr, args.port), timeout=max(0.1, left))
            c.close()
            out({"ok": True})
            return 0
        except socket.timeout:
            err = "timed out after %gs" % args.timeout
        except OSError as e:
            err = e.strerror or str(e)   # refused: the listener may not be up yet, try again
        time.sleep(0.1)
    out({"ok": False, "error": err or "timed out after %gs" % args.timeout})
    return 0


def launch(args):
    sys.path.insert(0, args.dir)   # shipped beside us; found under PYTHONSAFEPATH/-P too
    import rank_supervisor as rs
    rs.lead_process_group(args.dir)
    stop = rs.catch_stop_signals()
    worker = os.path.join(args.dir, "allreduce_worker.py")
    wargs = [a for a in args.worker_args if a != "--"]
    children = []
    code = 0
    host = socket.gethostname()

    def failed():
        return [(r, lr, p.returncode) for r, lr, p, _ in children if p.poll() is not None and p.returncode != 0]

    def poll():
        if failed():
            # a dead peer makes the survivors' collectives fail moments later, and one poll
            # may see both: look again shortly, then name a rank killed by a signal (kill -9,
            # the OOM killer) before the ranks whose collectives failed because of it
            time.sleep(0.3)
            r, lr, rc = sorted(failed(), key=lambda f: 0 if f[2] < 0 else 1)[0]
            out({"type": "rank_exit", "host": host, "rank": r, "local_rank": lr, "code": rc})
            return rc if rc in (1, 3) else 3
        return 0 if all(p.poll() is not None for _, _, p, _ in children) else None

    def beat():
        try:   # a blank line: if the controller's connection is gone the write fails (EPIPE)
            os.write(1, b"\n")
            return True
        except OSError:
            return False

    try:
        for local in range(args.nproc):
            env = dict(os.environ)
            env["RANK"] = str(args.rank_base + local)
            env["LOCAL_RANK"] = str(local)
            logf = open(os.path.join(args.dir, "rank%d.log" % (args.rank_base + local)), "wb")
            p = subprocess.Popen([sys.executable, worker] + wargs, env=env, stdout=None,
                                 stderr=logf, stdin=subprocess.DEVNULL)
            children.append((args.rank_base + local, local, p, logf))
        code = rs.watch(stop, args.deadline, poll,
                        lambda why: out({"type": "launcher", "host": host, "status": "stopped", "why": why}),
                        lambda: out({"type": "launcher", "host": host, "status": "deadline",
                                     "why": "ran past %gs" % args.deadline}),
                        beat, 0.05)
    except OSError:
        code = 3
    finally:
        rs.stop_all([p for _, _, p, _ in children], 2.0)
        logs = rank_logs(children, host, args.log_lines)
        # remove the run directory before writing anything: with the controller gone, the
        # write fails (EPIPE) and nothing after it would run
        shutil.rmtree(args.dir, ignore_errors=True)
        try:
            sys.stderr.write(logs)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    return code


def rank_logs(children, host, lines):
    """The last `lines` of every rank's log, each line prefixed with its host and rank."""
    text = []
    for r, _, p, logf in children:
        logf.close()
        try:
            with open(logf.name, "rb") as f:
                tail = f.read().decode("utf-8", "replace").splitlines()[-lines:]
            text.extend("[%s rank %d] %s\n" % (host, r, line) for line in tail)
        except OSError:
            pass
    return "".join(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck all-reduce launcher")
    sub = ap.add_subparsers(dest="mode")
    p = sub.add_parser("listen")
    p.add_argument("--addr", default="")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--expect", type=int, default=1)
    p.add_argument("--timeout", type=float, default=10)
    p = sub.add_parser("connect")
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--timeout", type=float, default=5)
    p = sub.add_parser("launch")
    p.add_argument("--dir", required=True)
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--rank-base", type=int, default=0)
    p.add_argument("--deadline", type=float, default=3600)
    p.add_argument("--log-lines", type=int, default=200)
    p.add_argument("--run-id", default="")
    p.add_argument("worker_args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    modes = {"listen": listen, "connect": connect, "launch": launch}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
