#!/usr/bin/env python3
"""envcheck probe: read what this node has for GPU training and print it as ONE JSON document.

Read-only. It writes nothing, installs nothing and sends nothing anywhere; it reads files, asks
the driver's NVML library (libnvidia-ml.so.1, through pynvml or ctypes, in a thread given up after
the timeout) and runs a few read-only commands, each with a timeout: nvidia-smi (only when NVML
did not answer), nvcc -V, ldconfig -p, gcc -dumpversion, ip -o -4 addr. With --deep it also
imports torch in a child process (so a crash or hang there cannot lose the rest) and runs a tiny
tensor op on every GPU.

Usage: python3 probe.py [--deep]     or, as envcheck ships it:  python3 - [--deep] < probe.py
Stdlib only, Python >= 3.6. Schema: envcheck/facts/schema.py. Imports nothing from envcheck.
"""
# Few and light imports on purpose: 32 nodes that share a machine, or one busy node, pay for
# every module (argparse, glob, shutil, platform, importlib.metadata cost ~40 ms of a ~100 ms run)
import json
import os
import re
import signal
import subprocess
import sys
import time

if sys.version_info < (3, 6):  # this file stays ASCII and parseable by 2.7 so it can say so
    sys.stderr.write("envcheck probe: needs Python >= 3.6, this is %s (%s); point "
                     "--node-python at a newer interpreter\n" % (sys.version.split()[0], sys.executable))
    sys.exit(3)

TIMEOUT = 15.0       # seconds for any one command (--timeout)
DEEP_FACTOR = 12     # --deep gets 12x that: CUDA init on many GPUs can be slow
ERRORS = []
ENV_NAMES = ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "VIRTUAL_ENV",
             "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "WORLD_SIZE", "RANK", "LOCAL_RANK",
             "OMP_NUM_THREADS")
ENV_PREFIXES = ("CUDA_", "CUDNN_", "NCCL_", "GLOO_", "MASTER_", "TORCH_", "NVIDIA_")
SMI_FIELDS = ["driver_version", "name", "compute_cap", "memory.total", "uuid", "pci.bus_id"]


# ---- parsers: pure functions from text to facts; odd text gives None, never an exception ----

def _num(text):
    m = re.search(r"\d+(?:\.\d+)*", text or "")
    return m.group(0) if m else None


def parse_nvidia_smi_csv(text, fields=None):
    """`nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` -> list of GPU dicts."""
    fields = fields or SMI_FIELDS
    gpus = []
    for line in (text or "").splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) < len(fields):
            continue
        if len(cols) > len(fields):  # a comma inside the name: give the extra columns to it
            k = fields.index("name") if "name" in fields else 0
            extra = len(cols) - len(fields)
            cols[k:k + extra + 1] = [", ".join(cols[k:k + extra + 1])]
        row = dict(zip(fields, [None if c in ("", "N/A", "[N/A]", "[Not Supported]") else c
                                for c in cols]))
        if not row.get("driver_version") and not row.get("name"):
            continue
        mem = re.match(r"^\s*(\d{1,9})", row.get("memory.total") or "")
        gpus.append({"index": len(gpus), "name": row.get("name"),
                     "compute_capability": _num(row.get("compute_cap")),
                     "memory_mib": int(mem.group(1)) if mem else None,
                     "uuid": row.get("uuid"), "pci_bus_id": row.get("pci.bus_id"),
                     "driver_version": _num(row.get("driver_version"))})
    return gpus


def parse_nvidia_smi_header(text):
    """Plain `nvidia-smi` (or -q) -> {"driver": "535.104.05"|None, "cuda": "12.2"|None}."""
    text = text or ""
    drv = re.search(r"Driver Version\s*:\s*(\d+(?:\.\d+)+)", text)
    cuda = re.search(r"CUDA Version\s*:\s*(\d+\.\d+)", text)
    return {"driver": drv.group(1) if drv else None, "cuda": cuda.group(1) if cuda else None}


def parse_proc_driver_version(text):
    """/proc/driver/nvidia/version -> '450.80.02': the first numeric token after 'Module'."""
    first = (text or "").strip().splitlines()[:1]
    tokens = first[0].split() if first else []
    if "Module" not in tokens:
        return None
    for tok in tokens[tokens.index("Module") + 1:]:
        if re.match(r"^\d+(\.\d+)+$", tok):
            return tok
    return None


