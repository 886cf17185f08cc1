"""envcheck rank preflight: the node side of the rank harness's reachability check, shared by
`envcheck nccl-test` and `envcheck launch`; stdlib only, Python >= 3.6, fed on stdin (nothing is
left on the node). One JSON object on stdout per run.

Modes (first argument):
  listen [--addr A] --port P --expect N --timeout T
        on the master host: accept N connections on MASTER_PORT ({"ok", "peers"}, or
        {"ok": false, "error"} when the port cannot be bound)
  connect --addr A --port P --timeout T
        on every node: can it reach MASTER_ADDR:PORT over TCP? ({"ok"[, "error"]})
  check [--chdir D] [--script S]
        whether torch imports under this interpreter (its version, its CUDA build), and
        whether the working directory and the script are there (launch)

What a node has (GPUs, interfaces, a free port, CPUs, memory) is the node probe's
(envcheck/node/probe/), like every other fact.
"""
import argparse
import json
import os
import socket
import sys
import time


def out(record):
    try:
        os.write(1, (json.dumps(record, sort_keys=True) + "\n").encode())
    except OSError:   # the controller is gone
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


def main(argv=None):
    ap = argparse.ArgumentParser(description="envcheck rank preflight")
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
    p = sub.add_parser("check")
    p.add_argument("--chdir", default="")
    p.add_argument("--script", default="")
    args = ap.parse_args(argv)
    modes = {"listen": listen, "connect": connect, "check": check}
    if args.mode not in modes:
        ap.error("a mode is required: " + ", ".join(sorted(modes)))
    return modes[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
