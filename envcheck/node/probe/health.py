# envcheck probe, part health: PCIe links of the GPUs on the bus (part pci reads them), NVML
# memory/throttle/mode state per GPU, and the NVRM Xid lines of the kernel log since boot
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

# Raw values only: the controller judges them (envcheck/rules/health.py). Cheap on purpose: a few
# small sysfs reads per GPU, NVML calls inside the session the driver part already holds
# (its per_gpu reader), and one pass over the kernel log bounded in time and bytes.
import errno
import os
import re
import time
from base import Settings, first_number, section
from nvlink import nvlink_state
from pci import NVSWITCH_CLASS, is_gpu, nvidia_pci_functions
from run import run, which

KMSG = "/dev/kmsg"
KLOG_SECONDS = 1.0          # the kernel-log pass gives up after this long...
KLOG_BYTES = 8 << 20        # ...or this many bytes (a ring buffer is 256 KiB - a few MiB)
MAX_EVENTS = 64             # distinct (Xid, GPU) pairs kept; the rest are only counted


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("ascii", "replace").strip()
    except (OSError, IOError):
        return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def pci_scan(root=None):
    """(the NVIDIA GPUs on the bus with their link state, the number of NVSwitches), from the
    one pass over the bus (part pci). A GPU is listed whether or not the driver bound it: one
    NVML lost is still here."""
    functions = nvidia_pci_functions(root) or []
    return ([fn for fn in functions if is_gpu(fn)],
            sum(1 for fn in functions if (fn.get("class") or "").startswith(NVSWITCH_CLASS)))


def pci_gpus(root=None):
    return pci_scan(root)[0]


def nvidia_switches(root=None):
    return pci_scan(root)[1]


IB_CLASS = "/sys/class/infiniband"
PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")   # GPUDirect RDMA: the in-tree name, the old one


def ib_ports(root=IB_CLASS):
    """Every InfiniBand/RoCE port: state ('4: ACTIVE'), phys_state, rate ('400 Gb/sec (4X NDR)'),
    link_layer ('InfiniBand' | 'Ethernet'), as the kernel's ib_core shows them."""
    out = []
    try:
        devices = sorted(os.listdir(root))
    except OSError:
        return out
    for dev in devices:
        pdir = os.path.join(root, dev, "ports")
        try:
            ports = sorted(os.listdir(pdir), key=lambda p: _int(p) or 0)
        except OSError:
            continue
        for port in ports:
            d = os.path.join(pdir, port)
            out.append({"device": dev, "port": _int(port), "state": _read(os.path.join(d, "state")),
                        "phys_state": _read(os.path.join(d, "phys_state")),
                        "rate": _read(os.path.join(d, "rate")),
                        "link_layer": _read(os.path.join(d, "link_layer"))})
    return out


@section("ib", keys=("ib_ports",), default=[])
def collect_ib_rates(facts=None, root=IB_CLASS):
    """The active InfiniBand/RoCE ports with their rate in Gb/s: what NCCL's links allow. Asked
    for by the rank commands' preflight (--only ...,ib); the audit reads every port under
    health.ib."""
    out = []
    for p in ib_ports(root):
        rate = first_number(p.get("rate"))
        if "ACTIVE" in (p.get("state") or "") and rate:
            out.append(dict(p, rate_gbps=float(rate)))
    return out



def fabric_manager():
    """Whether nv-fabricmanager runs (from /proc, no process started) and its version (asked
    only on an NVSwitch system, where it matters)."""
    running = False
    for pid in os.listdir("/proc"):
        if pid.isdigit() and (_read("/proc/%s/comm" % pid) or "").startswith("nv-fabricmanage"):  # comm: 15 chars
            running = True
            break
    version = None
    exe = which("nv-fabricmanager", ["/usr/bin", "/usr/sbin", "/usr/local/bin"])
    res = run([exe, "--version"], timeout=min(Settings.timeout, 5.0)) if exe else None
    if res and res[0] == 0:
        m = re.search(r"(\d+\.\d+\.\d+)", res[1] + res[2])
        version = m.group(1) if m else None
    return {"running": running, "version": version, "path": exe}


