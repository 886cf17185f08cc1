# envcheck probe, part net: network interfaces and their IPv4 addresses
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import section
from run import read, run, which


def ip_argv():
    ip = which("ip", ["/sbin", "/usr/sbin", "/bin", "/usr/bin"])
    return [ip, "-o", "-4", "addr", "show"] if ip else None


@section("net", keys=("interfaces",), default=[], starts=ip_argv)
def collect_interfaces(facts=None):
    names = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    argv = ip_argv()
    res = run(argv) if argv else None
    addrs = parse_ip_addr(res[1]) if res and res[0] == 0 else ipv4_by_ioctl(names)
    out = []
    for name in names + [n for n in addrs if n not in names]:
        state = (read("/sys/class/net/%s/operstate" % name) or "").strip() or None
        out.append({"name": name, "addrs": addrs.get(name, []), "state": state, "speed": link_speed(name)})
    return out


def link_speed(name):
    """The rate the kernel reports for the interface, Mb/s (sysfs `speed`: what NCCL/gloo over
    this interface can at most reach); None when unknown (-1 or EINVAL: no carrier, or a device
    that does not say)."""
    try:
        speed = int((read("/sys/class/net/%s/speed" % name) or "").strip())
    except ValueError:
        return None
    return speed if speed > 0 else None


def ipv4_by_ioctl(names):
    """No `ip` binary: ask the kernel for each interface's primary IPv4 address."""
    import fcntl
    import socket
    import struct
    out = {}
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for name in names:
            req = struct.pack("256s", name[:15].encode())
            try:
                addr = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24])   # SIOCGIFADDR
                mask = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x891b, req)[20:24])   # SIOCGIFNETMASK
            except OSError:
                continue
            bits = sum(bin(int(x)).count("1") for x in mask.split("."))
            out[name] = ["%s/%d" % (addr, bits)]
    finally:
        s.close()
    return out


def parse_ip_addr(text):
    """`ip -o -4 addr` -> {"eth0": ["10.0.0.1/24"]} in the order ip prints them."""
    out = {}
    for line in (text or "").splitlines():
        m = re.match(r"^\d+:\s+(\S+?)(?:@\S+)?\s+inet\s+(\d+\.\d+\.\d+\.\d+/\d+)", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out
