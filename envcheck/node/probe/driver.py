# envcheck probe, part driver: the NVIDIA driver and the GPUs it sees (NVML, then nvidia-smi)
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

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
            driver["nvml_error"] = nvml_error(e)
    except Exception as e:  # NVMLError_LibraryNotFound, DriverNotLoaded, version mismatch ...
        why.append("NVML: %s" % (str(e) or type(e).__name__))
        driver["nvml_error"] = nvml_error(e)
    # the installed userspace answers even without a kernel module: which version it is tells
    # "module not loaded" and "version mismatch" apart from "no driver"
    driver["userspace"] = safely("userspace", collect_userspace)
    smi = None
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
    driver["state"] = driver_state(driver, bool(smi))
    if driver["state"] == "module-not-loaded":
        driver["error"] = "NVIDIA driver %s userspace installed, kernel module not loaded: %s" % (
            (driver["userspace"] or {}).get("version") or "(version unknown)", "; ".join(why))
    elif driver["state"] == "mismatch":
        driver["error"] = "Driver/library version mismatch (userspace %s, kernel module %s): %s" % (
            (driver["userspace"] or {}).get("version") or "unknown",
            driver.get("kernel_module") or "unknown", "; ".join(why))
    elif driver["version"] is None:
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
            for key, fn in NVML_PER_GPU:
                gpu[key] = safely("nvml %s of GPU %d" % (key, i), lambda: fn(nv, h))
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


class NvmlFailure(RuntimeError):
    """An NVML call that returned an error: its nvmlReturn_t code, and the library's words."""

    def __init__(self, code, message):
        RuntimeError.__init__(self, message)
        self.code = code


class NvmlCtypes(object):
    """The pynvml calls nvml_facts makes, read straight from libnvidia-ml.so.1 (what pynvml
    loads) with ctypes: the system python3 rarely has nvidia-ml-py. Every return code is checked;
    a call this driver lacks raises AttributeError."""

    def __init__(self):
        import ctypes as c
        try:
            self.lib = c.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            raise NvmlFailure(12, "NVML Shared Library Not Found (%s)" % e)
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
            raise NvmlFailure(rc, "%s: %s" % (name, message))

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

    def uint(self, name, h, *args):  # an unsigned int filled through its pointer, after args
        return self.out(name, self.c.c_uint(), h, *args).value

    def nvmlDeviceGetTotalEccErrors(self, h, kind, counter):
        return self.out("nvmlDeviceGetTotalEccErrors", self.c.c_ulonglong(), h, self.c.c_int(kind),
                        self.c.c_int(counter)).value

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return self.out("nvmlDeviceGetCurrentClocksThrottleReasons", self.c.c_ulonglong(), h).value

    def pair(self, name, h):  # (current, pending) modes
        a, b = self.c.c_uint(), self.c.c_uint()
        self.call(name, h, self.c.byref(a), self.c.byref(b))
        return a.value, b.value

    def nvmlDeviceGetEccMode(self, h): return self.pair("nvmlDeviceGetEccMode", h)
    def nvmlDeviceGetMigMode(self, h): return self.pair("nvmlDeviceGetMigMode", h)
    def nvmlDeviceGetRetiredPagesPendingStatus(self, h): return self.uint("nvmlDeviceGetRetiredPagesPendingStatus", h)
    def nvmlDeviceGetPersistenceMode(self, h): return self.uint("nvmlDeviceGetPersistenceMode", h)
    def nvmlDeviceGetComputeMode(self, h): return self.uint("nvmlDeviceGetComputeMode", h)

    def nvmlDeviceGetTemperature(self, h, sensor):
        return self.uint("nvmlDeviceGetTemperature", h, self.c.c_int(sensor))

    def nvmlDeviceGetTemperatureThreshold(self, h, kind):
        return self.uint("nvmlDeviceGetTemperatureThreshold", h, self.c.c_int(kind))

    def nvmlDeviceGetNvLinkState(self, h, link):
        return self.uint("nvmlDeviceGetNvLinkState", h, self.c.c_uint(link))

    def nvmlDeviceGetRemappedRows(self, h):
        v = [self.c.c_uint() for _ in range(4)]
        self.call("nvmlDeviceGetRemappedRows", h, *[self.c.byref(x) for x in v])
        return tuple(x.value for x in v)

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
        driver["smi_state"], lib = parse_smi_failure(res[1] + res[2])
        if lib and not (driver.get("userspace") or {}).get("version"):
            driver["userspace"] = {"version": lib, "source": "nvidia-smi", "library": None}
    head = run([smi])
    if head and head[0] == 0:
        parsed = parse_nvidia_smi_header(head[1])
        driver["cuda"] = parsed["cuda"]
        driver["version"] = driver["version"] or parsed["driver"]
        if driver["version"] and not gpus:
            driver["raw"] = head[1][:2000]
    if driver["version"]:
        driver["source"] = "nvidia-smi"
