# envcheck probe, part nvml: NVML (libnvidia-ml.so.1) read with ctypes, for nodes without nvidia-ml-py
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.



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

    def nvmlDeviceGetNvLinkVersion(self, h, link):
        return self.uint("nvmlDeviceGetNvLinkVersion", h, self.c.c_uint(link))

    def nvmlDeviceGetRemappedRows(self, h):
        v = [self.c.c_uint() for _ in range(4)]
        self.call("nvmlDeviceGetRemappedRows", h, *[self.c.byref(x) for x in v])
        return tuple(x.value for x in v)

    def nvmlDeviceGetCudaComputeCapability(self, h):
        major, minor = self.c.c_int(), self.c.c_int()
        self.call("nvmlDeviceGetCudaComputeCapability", h, self.c.byref(major), self.c.byref(minor))
        return major.value, minor.value
