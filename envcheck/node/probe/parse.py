# envcheck probe, part parse: pure parsers from text to facts
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

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
