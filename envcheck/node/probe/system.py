# envcheck probe, part system: network interfaces, gcc, the OS
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

def collect_interfaces():
    names = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    argv = ip_argv()
    res = run(argv) if argv else None
    addrs = parse_ip_addr(res[1]) if res and res[0] == 0 else ipv4_by_ioctl(names)
    out = []
    for name in names + [n for n in addrs if n not in names]:
        state = (read("/sys/class/net/%s/operstate" % name) or "").strip() or None
        out.append({"name": name, "addrs": addrs.get(name, []), "state": state})
    return out


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


def gcc_argv():
    gcc = which("gcc")
    return [gcc, "-dumpfullversion", "-dumpversion"] if gcc else None


def ip_argv():
    ip = which("ip", ["/sbin", "/usr/sbin", "/bin", "/usr/bin"])
    return [ip, "-o", "-4", "addr", "show"] if ip else None


def ldconfig_argv():
    ldc = which("ldconfig", ["/sbin", "/usr/sbin"])
    return [ldc, "-p"] if ldc else None


def collect_gcc():
    argv = gcc_argv()
    gcc = argv[0] if argv else None
    res = run(argv) if argv else None
    return {"version": _num(res[1]) if res and res[0] == 0 else None, "path": gcc}


def collect_os():
    rel = parse_os_release(read("/etc/os-release") or "")
    uname = os.uname()
    return {"name": rel.get("NAME") or uname[0], "version": rel.get("VERSION_ID"),
            "pretty": rel.get("PRETTY_NAME"), "kernel": uname[2], "arch": uname[4]}
