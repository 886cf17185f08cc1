# envcheck probe, part port: a TCP port free on this node now (MASTER_PORT when the user names none)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

from base import section


@section("port")
def collect_port(facts=None):
    # only the sections that ask pay for it; the C module _socket, as part net does: socket.py
    # imports enum and selectors (~2 ms of a doctor's probe that asks only for this)
    try:
        import _socket as socket
    except ImportError:  # an interpreter without it
        import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", 0))
        return {"free": s.getsockname()[1]}
    finally:
        s.close()
