#!/usr/bin/env python3
"""connect + auth time to one simulated host (real sshd in a network namespace), with and without
TCP_NODELAY on our socket. Prints the medians; envcheck.hosts keeps the faster path (nodelay).

    sudo python3 bench/ssh_connect.py [ROUNDS] [--quick]    (--quick: 2 rounds, what CI runs)
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.hosts import SSHOptions, SSHRemote  # noqa: E402
from tests.cluster import sim  # noqa: E402


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--quick"]
    rounds = 2 if "--quick" in sys.argv[1:] else int(args[0]) if args else 30
    why = sim.available()
    if why:
        sys.exit(f"bench/ssh_connect: {why}")
    c = sim.make_cluster(1)
    try:
        c.trust_all_host_keys()
        rows = []
        for nodelay in (False, True, False, True):  # interleaved so drift hits both
            opts = SSHOptions(ssh_config=str(c.ssh_config), nodelay=nodelay)
            times = []
            for _ in range(rounds):
                r = SSHRemote(c[0].name, opts)
                t = time.perf_counter()
                err = r.connect()
                times.append(time.perf_counter() - t)
                assert err is None, err
                r.close()
            rows.append((nodelay, times))
        print(f"connect+auth to a simulated host, {rounds * 2} connections each")
        print(f"{'TCP_NODELAY':<12} {'median ms':>10} {'p90 ms':>8}")
        for flag in (False, True):
            ts = sorted(t for nd, times in rows if nd == flag for t in times)
            print(f"{'on' if flag else 'off':<12} {statistics.median(ts) * 1000:>10.1f} {ts[int(len(ts) * 0.9)] * 1000:>8.1f}")
    finally:
        c.close()


if __name__ == "__main__":
    main()
