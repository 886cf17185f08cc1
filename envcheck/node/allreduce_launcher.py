"""envcheck all-reduce launcher: the node side of `envcheck nccl-test`, stdlib only, Python >= 3.6.

Modes (first argument), each printing JSON on stdout:
  facts                         interfaces (ip -o -4 addr), GPU count (nvidia-smi -L), hostname,
                                a free TCP port
  free-port --addr A            a TCP port free on this host
  listen --addr A --port P --expect N --timeout T
                                the preflight listener on the master: accepts N connections
  connect --addr A --port P --timeout T
                                the preflight probe on every node: can it reach MASTER_ADDR:PORT?
  launch --dir D --nproc N --rank-base B [--deadline S] -- WORKER ARGS
                                start N ranks of D/allreduce_worker.py as children and supervise
                                them: when one fails, when we are signalled, orphaned, our stdout
                                closes or the deadline passes, every child is killed, D removed.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time


def out(record):
    try:
        os.write(1, (json.dumps(record, sort_keys=True) + "\n").encode())
    except OSError:   # the controller is gone: the caller's cleanup must still run
        pass


def facts(_args):
    ifaces = {}
    try:
        text = subprocess.check_output(["ip", "-o", "-4", "addr", "show"],
                                       stderr=subprocess.DEVNULL, timeout=10).decode()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] == "inet":
                ifaces.setdefault(parts[1].split("@")[0], []).append(parts[3])
        ifaces_err = None
    except (OSError, subprocess.SubprocessError) as e:
        ifaces_err = "cannot list interfaces with `ip -o -4 addr`: %s" % e
    gpus, gpu_err = None, None
    try:
        text = subprocess.check_output(["nvidia-smi", "-L"], stderr=subprocess.STDOUT,
                                       timeout=20).decode()
        gpus = sum(1 for line in text.splitlines() if line.startswith("GPU "))
    except OSError:
        gpus = 0     # no nvidia-smi: no GPUs to use
    except (subprocess.SubprocessError, ValueError) as e:
        gpus, gpu_err = 0, "nvidia-smi -L failed: %s" % e
    port = None
    s = socket.socket()
    try:
        s.bind(("", 0))   # a port free now, for MASTER_PORT when the user names none
        port = s.getsockname()[1]
    except OSError:
        pass
    finally:
        s.close()
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    mem = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    out({"hostname": socket.gethostname(), "gpus": gpus, "gpu_error": gpu_err, "free_port": port,
         "cpus": os.cpu_count(), "mem_available": mem,
         "interfaces": [{"name": k, "addrs": v} for k, v in sorted(ifaces.items())],
         "interfaces_error": ifaces_err, "python": sys.version.split()[0]})
    return 0


def free_port(args):
    s = socket.socket()
    try:
        s.bind((args.addr, 0))
        out({"ok": True, "port": s.getsockname()[1]})
    except OSError as e:
        out({"ok": False, "error": "cannot bind %s: %s" % (args.addr, e.strerror or e)})
        return 1
    finally:
        s.close()
    return 0


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


class Stop(Exception):
    pass


def launch(args):
    try:
        os.setsid()   # one process group for us and our ranks: one kill reaches them all
    except OSError:
        pass          # already a group leader
    with open(os.path.join(args.dir, "launcher.pid"), "w") as f:
        f.write(str(os.getpid()))
    stop = []

    def on_signal(signum, _frame):
        stop.append("signal %d" % signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    worker = os.path.join(args.dir, "allreduce_worker.py")
    wargs = [a for a in args.worker_args if a != "--"]
    children = []
    ppid = os.getppid()
    end = time.monotonic() + args.deadline
    beat = time.monotonic()
    code = 0
    host = socket.gethostname()
    try:
        for local in range(args.nproc):
            env = dict(os.environ)
            env["RANK"] = str(args.rank_base + local)
            env["LOCAL_RANK"] = str(local)
            logf = open(os.path.join(args.dir, "rank%d.log" % (args.rank_base + local)), "wb")
            p = subprocess.Popen([sys.executable, worker] + wargs, env=env, stdout=None,
                                 stderr=logf, stdin=subprocess.DEVNULL)
            children.append((args.rank_base + local, local, p, logf))
        while True:
            if stop:
                out({"type": "launcher", "host": host, "status": "stopped", "why": stop[0]})
                code = 3
                break
            if os.getppid() != ppid:
                code = 3
                break
            if time.monotonic() > end:
                out({"type": "launcher", "host": host, "status": "deadline",
                     "why": "ran past %gs" % args.deadline})
                code = 3
                break
            failed = [(r, lr, p.returncode) for r, lr, p, _ in children
                      if p.poll() is not None and p.returncode != 0]
            if failed:
                # a dead peer makes the survivors' collectives fail moments later, and one poll
                # may see both: look again shortly, then name a rank killed by a signal (kill -9,
                # the OOM killer) before the ranks whose collectives failed because of it
                time.sleep(0.3)
                failed = [(r, lr, p.returncode) for r, lr, p, _ in children
                          if p.poll() is not None and p.returncode != 0]
                failed.sort(key=lambda f: 0 if f[2] < 0 else 1)
                r, lr, rc = failed[0]
                out({"type": "rank_exit", "host": host, "rank": r, "local_rank": lr,
                     "code": rc})
                code = rc if rc in (1, 3) else 3
                break
            if all(p.poll() is not None for _, _, p, _ in children):
                break
            if time.monotonic() - beat > 2:
                # a blank line: if the controller's connection is gone the write fails (EPIPE)
                os.write(1, b"\n")
                beat = time.monotonic()
            time.sleep(0.05)
    except OSError:
        code = 3
    finally:
        for _, _, p, _ in children:
            if p.poll() is None:
                p.terminate()
        t = time.monotonic() + 2
        for _, _, p, _ in children:
            while p.poll() is None and time.monotonic() < t:
                time.sleep(0.02)
            if p.poll() is None:
                p.kill()
                p.wait()
        text = []
        for r, _, p, logf in children:
            logf.close()
            try:
                with open(logf.name, "rb") as f:
                    lines = f.read().decode("utf-8", "replace").splitlines()[-args.log_lines:]
                text.extend("[%s rank %d] %s\n" % (host, r, line) for line in lines)
            except OSError:
                pass
        # remove the run directory before writing anything: with the controller gone, the
        # write fails (EPIPE) and nothing after it would run
        shutil.rmtree(args.dir, ignore_errors=True)
        try:
            sys.stderr.write("".join(text))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck all-reduce launcher")
    sub = ap.add_subparsers(dest="mode")
    sub.add_parser("facts")
    p = sub.add_parser("free-port")
    p.add_argument("--addr", default="")
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
    modes = {"facts": facts, "free-port": free_port, "listen": listen, "connect": connect,
             "launch": launch}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