# ---- the kernel log: NVRM Xid lines since boot ----
# (the patterns as text, compiled by re on first use: most kernel logs hold no NVRM line, and
# compiling these four cost every probe ~0.5 ms)

XID = r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[^)]*\): (\d+),\s*(.*)"
# "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus." / "NVRM: The NVIDIA GPU 0000:b3:00.0"
# (newer drivers split the second over three lines and log no Xid at all)
GPU_AT = r"NVRM: (?:The NVIDIA )?GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"


def kmsg_text(path=KMSG, seconds=KLOG_SECONDS, limit=KLOG_BYTES):
    """The kernel ring buffer as text, or None when it cannot be read (dmesg_restrict, no
    root). /dev/kmsg gives one record per read and EAGAIN at the end; a plain file (a saved log)
    gives chunks and EOF: both end the loop, as do the time and byte bounds."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    chunks, size, end = [], 0, time.time() + seconds
    try:
        while size < limit and time.time() < end:
            try:
                data = os.read(fd, 65536)
            except OSError as e:
                if e.errno == errno.EPIPE:   # the record was overwritten while we read: next one
                    continue
                if e.errno == errno.EAGAIN:  # the end of the buffer
                    break
                if not chunks:
                    return None  # EPERM/EINVAL on the first read: not readable here
                break
            if not data:
                break
            chunks.append(data)
            size += len(data)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def message(line):
    """A kmsg record 'PRIO,SEQ,USEC,FLAGS;TEXT' -> TEXT; other lines unchanged; continuation
    lines of a record (' KEY=value') -> None."""
    if line.startswith(" "):
        return None
    head, sep, rest = line.partition(";")
    if sep and re.match(r"^\d+,\d+,\d+", head):
        return rest
    return line


# when a line was logged, in seconds since boot: a /dev/kmsg record's microseconds, or the
# "[ 1234.567890]" of dmesg and journalctl -o short-monotonic; None for other formats
KMSG_USEC = r"^\d+,\d+,(\d+),"
MONOTONIC = r"^\[\s*(\d+\.\d+)\]"


def logged_at(raw):
    m = re.match(KMSG_USEC, raw)
    if m:
        return int(m.group(1)) / 1e6
    m = re.match(MONOTONIC, raw)
    return float(m.group(1)) if m else None


def parse_xids(text):
    """Kernel-log text -> {"events": [{"xid", "pci", "count", "first", "last", "first_s",
    "last_s"}], "dropped": n}. One event per (Xid, GPU); first_s/last_s: seconds since boot of
    its first and last line, when the log says. A GPU reported fallen off the bus with no Xid 79
    line of its own counts as Xid 79 (NVSentinel issue 155)."""
    events, order, fallen, dropped = {}, [], {}, 0
    last_gpu = None
    for raw in (text or "").splitlines():
        if "NVRM" not in raw:  # the cheap test first: a ring buffer is mostly other drivers
            continue
        line = message(raw)
        if line is None:
            continue
        at = logged_at(raw)
        m = re.search(XID, line)
        if m:
            key = (int(m.group(2)), m.group(1).lower())
            entry = events.get(key)
            if entry is None:
                if len(order) >= MAX_EVENTS:
                    dropped += 1
                    continue
                entry = events[key] = {"xid": key[0], "pci": key[1], "count": 0,
                                       "first": line[line.index("NVRM"):][:300], "first_s": at}
                order.append(key)
            entry["count"] += 1
            entry["last"] = line[line.index("NVRM"):][:300]
            entry["last_s"] = at
            continue
        g = re.search(GPU_AT, line)
        if g:
            last_gpu = g.group(1).lower()
        if "fallen off the bus" in line and last_gpu:
            fallen.setdefault(last_gpu, (line[line.index("NVRM"):][:300], at))
    for pci, (line, at) in fallen.items():
        if (79, pci) not in events and len(order) < MAX_EVENTS:
            events[(79, pci)] = {"xid": 79, "pci": pci, "count": 1, "first": line, "last": line,
                                 "first_s": at, "last_s": at, "no_xid_line": True}
            order.append((79, pci))
    return {"events": [events[k] for k in order], "dropped": dropped}


def uptime():
    """Seconds since boot now (/proc/uptime), to tell an Xid's age by its last_s; None if unread."""
    text = _read("/proc/uptime")
    try:
        return float(text.split()[0])
    except (AttributeError, IndexError, ValueError):
        return None


