# envcheck probe, part driver: the NVIDIA driver and the GPUs it sees (NVML, then nvidia-smi)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import re
from base import ERRORS, SECTIONS, Settings, first_number, safely, section
from kept import (NVML_DRIVER_NOT_LOADED, NVML_LIB_RM_VERSION_MISMATCH, failure_key, keep_answer, known_answer,
                  nvml_failure_keepable, nvml_failure_key)
from nvml import NvmlCtypes, NvmlFailure
from run import STARTED, kill, prestart, read, run, which
from userspace import collect_userspace, driver_state, nvml_error, parse_smi_failure


SMI_FIELDS = ["driver_version", "name", "compute_cap", "memory.total", "uuid", "pci.bus_id"]


@section("gpus", keys=("driver", "gpus"), default=({"version": None}, []))
def collect_driver(facts=None):
    driver = {"version": None, "source": None, "cuda": None, "error": None, "raw": None}
    gpus, why = [], []
    proc_text = read("/proc/driver/nvidia/version")
    if proc_text:
        driver["kernel_module"] = parse_proc_driver_version(proc_text)
    # the installed userspace answers even without a kernel module: which version it is tells
    # "module not loaded" and "version mismatch" apart from "no driver"
    userspace = safely("userspace", collect_userspace)
    try:
        import pynvml
        driver["version"], driver["cuda"], gpus = nvml_facts(pynvml)
        driver["source"] = "nvml"
    except ImportError:
        why.append("nvidia-ml-py (pynvml) not installed")
        try:  # the same library pynvml would load, read directly: spares nvidia-smi's start-up
            driver["version"], driver["cuda"], gpus = nvml_ctypes(userspace, driver.get("kernel_module"))
            driver["source"] = "nvml-ctypes"
        except Exception as e:
            why.append("NVML via ctypes: %s" % (str(e) or type(e).__name__))
            driver["nvml_error"] = nvml_error(e)
    except Exception as e:  # NVMLError_LibraryNotFound, DriverNotLoaded, version mismatch ...
        why.append("NVML: %s" % (str(e) or type(e).__name__))
        driver["nvml_error"] = nvml_error(e)
    driver["userspace"] = userspace
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
            for sec in [sec for sec in SECTIONS.values() if sec.per_gpu and
                        (Settings.running is None or sec.name in Settings.running)]:
                gpu[sec.name] = safely("nvml %s of GPU %d" % (sec.name, i), lambda: sec.per_gpu(nv, h))
            gpus.append(gpu)
        return version, cuda, gpus
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass


def nvml_ctypes(userspace, kernel_module):
    """nvml_facts through ctypes, in a thread. Where NVML failed to start before with this very
    library and the kernel module as it is now (not loaded, none loadable; or a version mismatch),
    that failure again without asking (part kept): its nvmlInit costs ~9 ms before it fails."""
    key = nvml_failure_key((userspace or {}).get("library"), kernel_module)
    kept = known_answer(key, failed=True)
    if kept:
        raise NvmlFailure(kept[0], kept[2])
    try:
        return in_thread(lambda: nvml_facts(NvmlCtypes()))
    except NvmlFailure as e:
        if str(e).startswith("nvmlInit_v2: ") and nvml_failure_keepable(key, e.code):
            keep_answer(key, (e.code, "", str(e)), failed=True)
        raise


def in_thread(fn):
    """fn() in a thread given up after Settings.timeout: a hung driver must not hang the probe.
    A bare _thread, which the interpreter does not wait for at exit (a daemon thread), without
    threading's import (~1 ms of CPU)."""
    import _thread
    box, done = [], _thread.allocate_lock()
    done.acquire()

    def work():
        try:
            box.append((fn(), None))
        except Exception as e:  # noqa: BLE001 - raised again in the caller's thread
            box.append((None, e))
        finally:
            done.release()
    _thread.start_new_thread(work, ())
    if not done.acquire(True, Settings.timeout):
        ERRORS.append("NVML via ctypes: timed out after %g s" % Settings.timeout)
        raise RuntimeError("no answer in %g s" % Settings.timeout)
    if box[0][1] is not None:
        raise box[0][1]
    return box[0][0]


# NVML's own answers that every nvidia-smi call repeats: it loads the same library and its
# nvmlInit fails the same way (zeroing ~12 MB first: ~11 ms of CPU per call, each time)
NVML_INIT_FAILURES = (NVML_DRIVER_NOT_LOADED, NVML_LIB_RM_VERSION_MISMATCH)


def driver_smi(smi, driver, gpus, why):
    fields = list(SMI_FIELDS)
    # the header (CUDA version) runs while the query does, unless NVML already failed to start
    # here: then the query's answer decides whether the header is worth its own nvmlInit
    nvml_failed = (driver.get("nvml_error") or {}).get("code") in NVML_INIT_FAILURES
    if not nvml_failed:
        prestart([smi])
    query = [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
    # where NVML failed to start, nvidia-smi's failure is the one it gave last time for the same
    # files and the same failure (part kept)
    failed = failure_key(query, driver) if nvml_failed else None
    res = known_answer(failed, failed=True) or run(query)
    keep_answer(failed, res, failed=True)
    if res is None:  # a hung driver hangs every later call too
        why.append("nvidia-smi did not answer in %g s" % Settings.timeout)
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
    # the plain call prints the header only where NVML starts: after the query said NVML could
    # not (module not loaded, mismatch), it would fail the same way and its output go unread
    head = None if driver.get("smi_state") else run([smi])
    if head and head[0] == 0:
        parsed = parse_nvidia_smi_header(head[1])
        driver["cuda"] = parsed["cuda"]
        driver["version"] = driver["version"] or parsed["driver"]
        if driver["version"] and not gpus:
            driver["raw"] = head[1][:2000]
    if driver["version"]:
        driver["source"] = "nvidia-smi"


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
                     "compute_capability": first_number(row.get("compute_cap")),
                     "memory_mib": int(mem.group(1)) if mem else None,
                     "uuid": row.get("uuid"), "pci_bus_id": row.get("pci.bus_id"),
                     "driver_version": first_number(row.get("driver_version"))})
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