def parse_version_txt(text):
    """CUDA <= 11.0 version.txt: 'CUDA Version 10.0.130' -> '10.0.130'."""
    m = re.search(r"CUDA Version\s+(\d+(?:\.\d+)+)", text or "")
    return m.group(1) if m else None


def parse_version_json(text):
    """CUDA >= 11.1 version.json -> cuda.version; a date stamp in the third field
    ('12.1.20230222') is no update number, so it is dropped ('12.1')."""
    try:
        data = json.loads(text or "")
        version = str(data["cuda"]["version"])
    except Exception:  # not JSON, nested too deep, or no cuda.version in it
        return None
    if not re.match(r"^\d{1,9}(\.\d{1,9})+$", version):
        return None
    parts = version.split(".")
    if len(parts) > 2 and int(parts[2]) >= 1000:
        parts = parts[:2]
    return ".".join(parts)


def parse_nvcc(text):
    """`nvcc -V` -> {"release": "12.1", "build": "12.1.66", "version": toolkit version}.
    Up to 10.2 the V number is the toolkit version; from 11.0 it is nvcc's own component
    version (12.1.0 ships V12.1.66), so only the release X.Y is the toolkit's."""
    m = re.search(r"release (\d+\.\d+), V(\d+(?:\.\d+)+)", text or "")
    if not m:
        return None
    release, build = m.group(1), m.group(2)
    version = build if int(release.split(".")[0]) <= 10 else release
    return {"release": release, "build": build, "version": version}


