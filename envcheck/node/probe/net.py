# envcheck probe, part net: network interfaces and their IPv4 addresses
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import sys
from base import Settings, section
from run import read, run, which


def ip_argv():
    ip = which("ip", ["/sbin", "/usr/sbin", "/bin", "/usr/bin"])
    return [ip, "-o", "-4", "addr", "show"] if ip else None


@section("net", keys=("interfaces",), default=[])
def collect_interfaces(facts=None):
    names = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    addrs = ipv4_by_netlink()
    if addrs is None:  # no rtnetlink here: what `ip` says, else the kernel's ioctl
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


NLMSG_HEADER = 16
RTM_NEWLINK, RTM_GETLINK, RTM_NEWADDR, RTM_GETADDR, NLMSG_DONE = 16, 18, 20, 22, 3
IFA_ADDRESS, IFA_LOCAL, IFLA_IFNAME = 1, 2, 3


def ipv4_by_netlink():
    """{"eth0": ["10.0.0.1/24", ...]}: what `ip -o -4 addr show` prints, in its order, read from
    the rtnetlink dumps it reads itself (links for the names, then AF_INET addresses), without
    starting it (~2.5 ms of CPU a probe). An address with a peer (`inet A peer B/32`) is left
    out, as parse_ip_addr leaves out ip's line for it. None when the kernel cannot be asked or
    an answer is odd: then `ip` runs."""
    try:
        import _socket  # the C module: socket.py would import enum and selectors (~2 ms)
        s = _socket.socket(16, 3, 0)   # AF_NETLINK, SOCK_RAW, NETLINK_ROUTE
    except (ImportError, OSError, AttributeError):
        return None
    try:
        s.settimeout(Settings.timeout)
        names = {}
        for body in netlink_dump(s, RTM_GETLINK, RTM_NEWLINK, bytes(16)):   # ifinfomsg, any family
            name = netlink_attrs(body[16:]).get(IFLA_IFNAME, b"").rstrip(b"\0")
            names[int.from_bytes(body[4:8], sys.byteorder, signed=True)] = name.decode("utf-8", "replace")
        out = {}
        for body in netlink_dump(s, RTM_GETADDR, RTM_NEWADDR, bytes([2]) + bytes(7)):   # ifaddrmsg, AF_INET
            attrs = netlink_attrs(body[8:])
            local, address = attrs.get(IFA_LOCAL), attrs.get(IFA_ADDRESS)
            if local is not None and address is not None and local != address:
                continue   # ip writes "inet LOCAL peer ADDRESS/len"
            addr = local if local is not None else address
            name = names.get(int.from_bytes(body[4:8], sys.byteorder))
            if addr is None or len(addr) != 4 or not name:
                return None
            out.setdefault(name, []).append("%d.%d.%d.%d/%d" % (tuple(bytearray(addr)) + (body[1],)))
        return out
    except (OSError, ValueError):  # socket.timeout is an OSError; ip answers instead
        return None
    finally:
        s.close()


def netlink_dump(s, request, reply, payload):
    """The payloads of the `reply` messages of one dump `request` (NLM_F_REQUEST|NLM_F_DUMP)."""
    bo = sys.byteorder
    s.sendto((NLMSG_HEADER + len(payload)).to_bytes(4, bo) + request.to_bytes(2, bo) + (0x301).to_bytes(2, bo)
             + request.to_bytes(4, bo) + bytes(4) + payload, (0, 0))
    got = []
    while True:
        data = s.recv(1 << 16)
        if not data:
            raise ValueError("rtnetlink closed")
        for kind, body in netlink_messages(data):
            if kind == NLMSG_DONE:
                return got
            if kind != reply or len(body) < len(payload):
                raise ValueError("rtnetlink answered %d" % kind)   # NLMSG_ERROR (2), or unknown
            got.append(body)


def netlink_messages(data):
    """(type, payload) of each netlink message in one datagram."""
    bo, at = sys.byteorder, 0
    while at + NLMSG_HEADER <= len(data):
        length = int.from_bytes(data[at:at + 4], bo)
        if length < NLMSG_HEADER or at + length > len(data):
            raise ValueError("a netlink message of %d bytes" % length)
        yield int.from_bytes(data[at + 4:at + 6], bo), data[at + NLMSG_HEADER:at + length]
        at += (length + 3) & ~3


def netlink_attrs(data):
    """{type: value} of the route attributes (rtattr) in `data`, the first of each type."""
    bo, attrs, at = sys.byteorder, {}, 0
    while at + 4 <= len(data):
        length = int.from_bytes(data[at:at + 2], bo)
        if length < 4:
            break
        attrs.setdefault(int.from_bytes(data[at + 2:at + 4], bo), data[at + 4:at + length])
        at += (length + 3) & ~3
    return attrs


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