def kernel_log():
    """{"source": "/dev/kmsg"|"dmesg"|"journalctl"|None, "events": [...], "error": str|None}.
    /dev/kmsg first (no process to start); dmesg and journalctl -k only when it is not readable."""
    text = kmsg_text()
    if text is not None:
        out = parse_xids(text)
        out["source"] = KMSG
        out["uptime_s"] = uptime()
        return out
    tried = ["/dev/kmsg: not readable"]
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "-q", "--no-pager", "-o", "short-monotonic"]):
        res = run(argv, timeout=min(Settings.timeout, 5.0))
        if res and res[0] == 0:
            out = parse_xids(res[1][-KLOG_BYTES:])
            out["source"] = argv[0]
            out["uptime_s"] = uptime()
            return out
        tried.append("%s: %s" % (argv[0], "not found or timed out" if res is None
                                 else (res[2] or res[1]).strip()[:120] or "exit %d" % res[0]))
    return {"source": None, "events": [], "error": "; ".join(tried)}


# ---- NVML, inside the driver collector's session ----

UNCORRECTED, CORRECTED = 1, 0          # nvmlMemoryErrorType_t
VOLATILE, AGGREGATE = 0, 1             # nvmlEccCounterType_t
TEMP_GPU, SLOWDOWN = 0, 1              # nvmlTemperatureSensors_t, nvmlTemperatureThresholds_t


def nvml_gpu_health(nv, h):
    """One GPU's health facts from NVML; a call the GPU or driver does not support leaves its
    value None (GeForce cards have no ECC, pre-Ampere no row remapping)."""
    def get(fn):
        try:
            return fn()
        except Exception:  # NVMLError_NotSupported and friends: the fact is unknown, not bad
            return None
    out = {"ecc_mode": get(lambda: list(nv.nvmlDeviceGetEccMode(h))[0]),
           "ecc": {"volatile_uncorrected": get(lambda: nv.nvmlDeviceGetTotalEccErrors(h, UNCORRECTED, VOLATILE)),
                   "aggregate_uncorrected": get(lambda: nv.nvmlDeviceGetTotalEccErrors(h, UNCORRECTED, AGGREGATE)),
                   "volatile_corrected": get(lambda: nv.nvmlDeviceGetTotalEccErrors(h, CORRECTED, VOLATILE))},
           "retired_pages_pending": get(lambda: nv.nvmlDeviceGetRetiredPagesPendingStatus(h)),
           "throttle_reasons": get(lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
           "temperature_c": get(lambda: nv.nvmlDeviceGetTemperature(h, TEMP_GPU)),
           "slowdown_temperature_c": get(lambda: nv.nvmlDeviceGetTemperatureThreshold(h, SLOWDOWN)),
           "persistence_mode": get(lambda: nv.nvmlDeviceGetPersistenceMode(h)),
           "mig_mode": get(lambda: list(nv.nvmlDeviceGetMigMode(h))[0]),
           "compute_mode": get(lambda: nv.nvmlDeviceGetComputeMode(h))}
    out["nvlink"] = get(lambda: nvlink_state(nv, h))
    rows = get(lambda: list(nv.nvmlDeviceGetRemappedRows(h)))
    out["remapped_rows"] = None if rows is None else {
        "correctable": rows[0], "uncorrectable": rows[1], "pending": rows[2], "failure": rows[3]}
    return out


@section("health", per_gpu=nvml_gpu_health)
def collect_health(facts):
    start = time.time()
    gpus, switches = pci_scan()
    out = {"pci": gpus, "kernel_log": kernel_log(), "ib": ib_ports(),
           "modules": dict((m, os.path.isdir("/sys/module/" + m)) for m in PEER_MODULES),
           "nvswitches": switches}
    if out["nvswitches"]:
        out["fabric_manager"] = fabric_manager()
    out["seconds"] = round(time.time() - start, 4)
    return out