def parse_cuda_h(text):
    """include/cuda.h '#define CUDA_VERSION 12040' -> '12.4'."""
    m = re.search(r"#define\s+CUDA_VERSION\s+(\d{4,6})\b", text or "")
    if not m:
        return None
    v = int(m.group(1))
    return "%d.%d" % (v // 1000, (v % 1000) // 10)


def parse_cudnn_header(text):
    """cudnn.h (7.x) or cudnn_version.h (8+) -> '7.6.5'; None when the macros are not there."""
    got = {}
    for key in ("MAJOR", "MINOR", "PATCHLEVEL"):
        m = re.search(r"#define\s+CUDNN_%s\s+(\d+)" % key, text or "")
        if not m:
            return None
        got[key] = m.group(1)
    return "%s.%s.%s" % (got["MAJOR"], got["MINOR"], got["PATCHLEVEL"])


def parse_ldconfig(text):
    """`ldconfig -p` -> [{"name": "libcudnn.so.7", "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.7"}]."""
    libs = []
    for line in (text or "").splitlines():
        m = re.match(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$", line)
        if m:
            libs.append({"name": m.group(1), "flags": m.group(2), "path": m.group(3)})
    return libs


def lib_version(path, stem):
    """'/x/libcudnn.so.7.6.5', 'libcudnn' -> '7.6.5'; '/x/libcudnn.so' -> None."""
    m = re.match(r"^%s\.so\.(\d+(?:\.\d+)*)$" % re.escape(stem), os.path.basename(path or ""))
    return m.group(1) if m else None


def parse_os_release(text):
    out = {}
    for line in (text or "").splitlines():
        m = re.match(r'^([A-Z_][A-Z0-9_]*)=(.*)$', line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip().strip('"').strip("'")
    return out


def parse_ip_addr(text):
    """`ip -o -4 addr` -> {"eth0": ["10.0.0.1/24"]} in the order ip prints them."""
    out = {}
    for line in (text or "").splitlines():
        m = re.match(r"^\d+:\s+(\S+?)(?:@\S+)?\s+inet\s+(\d+\.\d+\.\d+\.\d+/\d+)", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def parse_metadata(text):
    """METADATA / PKG-INFO headers -> (name, version); (None, None) when absent."""
    name = version = None
    for line in (text or "").splitlines():
        if not line.strip():
            break  # headers end at the first blank line
        if line.startswith("Name:") and name is None:
            name = line[5:].strip()
        elif line.startswith("Version:") and version is None:
            version = line[8:].strip()
    return name, version


def cu_tag_to_cuda(tag):
    m = re.match(r"^cu(\d)(\d+)$", tag or "")  # cu92 -> 9.2, cu100 -> 10.0, cu121 -> 12.1
    if not m:
        return None
    digits = m.group(1) + m.group(2)
    return "%d.%s" % (int(digits[:-1]), digits[-1])


def parse_torch_version(text):
    """'1.1.0+cu100' -> {version: 1.1.0, local: cu100, cuda: 10.0, cuda_source: local-tag}.
    No tag means PyPI's default variant for that release; the controller resolves it."""
    m = re.match(r"^\s*(\d+(?:\.\d+)*)[^+\s]*(?:\+(\S+))?\s*$", text or "")
    if not m:
        return None
    local = m.group(2).lower() if m.group(2) else None
    cuda = cu_tag_to_cuda(local)
    return {"version": m.group(1), "local": local, "cuda": cuda,
            "cuda_source": "local-tag" if cuda else None}


def nccl_code_to_version(code):
    """NCCL_VERSION_CODE: 2708 -> 2.7.8 (before 2.9), 21903 -> 2.19.3 (2.9 and later)."""
    code = int(code)
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


# ---- running things: every command has a timeout, a missing one is not an error ----

STARTED = {}  # argv tuple -> Popen started ahead by prestart(), for run() to finish


def start(argv):
    """Popen of argv in its own session (on timeout the whole tree goes, or a grandchild would
    hold the pipes), or None when the program is not there."""
    env = dict(os.environ, LC_ALL="C")
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError:
        return None


def prestart(argv):
    """Start a command now that run() will ask for later, so the node's commands run side by
    side (nvidia-smi alone can take a second on a node without persistence mode)."""
    if tuple(argv) not in STARTED:
        STARTED[tuple(argv)] = start(argv)


def run(argv, timeout=None):
    """(exit code, stdout, stderr), or None when the program is not there or timed out.
    The timeout counts from when we begin to wait: a prestarted command may have sat blocked on
    a full pipe while we waited for another, which must not count against it."""
    timeout = timeout or TIMEOUT
    key = tuple(argv)
    proc = STARTED.pop(key) if key in STARTED else start(argv)
    if proc is None:
        return None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        ERRORS.append("%s: timed out after %g s" % (" ".join(argv), timeout))
        return None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    # a grandchild that left the group may still hold the pipes: never wait on them, and bound
    # the wait for the child itself
    for pipe in (proc.stdout, proc.stderr):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: give up on a zombie, go on
        pass


def reap():
    """Stop what was prestarted but never asked for (a collector that failed early)."""
    while STARTED:
        proc = STARTED.popitem()[1]
        if proc is not None:
            kill(proc)


def ls(directory, pattern):
    """Sorted paths of the entries of `directory` whose names match the regex `pattern` (what
    glob would give, without importing glob and fnmatch)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    rx = re.compile(pattern) if isinstance(pattern, str) else pattern
    return sorted(os.path.join(directory, n) for n in names if rx.match(n))


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def which(name, extra=()):
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    for d in extra:  # sbin is often missing from a non-interactive PATH
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


# ---- collectors: each returns one part of the document ----

def collect_driver():
    driver = {"version": None, "source": None, "cuda": None, "error": None, "raw": None}
    gpus, why = [], []
    proc_text = read("/proc/driver/nvidia/version")
    if proc_text:
        driver["kernel_module"] = parse_proc_driver_version(proc_text)
    try:
        import pynvml
        driver["version"], driver["cuda"], gpus = nvml_facts(pynvml)
        driver["source"] = "nvml"
    except ImportError:
        why.append("nvidia-ml-py (pynvml) not installed")
        try:  # the same library pynvml would load, read directly: spares nvidia-smi's start-up
            driver["version"], driver["cuda"], gpus = in_thread(lambda: nvml_facts(NvmlCtypes()))
            driver["source"] = "nvml-ctypes"
        except Exception as e:
            why.append("NVML via ctypes: %s" % (str(e) or type(e).__name__))
    except Exception as e:  # NVMLError_LibraryNotFound, DriverNotLoaded, version mismatch ...
        why.append("NVML: %s" % (str(e) or type(e).__name__))
    if driver["source"] is None:
        smi = which("nvidia-smi", ["/usr/bin", "/usr/local/bin"])
        if smi:
            driver_smi(smi, driver, gpus, why)
        else:
            why.append("nvidia-smi not found")
    if driver["source"] is None and proc_text:
        driver["version"], driver["source"] = driver.get("kernel_module"), "proc"
        driver["raw"] = driver["raw"] or proc_text.strip()[:2000]
    elif driver["source"] is None:
        why.append("/proc/driver/nvidia/version absent (kernel module not loaded)")
    if driver["version"] is None:
        driver["error"] = "no NVIDIA driver found: " + "; ".join(why)
    return driver, gpus


def nvml_facts(nv):
    def s(v):
        return v.decode() if isinstance(v, bytes) else v
    nv.nvmlInit()
    try:
        version = s(nv.nvmlSystemGetDriverVersion())
        cuda = None
        try:
            c = nv.nvmlSystemGetCudaDriverVersion()  # 12040 -> 12.4
            cuda = "%d.%d" % (c // 1000, (c % 1000) // 10)
        except Exception:
            pass
        gpus = []
        for i in range(nv.nvmlDeviceGetCount()):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            gpu = {"index": i, "name": s(nv.nvmlDeviceGetName(h)), "compute_capability": None,
                   "memory_mib": None, "uuid": None, "pci_bus_id": None}
            for key, fn in (("compute_capability", lambda: "%d.%d" % tuple(
                                nv.nvmlDeviceGetCudaComputeCapability(h))),
                            ("memory_mib", lambda: nv.nvmlDeviceGetMemoryInfo(h).total >> 20),
                            ("uuid", lambda: s(nv.nvmlDeviceGetUUID(h))),
                            ("pci_bus_id", lambda: s(nv.nvmlDeviceGetPciInfo(h).busId))):
                try:
                    gpu[key] = fn()
                except Exception as e:
                    ERRORS.append("nvml %s of GPU %d: %s" % (key, i, e))
            gpus.append(gpu)
        return version, cuda, gpus
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass


def in_thread(fn):
    """fn() in a daemon thread given up after TIMEOUT: a hung driver must not hang the probe."""
    import threading
    box = []

    def work():
        try:
            box.append((fn(), None))
        except Exception as e:  # noqa: BLE001 - raised again in the caller's thread
            box.append((None, e))
    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(TIMEOUT)
    if not box:
        ERRORS.append("NVML via ctypes: timed out after %g s" % TIMEOUT)
        raise RuntimeError("no answer in %g s" % TIMEOUT)
    if box[0][1] is not None:
        raise box[0][1]
    return box[0][0]


class NvmlCtypes(object):
    """The pynvml calls nvml_facts makes, read straight from libnvidia-ml.so.1 (what pynvml
    loads) with ctypes: the system python3 rarely has nvidia-ml-py. Every return code is checked;
    a call this driver lacks raises AttributeError."""

    def __init__(self):
        import ctypes as c
        try:
            self.lib = c.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            raise RuntimeError("NVML Shared Library Not Found (%s)" % e)
        self.lib.nvmlErrorString.restype = c.c_char_p
        self.c, u, ull = c, c.c_uint, c.c_ulonglong
        self.Memory = type("nvmlMemory_t", (c.Structure,), {"_fields_": [
            ("total", ull), ("free", ull), ("used", ull)]})
        self.Pci = type("nvmlPciInfo_t", (c.Structure,), {"_fields_": [  # as _v3 fills it
            ("busIdLegacy", c.c_char * 16), ("domain", u), ("bus", u), ("device", u),
            ("pciDeviceId", u), ("pciSubSystemId", u), ("busId", c.c_char * 32)]})

    def call(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            message = self.lib.nvmlErrorString(rc).decode("utf-8", "replace")
            raise RuntimeError("%s: %s" % (name, message))

    def out(self, name, value, *args):  # value filled through its pointer, passed last
        self.call(name, *(args + (self.c.byref(value),)))
        return value

    def text(self, name, *args):
        buf = self.c.create_string_buffer(96)  # NVML_DEVICE_NAME_V2_BUFFER_SIZE, the largest
        self.call(name, *(args + (buf, 96)))
        return buf.value.decode("utf-8", "replace")

    def nvmlInit(self): self.call("nvmlInit_v2")
    def nvmlShutdown(self): self.call("nvmlShutdown")
    def nvmlSystemGetDriverVersion(self): return self.text("nvmlSystemGetDriverVersion")
    def nvmlDeviceGetCount(self): return self.out("nvmlDeviceGetCount_v2", self.c.c_uint()).value
    def nvmlDeviceGetName(self, h): return self.text("nvmlDeviceGetName", h)
    def nvmlDeviceGetUUID(self, h): return self.text("nvmlDeviceGetUUID", h)
    def nvmlDeviceGetMemoryInfo(self, h): return self.out("nvmlDeviceGetMemoryInfo", self.Memory(), h)
    def nvmlDeviceGetPciInfo(self, h): return self.out("nvmlDeviceGetPciInfo_v3", self.Pci(), h)

    def nvmlDeviceGetHandleByIndex(self, i):
        return self.out("nvmlDeviceGetHandleByIndex_v2", self.c.c_void_p(), self.c.c_uint(i))

    def nvmlSystemGetCudaDriverVersion(self):  # _v2 since ~R450; older drivers have the plain one
        name = "nvmlSystemGetCudaDriverVersion"
        return self.out(name + "_v2" if hasattr(self.lib, name + "_v2") else name, self.c.c_int()).value

    def nvmlDeviceGetCudaComputeCapability(self, h):
        major, minor = self.c.c_int(), self.c.c_int()
        self.call("nvmlDeviceGetCudaComputeCapability", h, self.c.byref(major), self.c.byref(minor))
        return major.value, minor.value


def driver_smi(smi, driver, gpus, why):
    fields = list(SMI_FIELDS)
    prestart([smi])  # the header (CUDA version) runs while the query does
    res = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if res is None:  # a hung driver hangs every later call too
        why.append("nvidia-smi did not answer in %g s" % TIMEOUT)
        header = STARTED.pop((smi,), None)  # it would hang the same way: stop it now
        if header is not None:
            kill(header)
        return
    if res[0] != 0 and "compute_cap" in res[1] + res[2]:
        fields.remove("compute_cap")  # drivers before ~510 do not know the field
        res = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if res and res[0] == 0:
        for g in parse_nvidia_smi_csv(res[1], fields):
            version = g.pop("driver_version")
            driver["version"] = driver["version"] or version
            gpus.append(g)
    elif res:
        why.append("nvidia-smi failed (exit %d): %s" % (res[0], (res[1] + res[2]).strip()[:300]))
        driver["raw"] = (res[1] + res[2]).strip()[:2000]
    head = run([smi])
    if head and head[0] == 0:
        parsed = parse_nvidia_smi_header(head[1])
        driver["cuda"] = parsed["cuda"]
        driver["version"] = driver["version"] or parsed["driver"]
        if driver["version"] and not gpus:
            driver["raw"] = head[1][:2000]
    if driver["version"]:
        driver["source"] = "nvidia-smi"


def toolkit_version(path):
    for name, parser in (("version.json", parse_version_json), ("version.txt", parse_version_txt)):
        text = read(os.path.join(path, name))
        if text is not None:
            v = parser(text)
            if v:
                return v, name, text.strip()[:2000]
            ERRORS.append("%s/%s: unreadable version (raw kept)" % (path, name))
    nvcc = os.path.join(path, "bin", "nvcc")
    res = run([nvcc, "-V"]) if os.access(nvcc, os.X_OK) else None
    parsed = parse_nvcc(res[1]) if res else None
    if parsed:
        return parsed["version"], "nvcc", res[1].strip()[:2000]
    v = parse_cuda_h(read(os.path.join(path, "include", "cuda.h"), 1 << 16))
    if v:
        return v, "cuda.h", None
    return None, None, (res[1] + res[2]).strip()[:2000] if res else None


def looks_like_toolkit(path):
    return any(os.path.exists(os.path.join(path, f))
               for f in ("version.json", "version.txt", os.path.join("include", "cuda.h")))


def collect_cuda():
    link = "/usr/local/cuda"
    target = os.path.realpath(link) if os.path.islink(link) or os.path.isdir(link) else None
    nvcc_path = which("nvcc")
    nvcc = {"path": nvcc_path, "version": None}
    if nvcc_path:
        res = run([nvcc_path, "-V"])
        parsed = parse_nvcc(res[1]) if res else None
        if parsed:
            nvcc.update(parsed)
        elif res:
            nvcc["raw"] = (res[1] + res[2]).strip()[:2000]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    nvcc_home = None
    if nvcc_path:
        real_bin = os.path.dirname(os.path.realpath(nvcc_path))
        if os.path.basename(real_bin) == "bin" and looks_like_toolkit(os.path.dirname(real_bin)):
            nvcc_home = os.path.dirname(real_bin)
    candidates = sorted(p for p in ls("/usr/local", r"^cuda-") if os.path.isdir(p))
    candidates += [p for p in (target, home, nvcc_home) if p and os.path.isdir(p)]
    toolkits, seen = [], set()
    for path in candidates:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        version, source, raw = toolkit_version(real)
        toolkits.append({"path": real, "version": version, "source": source, "raw": raw})
    by_path = dict((t["path"], t) for t in toolkits)
    in_use, via = None, None
    for path, how in ((nvcc_home, "PATH"), (home, "CUDA_HOME"), (target, "/usr/local/cuda")):
        if path and os.path.realpath(path) in by_path:
            in_use, via = by_path[os.path.realpath(path)], how
            break
    version = in_use["version"] if in_use else None
    if nvcc["version"] and (via != "PATH"):
        version, via = nvcc["version"], "PATH"  # an nvcc outside any toolkit tree still rules
        in_use = None
    return {"toolkits": toolkits, "symlink": {"path": link, "target": target}, "nvcc": nvcc,
            "version": version, "in_use": {"path": in_use["path"] if in_use else None, "via": via}}


def collect_cudnn(cuda, ldconfig_libs):
    homes = [t["path"] for t in cuda["toolkits"]]
    dirs = [os.path.join(h, "include") for h in homes] + ["/usr/include"]
    dirs += ls("/usr/include", r"^[^.].*-linux-gnu$")
    headers, seen = [], set()
    for d in dirs:
        if os.path.realpath(d) in seen:
            continue
        seen.add(os.path.realpath(d))
        names = ["cudnn_version.h"] + [os.path.basename(p) for p in ls(d, r"^cudnn_version_v.*\.h$")]
        names.append("cudnn.h")  # 7.x keeps the macros here; 8+ only includes cudnn_version.h
        for name in names:
            path = os.path.join(d, name)
            text = read(path, 1 << 18)
            v = parse_cudnn_header(text) if text else None
            if v:
                headers.append({"path": path, "version": v})
                break
    libs, seen = [], set()
    paths = [l["path"] for l in ldconfig_libs if re.match(r"^libcudnn\.so(\.\d+)*$", l["name"])]
    for h in homes:
        paths += ls(os.path.join(h, "lib64"), r"^libcudnn\.so")
        paths += ls(os.path.join(h, "lib"), r"^libcudnn\.so")
    for p in paths:
        real = os.path.realpath(p)
        if real in seen or not os.path.exists(real):
            continue
        seen.add(real)
        libs.append({"path": p, "version": lib_version(real, "libcudnn") or lib_version(p, "libcudnn")})
    in_use_home = cuda.get("in_use", {}).get("path")
    version = None
    for h in headers:
        if in_use_home and h["path"].startswith(in_use_home.rstrip("/") + "/"):
            version = h["version"]
    if version is None and headers:
        system = [h for h in headers if h["path"].startswith("/usr/include")]
        version = (system or headers)[0]["version"]
    if version is None:
        full = [l["version"] for l in libs if l["version"] and l["version"].count(".") == 2]
        version = full[0] if full else None
    return {"version": version, "headers": headers, "libs": libs}


WANTED = re.compile(r"^(torch|torchvision|torchaudio|nvidia-.*|pynvml)$")
# metadata directories worth opening: `name-version.dist-info` / `.egg-info` of a WANTED name
# (normalised with _ or not, any case); the exact Name inside decides
META_DIR = re.compile(r"^(?:(?:torch|torchvision|torchaudio|pynvml)-|nvidia[-_.]).*\.(?:dist|egg)-info$",
                      re.IGNORECASE)


def collect_packages():
    """torch & co from package metadata, WITHOUT importing them (importing torch can take
    seconds, initialise CUDA or crash; --deep does that in a child process).

    Walks sys.path in order, as importlib.metadata does, but opens only the metadata of the
    packages we report: a full importlib.metadata scan reads every METADATA file on the node
    (and its import alone is ~20 ms of start-up), which 32 nodes sharing a machine pay 32 times."""
    found = {}

    def add(name, version, location):
        key = re.sub(r"[-_.]+", "-", name or "").lower()
        if not WANTED.match(key) or not version:
            return
        entry = {"version": version, "location": location}
        if key in found:  # the first on sys.path is what `import` gets; keep the rest visible
            found[key].setdefault("shadows", []).append(entry)
        else:
            found[key] = entry

    seen = set()
    for d in sys.path:
        location = os.path.abspath(d or ".")
        if location in seen:
            continue
        seen.add(location)
        for meta in ls(location, META_DIR):
            if os.path.isdir(meta):
                meta = os.path.join(meta, "METADATA" if meta.endswith("dist-info") else "PKG-INFO")
            text = read(meta, 1 << 16)
            if text is None:
                continue
            try:
                name, version = parse_metadata(text)
                add(name, version, location)
            except Exception as e:  # one broken install must not hide the others
                ERRORS.append("packages: %s: %s" % (meta, e))
    return found


DEEP = r'''
import json, sys
r = {"torch": None, "torch_cuda": None, "cudnn": None, "nccl": None, "cuda_available": None,
     "device_count": 0, "arch_list": None, "ops": [], "error": None}
def line(e):
    t = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, t[0] if t else "")
try:
    import torch
    r["torch"] = torch.__version__
    r["torch_cuda"] = getattr(torch.version, "cuda", None)
    for key, fn in (("cudnn", lambda: torch.backends.cudnn.version()),
                    ("nccl", lambda: torch.cuda.nccl.version()),
                    ("cuda_available", lambda: torch.cuda.is_available()),
                    ("device_count", lambda: torch.cuda.device_count()),
                    ("arch_list", lambda: torch.cuda.get_arch_list())):
        try:
            r[key] = fn()
        except Exception as e:
            r.setdefault("errors", []).append("%s: %s" % (key, line(e)))
    for i in range(r["device_count"] or 0):
        op = {"device": i, "ok": False, "error": None}
        try:
            op["name"] = torch.cuda.get_device_name(i)
            op["capability"] = "%d.%d" % tuple(torch.cuda.get_device_capability(i))
            x = torch.ones(4, device="cuda:%d" % i)
            op["ok"] = float((x * 2).sum().item()) == 8.0
            torch.cuda.synchronize(i)
        except Exception as e:
            op["error"] = line(e)
        r["ops"].append(op)
except Exception as e:
    r["error"] = line(e)
sys.stdout.write(json.dumps(r, default=str))
'''


def collect_deep():
    res = run([sys.executable, "-c", DEEP], timeout=TIMEOUT * DEEP_FACTOR)
    if res is None:
        return {"error": "importing torch / touching the GPUs did not finish in %g s"
                         % (TIMEOUT * DEEP_FACTOR)}
    try:  # the last line: importing torch may itself print to stdout
        deep = json.loads((res[1].strip().splitlines() or [""])[-1])
        if not isinstance(deep, dict):
            raise ValueError("not an object")
    except ValueError:
        tail = (res[2] or res[1]).strip().splitlines()[-3:]
        return {"error": "torch check crashed (exit %s): %s" % (res[0], " | ".join(tail))}
    nccl = deep.get("nccl")
    if isinstance(nccl, list):
        deep["nccl"] = ".".join(str(x) for x in nccl)
    elif isinstance(nccl, int):
        deep["nccl"] = nccl_code_to_version(nccl)
    return deep


def collect_nccl(deep, ldconfig_libs, packages):
    if deep and deep.get("nccl"):
        return {"version": deep["nccl"], "source": "torch"}
    for lib in ldconfig_libs:
        if re.match(r"^libnccl\.so(\.\d+)*$", lib["name"]):
            v = lib_version(os.path.realpath(lib["path"]), "libnccl")
            if v and v.count(".") >= 2:
                return {"version": v, "source": "libnccl", "path": lib["path"]}
    for name in sorted(packages):
        if name.startswith("nvidia-nccl-cu"):
            return {"version": packages[name]["version"], "source": "wheel"}
    return {"version": None, "source": None}


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


def safely(name, fn, default=None):
    try:
        return fn()
    except Exception as e:  # one odd fact must never cost the whole document
        ERRORS.append("%s: %s: %s" % (name, type(e).__name__, e))
        return default


USAGE = "usage: probe.py [--deep] [--timeout SECONDS]"


def usage_error(message):
    sys.stderr.write("%s\nprobe.py: error: %s\n" % (USAGE, message))
    raise SystemExit(2)  # argparse's code for a usage error


def parse_args(argv):
    """(deep, timeout) from the command line; argparse alone would cost ~7 ms of start-up."""
    deep, timeout, args = False, TIMEOUT, list(argv)
    while args:
        a = args.pop(0)
        if a == "--deep":
            deep = True
        elif a == "--timeout" or a.startswith("--timeout="):
            value = a.partition("=")[2] if "=" in a else (args.pop(0) if args else "")
            try:
                timeout = float(value)
            except ValueError:
                timeout = -1.0
            if not timeout > 0:
                usage_error("--timeout needs a number of seconds > 0, got %r" % value)
        elif a in ("-h", "--help"):
            sys.stdout.write("%s\n\n%s\n" % (USAGE, __doc__.strip()))
            raise SystemExit(0)
        else:
            usage_error("unknown argument %r" % a)
    return deep, timeout


def main(argv=None):
    global TIMEOUT
    deep, TIMEOUT = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        facts = collect(deep)
    finally:
        reap()  # nothing the probe started outlives it, even when it crashes
    sys.stdout.write(json.dumps(facts, default=str) + "\n")
    return 0


def collect(deep):
    start = time.time()
    for cmd in (ldconfig_argv(), gcc_argv(), ip_argv()):  # these run while the driver is read
        if cmd:
            safely("start", lambda: prestart(cmd))
    facts = {"schema": 1, "origin": "probe",
             "probe": {"deep": deep, "seconds": None}}
    facts["hostname"] = safely("hostname", lambda: os.uname()[1])  # = gethostname()
    facts["machine_id"] = safely("machine_id", lambda: (read("/etc/machine-id") or "").strip() or None)
    facts["os"] = safely("os", collect_os)
    facts["python"] = {"version": sys.version.split()[0], "executable": sys.executable,
                       "prefix": sys.prefix}
    facts["driver"], facts["gpus"] = safely("driver", collect_driver, ({"version": None}, []))
    facts["cuda"] = safely("cuda", collect_cuda, {})
    ldc = ldconfig_argv()
    res = safely("ldconfig", lambda: run(ldc) if ldc else None)
    libs = parse_ldconfig(res[1]) if res and res[0] == 0 else []
    facts["cudnn"] = safely("cudnn", lambda: collect_cudnn(facts["cuda"] or {"toolkits": []}, libs))
    facts["packages"] = safely("packages", collect_packages, {})
    torch_pkg = (facts["packages"] or {}).get("torch")
    facts["torch"] = parse_torch_version(torch_pkg["version"]) if torch_pkg else None
    if deep:
        facts["deep"] = safely("deep", collect_deep)
        if facts["torch"] and facts["deep"] and facts["deep"].get("torch_cuda"):
            facts["torch"]["cuda"] = facts["deep"]["torch_cuda"]
            facts["torch"]["cuda_source"] = "deep"
    facts["nccl"] = safely("nccl", lambda: collect_nccl(facts.get("deep"), libs,
                                                        facts["packages"] or {}))
    facts["gcc"] = safely("gcc", collect_gcc)
    facts["env"] = dict((k, v) for k, v in os.environ.items()
                        if k in ENV_NAMES or k.startswith(ENV_PREFIXES))
    facts["interfaces"] = safely("interfaces", collect_interfaces, [])
    reap()
    facts["errors"] = ERRORS
    facts["probe"]["seconds"] = round(time.time() - start, 3)
    return facts


if __name__ == "__main__":
    sys.exit(main())
