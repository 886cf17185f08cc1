# envcheck probe, part port: a TCP port free on this node now (MASTER_PORT when the user names none)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

from base import section


@section("port")
def collect_port(facts=None):
    import socket  # only the sections that ask pay for it
    s = socket.socket()
    try:
        s.bind(("", 0))
        return {"free": s.getsockname()[1]}
    finally:
        s.close()
