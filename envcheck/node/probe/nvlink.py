# envcheck probe, part nvlink: each GPU's NVLinks (how many it has, how many are up, the version NVML reports)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

from base import section

NVLINK_MAX = 18   # NVML_NVLINK_MAX_LINKS (A100 uses 12 of them, H100 and B200 18)


def nvlink_state(nv, h):
    """{"up": n, "down": [link, ...]} over the links NVML knows; None on a GPU without NVLink
    (the first link answers NOT_SUPPORTED)."""
    up, down = 0, []
    for link in range(NVLINK_MAX):
        try:
            state = nv.nvmlDeviceGetNvLinkState(h, link)
        except Exception:
            if link == 0:
                return None
            break  # past the GPU's last link
        if state:
            up += 1
        else:
            down.append(link)
    return {"up": up, "down": down}


def nvlink_of_gpu(nv, h):
    """{"links": n, "up": n, "nvml_version": v} for one GPU; None without NVLink. The version is
    NVML's raw answer for the first link up (None when no link is up): its numbering changed
    between drivers (1..4 for NVLink 1..4 in older ones, nvmlNvlinkVersion_t's 1..7 for 1.0..5.0
    since), so the controller reads the generation from the GPU's architecture and keeps this one
    to show."""
    state = nvlink_state(nv, h)
    if state is None:
        return None
    version = None
    links = state["up"] + len(state["down"])
    up = [link for link in range(links) if link not in state["down"]]
    if up:
        try:
            version = int(nv.nvmlDeviceGetNvLinkVersion(h, up[0]))
        except Exception:  # an old driver without the call: the count still stands
            version = None
    return {"links": links, "up": state["up"], "nvml_version": version}


@section("nvlink", needs=("gpus",), per_gpu=nvlink_of_gpu)
def collect_nvlink(facts):
    """Per GPU under gpus[i]["nvlink"], read in the driver's NVML session; here only whether
    NVML was there to ask: nvidia-smi's fallback lists no NVLinks, so their absence is unknown."""
    source = (facts.get("driver") or {}).get("source")
    read = source in ("nvml", "nvml-ctypes")
    return {"read": read, "error": None if read else "NVML did not answer (driver source: %s)" % source}
