"""What cannot exist here, planted at the lowest layer on a simulated host: the NVIDIA driver (a
stand-in `nvidia-smi` printing the real formats), CUDA toolkits and cuDNN as file trees with their
real version files and `nvcc -V` text, and pip packages as dist-info metadata.

Everything goes into the host's private /usr/local (or a path you name), so hosts differ.
Formats follow /work/shared/compat-facts/cuda-driver-facts.md §5 (nvidia-smi header and
--query-gpu CSV, version.txt ≤ 11.0 / version.json ≥ 11.1, nvcc -V 4 lines ≤ 10.2 / 5 lines ≥ 11).
"""
from __future__ import annotations

import json
import os
import shlex
from typing import Dict, List, Optional, Sequence

# name, memory.total MiB, compute capability
GPU_MODELS: Dict[str, tuple] = {
    "K80": ("Tesla K80", 11441, "3.7"),
    "P100": ("Tesla P100-PCIE-16GB", 16280, "6.0"),
    "V100": ("Tesla V100-SXM2-16GB", 16160, "7.0"),
    "T4": ("Tesla T4", 15360, "7.5"),
    "RTX2080Ti": ("GeForce RTX 2080 Ti", 11019, "7.5"),
    "A100": ("NVIDIA A100-SXM4-40GB", 40960, "8.0"),
    "A100-80": ("NVIDIA A100-SXM4-80GB", 81920, "8.0"),
    "H100": ("NVIDIA H100 80GB HBM3", 81559, "9.0"),
}

# driver branch → the newest CUDA it supports (what the header's "CUDA Version" shows)
DRIVER_CUDA = [(580, "13.0"), (575, "12.9"), (570, "12.8"), (565, "12.7"), (560, "12.6"),
               (555, "12.5"), (550, "12.4"), (545, "12.3"), (535, "12.2"), (530, "12.1"),
               (525, "12.0"), (520, "11.8"), (515, "11.7"), (510, "11.6"), (495, "11.5"),
               (470, "11.4"), (465, "11.3"), (460, "11.2"), (455, "11.1"), (450, "11.0"),
               (440, "10.2"), (418, "10.1"), (410, "10.0"), (396, "9.2"), (390, "9.1"), (384, "9.0")]

# nvcc's "V" number is the nvcc component version from 11.0 on, not the toolkit's
NVCC_V = {"11.1.0": "11.1.74", "11.1.1": "11.1.105", "12.1.0": "12.1.66", "12.9.1": "12.9.86"}
NVCC_BUILT = {"9": "Built on Fri_Sep__1_21:08:03_CDT_2017", "10.0": "Built on Sat_Aug_25_21:08:01_CDT_2018",
              "10.1": "Built on Sun_Jul_28_19:07:16_PDT_2019", "10.2": "Built on Wed_Oct_23_19:24:38_PDT_2019"}


def driver_max_cuda(driver: str) -> Optional[str]:
    major = int(driver.split(".")[0])
    for branch, cuda in DRIVER_CUDA:
        if major >= branch:
            return cuda
    return None


def gpu_list(model: str = "V100", count: int = 1) -> List[dict]:
    """GPU records for set_driver: `gpu_list("A100", 8)`."""
    name, mem, cc = GPU_MODELS[model]
    return [{"name": name, "memory_mib": mem, "compute_cap": cc,
             "uuid": f"GPU-{model.lower()}-0000-4000-8000-{i:012d}",
             "pci_bus_id": f"00000000:{0x07 + i * 0x10:02X}:00.0"} for i in range(count)]


_NVIDIA_SMI = r'''#!/usr/bin/python3 -SE
# envcheck simulated cluster: stand-in for the NVIDIA driver's nvidia-smi (no GPU exists here)
import json, sys, time
CFG = json.loads(%(cfg)r)
drv, gpus, args = CFG["driver"], CFG["gpus"], sys.argv[1:]
if CFG.get("fail"):
    sys.stdout.write(CFG["fail"] + "\n"); sys.exit(CFG.get("fail_code", 9))
major = int(drv.split(".")[0])
fields = {"index": lambda i, g: str(i), "name": lambda i, g: g["name"],
          "gpu_name": lambda i, g: g["name"], "driver_version": lambda i, g: drv,
          "memory.total": lambda i, g: "%%d MiB" %% g["memory_mib"], "uuid": lambda i, g: g["uuid"],
          "pci.bus_id": lambda i, g: g["pci_bus_id"], "count": lambda i, g: str(len(gpus)),
          "persistence_mode": lambda i, g: "Enabled", "vbios_version": lambda i, g: "88.00.4F.00.09"}
if major >= 510:  # compute_cap is not a query field in 470.x (first driver unconfirmed)
    fields["compute_cap"] = lambda i, g: g["compute_cap"]
apps = [a.split("=", 1)[1] for a in args if a.startswith("--query-compute-apps=")]
if apps:
    # a process "holds a GPU" when its environment says ENVCHECK_SIM_GPU=<pci.bus_id> (and
    # ENVCHECK_SIM_GPU_MIB=<memory>): only processes of this host (its network namespace) count
    import os
    here, rows = os.readlink("/proc/self/ns/net"), []
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        try:
            if os.readlink("/proc/%%s/ns/net" %% pid) != here:
                continue
            env = dict(kv.split(b"=", 1) for kv in open("/proc/%%s/environ" %% pid, "rb").read().split(b"\0") if b"=" in kv)
            exe = os.readlink("/proc/%%s/exe" %% pid)
        except OSError:
            continue
        if b"ENVCHECK_SIM_GPU" in env:
            rows.append({"pid": pid, "process_name": exe, "used_memory": env.get(b"ENVCHECK_SIM_GPU_MIB", b"1024").decode() + " MiB",
                         "used_gpu_memory": env.get(b"ENVCHECK_SIM_GPU_MIB", b"1024").decode() + " MiB",
                         "gpu_bus_id": env[b"ENVCHECK_SIM_GPU"].decode(), "gpu_uuid": gpus[0]["uuid"] if gpus else ""})
    names = [f.strip() for f in apps[0].split(",")]
    fmt = ([a.split("=", 1)[1] for a in args if a.startswith("--format=")] or [""])[0].split(",")
    if "noheader" not in fmt:
        sys.stdout.write(", ".join(n + (" [MiB]" if "memory" in n else "") for n in names) + "\n")
    for r in rows:
        vals = [r[n] for n in names]
        if "nounits" in fmt:
            vals = [v[:-4] if v.endswith(" MiB") else v for v in vals]
        sys.stdout.write(", ".join(vals) + "\n")
    sys.exit(0)
query = [a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")]
if query:
    fmt = [a.split("=", 1)[1] for a in args if a.startswith("--format=")]
    fmt = fmt[0].split(",") if fmt else []
    if "csv" not in fmt:
        sys.stdout.write('"--format=" switch is missing. Please use "--format=csv".\n'); sys.exit(2)
    names = [f.strip() for f in query[0].split(",")]
    for n in names:
        if n not in fields:
            sys.stdout.write('Field "%%s" is not a valid field to query.\n\n' %% n); sys.exit(2)
    if "noheader" not in fmt:
        sys.stdout.write(", ".join(n + (" [MiB]" if n == "memory.total" else "") for n in names) + "\n")
    for i, g in enumerate(gpus):
        vals = [fields[n](i, g) for n in names]
        if "nounits" in fmt:
            vals = [v[:-4] if v.endswith(" MiB") else v for v in vals]
        sys.stdout.write(", ".join(vals) + "\n")
    sys.exit(0)
if args[:1] == ["-L"]:
    for i, g in enumerate(gpus):
        sys.stdout.write("GPU %%d: %%s (UUID: %%s)\n" %% (i, g["name"], g["uuid"]))
    sys.exit(0)
if args[:1] in (["-q"], ["--query"]):
    sys.stdout.write("\n==============NVSMI LOG==============\n\n")
    sys.stdout.write("Timestamp                                 : %%s\n" %% time.strftime("%%a %%b %%d %%H:%%M:%%S %%Y"))
    sys.stdout.write("Driver Version                            : %%s\n" %% drv)
    sys.stdout.write("CUDA Version                              : %%s\n\n" %% (CFG["cuda"] or "N/A"))
    sys.stdout.write("Attached GPUs                             : %%d\n" %% len(gpus))
    for g in gpus:
        sys.stdout.write("GPU %%s\n    Product Name                          : %%s\n" %% (g["pci_bus_id"], g["name"]))
    sys.exit(0)
if args:
    sys.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"); sys.exit(2)
sys.stdout.write(time.strftime("%%a %%b %%d %%H:%%M:%%S %%Y") + "       \n")
cuda = CFG["cuda"]
if major >= 520:
    sys.stdout.write("+" + "-" * 87 + "+\n")
    sys.stdout.write("| %%-86s|\n" %% ("NVIDIA-SMI %%-22s Driver Version: %%-12s CUDA Version: %%s" %% (drv, drv, cuda or "N/A")))
    sys.stdout.write("|-----------------------------------------+----------------------+----------------------+\n")
    sys.stdout.write("| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n")
    sys.stdout.write("| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n")
    sys.stdout.write("|                                         |                      |               MIG M. |\n")
    sys.stdout.write("|=========================================+======================+======================|\n")
    for i, g in enumerate(gpus):
        sys.stdout.write("| %%3d  %%-28s   On  | %%s Off |                    0 |\n" %% (i, g["name"][:28], g["pci_bus_id"]))
        sys.stdout.write("| N/A   32C    P0              52W / 400W | %%6dMiB / %%5dMiB |      0%%%%      Default |\n" %% (4, g["memory_mib"]))
        sys.stdout.write("|                                         |                      |             Disabled |\n")
        sys.stdout.write("+-----------------------------------------+----------------------+----------------------+\n")
else:
    head = "NVIDIA-SMI %%-12s Driver Version: %%-12s" %% (drv, drv)
    if cuda:
        head += " CUDA Version: %%s" %% cuda
    sys.stdout.write("+" + "-" * 77 + "+\n| %%-76s|\n" %% head)
    sys.stdout.write("|-------------------------------+----------------------+----------------------+\n")
    sys.stdout.write("| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n")
    sys.stdout.write("| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n")
    sys.stdout.write("|===============================+======================+======================|\n")
    for i, g in enumerate(gpus):
        name = g["name"] if len(g["name"]) <= 18 else g["name"][:15] + "..."
        sys.stdout.write("| %%3d  %%-18s  On   | %%s Off |                    0 |\n" %% (i, name, g["pci_bus_id"]))
        sys.stdout.write("| N/A   42C    P0    39W / 300W | %%6dMiB / %%5dMiB |      0%%%%      Default |\n" %% (0, g["memory_mib"]))
        sys.stdout.write("+-------------------------------+----------------------+----------------------+\n")
sys.stdout.write("\n+" + "-" * (87 if major >= 520 else 77) + "+\n")
sys.stdout.write("| Processes:%%s|\n" %% (" " * (76 if major >= 520 else 66)))
sys.stdout.write("|  No running processes found%%s|\n" %% (" " * (59 if major >= 520 else 49)))
sys.stdout.write("+" + "-" * (87 if major >= 520 else 77) + "+\n")
'''


def set_driver(host, driver: Optional[str], gpus: Optional[Sequence[dict]] = None,
               cuda: Optional[str] = None, fail: Optional[str] = None, fail_code: int = 9,
               path: str = "/usr/local/bin/nvidia-smi") -> None:
    """Plant a stand-in nvidia-smi for `driver` (None removes it: a node without a driver).

    gpus: records from gpu_list() (default one V100); cuda: the header's CUDA Version (default
    from the driver branch); fail: make it print this and exit fail_code, like a node whose
    kernel module is not loaded ("NVIDIA-SMI has failed because it couldn't communicate with the
    NVIDIA driver. ...") or mismatched ("Failed to initialize NVML: Driver/library version mismatch").
    """
    if driver is None:
        host.run_local(f"rm -f {shlex.quote(path)}")
        return
    cfg = {"driver": driver, "gpus": list(gpus if gpus is not None else gpu_list("V100", 1)),
           "cuda": cuda if cuda is not None else driver_max_cuda(driver), "fail": fail, "fail_code": fail_code}
    host.write_file(path, _NVIDIA_SMI % {"cfg": json.dumps(cfg)}, 0o755)


def _mm(version: str) -> str:
    return ".".join(version.split(".")[:2])


def nvcc_text(version: str, nvcc_v: Optional[str] = None) -> str:
    """What `nvcc -V` prints for toolkit `version` (X.Y.Z)."""
    major = int(version.split(".")[0])
    mm = _mm(version)
    if major < 11:
        built = NVCC_BUILT.get(mm, NVCC_BUILT["9"])
        year = {"10.0": 2018, "10.1": 2019, "10.2": 2019}.get(mm, 2017)
        return ("nvcc: NVIDIA (R) Cuda compiler driver\n"
                f"Copyright (c) 2005-{year} NVIDIA Corporation\n{built}\n"
                f"Cuda compilation tools, release {mm}, V{nvcc_v or version}\n")
    v = nvcc_v or NVCC_V.get(version, version)
    build = (f"cuda_{mm}_bu.TC445_37.28845127_0" if major == 11 and mm == "11.0"
             else f"cuda_{mm}.r{mm}/compiler.32415258_0")
    return ("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2023 NVIDIA Corporation\n"
            "Built on Mon_Apr__3_17:16:06_PDT_2023\n"
            f"Cuda compilation tools, release {mm}, V{v}\nBuild {build}\n")


def plant_toolkit(host, version: str, prefix: Optional[str] = None, symlink: bool = True,
                  nvcc_v: Optional[str] = None) -> str:
    """A CUDA toolkit tree for `version` ("10.0.130"): version.txt (≤ 11.0) or version.json
    (≥ 11.1), bin/nvcc printing the real `nvcc -V` text, include/cuda.h, lib64/libcudart;
    /usr/local/cuda → it when symlink. Returns the prefix."""
    parts = version.split(".")
    major, minor = int(parts[0]), int(parts[1])
    mm = _mm(version)
    prefix = prefix or f"/usr/local/cuda-{mm}"
    q = shlex.quote(prefix)
    if (major, minor) <= (11, 0):
        host.write_file(f"{prefix}/version.txt", f"CUDA Version {version}\n")
    else:
        doc = {"cuda": {"name": "CUDA SDK", "version": version},
               "cuda_nvcc": {"name": "CUDA NVCC", "version": nvcc_v or NVCC_V.get(version, version)}}
        host.write_file(f"{prefix}/version.json", json.dumps(doc, indent=3) + "\n")
    host.write_file(f"{prefix}/bin/nvcc",
                    "#!/bin/sh\n# envcheck simulated toolkit\ncase \"$1\" in -V|--version) cat <<'EOF'\n"
                    + nvcc_text(version, nvcc_v) + "EOF\n;; *) echo 'nvcc fatal   : No input files specified; use option --help for more information' >&2; exit 1;; esac\n",
                    0o755)
    host.write_file(f"{prefix}/include/cuda.h", f"#define CUDA_VERSION {major * 1000 + minor * 10}\n")
    soname = f"libcudart.so.{mm}" if major < 11 else f"libcudart.so.{major}"
    host.run_local(f"mkdir -p {q}/lib64 && cd {q}/lib64 && : > libcudart.so.{version} && "
                   f"ln -sfn libcudart.so.{version} {soname} && ln -sfn {soname} libcudart.so")
    if symlink:
        host.run_local(f"ln -sfn {q} /usr/local/cuda")
    return prefix


def plant_cudnn(host, version: str, cuda_home: str = "/usr/local/cuda") -> None:
    """cuDNN `version` ("7.6.5") copied into a toolkit the classic way: the version defines in
    cudnn.h (v7) or cudnn_version.h (v8+), libcudnn.so.X.Y.Z with its symlinks in lib64."""
    major, minor, patch = (version.split(".") + ["0", "0"])[:3]
    defines = (f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n"
               "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n")
    if int(major) >= 8:
        host.write_file(f"{cuda_home}/include/cudnn_version.h", defines)
        host.write_file(f"{cuda_home}/include/cudnn.h", '#include "cudnn_version.h"\n')
    else:
        host.write_file(f"{cuda_home}/include/cudnn.h", "/* cudnn : Neural Networks Library */\n" + defines)
    q = shlex.quote(f"{cuda_home}/lib64")
    host.run_local(f"mkdir -p {q} && cd {q} && : > libcudnn.so.{major}.{minor}.{patch} && "
                   f"ln -sfn libcudnn.so.{major}.{minor}.{patch} libcudnn.so.{major} && "
                   f"ln -sfn libcudnn.so.{major} libcudnn.so")


def plant_python_package(host, name: str, version: str, python: str = "/usr/bin/python3",
                         site: Optional[str] = None, torch_cuda: Optional[str] = None,
                         importable: bool = False) -> str:
    """A pip-installed package as metadata only (NAME-VERSION.dist-info) in the host's
    site-packages (by default the interpreter's /usr/local one, which is private per host).
    For torch, also torch/version.py (`__version__`, `cuda`) as real wheels ship it, and an
    __init__ that refuses to import: there is no real torch behind it. `importable`: an __init__
    that imports (`torch.__version__` and nothing else), for tests about a node's GPUs that need
    a CUDA torch to be present, which cannot exist here. Returns the site dir."""
    if site is None:
        site = host.run_local(f"{shlex.quote(python)} -c \"import site; print([p for p in site.getsitepackages() "
                              "if p.startswith('/usr/local')][0])\"").stdout.strip()
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    host.write_file(f"{site}/{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    host.write_file(f"{site}/{dist}/INSTALLER", "pip\n")
    host.write_file(f"{site}/{dist}/RECORD", "")
    if name == "torch":
        host.write_file(f"{site}/torch/version.py",
                        f"__version__ = {version!r}\ndebug = False\ncuda = {torch_cuda!r}\ngit_version = 'sim'\n")
        host.write_file(f"{site}/torch/__init__.py", "from torch.version import __version__  # simulated\n"
                        if importable else
                        "raise ImportError('simulated torch install: metadata and torch/version.py only')\n")
    return site


# ---- fake libnvidia-ml.so.1 (tests/cluster/fake_nvml.c), so NVML callers (ctypes or the real
# nvidia-ml-py binding) get the same driver and GPUs as the nvidia-smi stand-in ------------------
_NVML_C = __import__("pathlib").Path(__file__).with_name("fake_nvml.c")
NVML_ERRORS = {"not_loaded": 9, "mismatch": 18}
_BUILD_LOCK = __import__("threading").Lock()  # per_host_setup runs on many hosts at once


def build_fake_nvml(out_dir) -> str:
    """Compile fake_nvml.c once into out_dir (a directory the hosts can see, e.g. cluster.base)."""
    import subprocess
    from pathlib import Path
    so = Path(out_dir) / "libnvidia-ml.so.1"
    with _BUILD_LOCK:
        if not so.exists():
            tmp = so.with_name(f".libnvidia-ml.{os.getpid()}.tmp")
            subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wno-format-truncation",
                            "-o", str(tmp), str(_NVML_C)], check=True, capture_output=True, text=True)
            tmp.rename(so)
    return str(so)


def set_nvml(host, driver: Optional[str], gpus: Optional[Sequence[dict]] = None,
             cuda: Optional[str] = None, fail: Optional[str] = None) -> None:
    """Install the fake libnvidia-ml.so.1 in the host's /usr/local/lib (ldconfig'd in its private
    /etc/ld.so.cache) with these values; driver None removes it. fail: "not_loaded" | "mismatch".
    A GPU record's optional "health" dict sets fake_nvml.c's health keys for it
    ({"ecc_vol_unc": 2, "remap_pending": 1, "throttle": "0x48", ...})."""
    if driver is None:
        host.run_local("rm -f /usr/local/lib/libnvidia-ml.so.1 /usr/local/share/envcheck-sim/nvml.conf; ldconfig")
        return
    so = build_fake_nvml(host.cluster.base)
    cuda = cuda if cuda is not None else driver_max_cuda(driver)
    cuda_int = int(cuda.split(".")[0]) * 1000 + int(cuda.split(".")[1]) * 10 if cuda else 0
    lines = [f"driver={driver}", f"cuda={cuda_int}"]
    if fail:
        lines.append(f"fail={NVML_ERRORS[fail]}")
    gpus = list(gpus if gpus is not None else gpu_list("V100", 1))
    for g in gpus:
        lines.append(f"gpu={g['name']}|{g['memory_mib']}|{g['compute_cap']}|{g['uuid']}|{g['pci_bus_id']}")
    for i, g in enumerate(gpus):  # after every gpu= line: health= refers to them by index
        if g.get("health"):
            lines.append(f"health={i}|" + ",".join(f"{k}={v}" for k, v in g["health"].items()))
    host.write_file("/usr/local/share/envcheck-sim/nvml.conf", "\n".join(lines) + "\n")
    host.run_local(f"cp {shlex.quote(so)} /usr/local/lib/libnvidia-ml.so.1 && ldconfig")


def plant_driver(host, driver: Optional[str], gpus: Optional[Sequence[dict]] = None,
                 cuda: Optional[str] = None, nvml: bool = True) -> None:
    """Both driver stand-ins at once, agreeing: nvidia-smi and (nvml=True) libnvidia-ml.so.1."""
    set_driver(host, driver, gpus, cuda)
    if nvml:
        set_nvml(host, driver, gpus, cuda)


def show_nvidia_userspace(host) -> None:
    """Let this host see the distribution's NVIDIA userspace installed in the shared /usr (hidden on
    every host by default, see sim.hide_nvidia_script): libnvidia-ml, nvidia-smi, nvcc."""
    from tests.cluster.sim import NVIDIA_HIDDEN
    # lazily: the shell doing it runs from /usr/bin (/bin is a link to it), keeping it busy
    host.run_local("; ".join(f"if mountpoint -q {d}; then umount -l {d}; fi" for d in NVIDIA_HIDDEN))


def hide_nvidia_userspace(host) -> None:
    """Hide it again (what every host starts with)."""
    from tests.cluster.sim import hide_nvidia_script
    host.run_local(hide_nvidia_script(str(host.dir / "nvidia-hidden")))


def set_kernel_module(host, proc_version_text: Optional[str]) -> None:
    """/proc/driver/nvidia/version on this host as a loaded module would write it (text of a real
    one, e.g. tests/fixtures/misc/proc-driver-version-*.txt); None: no module (the default). A
    tmpfs over the host's own view of /proc/driver: the kernel is not touched."""
    if proc_version_text is None:
        host.run_local("if mountpoint -q /proc/driver; then umount -l /proc/driver; fi")
        return
    host.run_local("mountpoint -q /proc/driver || mount -t tmpfs -o mode=755 sim /proc/driver; "
                   "mkdir -p /proc/driver/nvidia")
    host.write_file("/proc/driver/nvidia/version", proc_version_text)


def plant_pci_bus(host, devices: Sequence[dict]) -> None:
    """A node-private /sys/bus/pci/devices: a directory of the given functions (address, vendor,
    device, class, current/max link speed and width, as sysfs prints them) bind-mounted over the
    real one inside the host's mount namespace only. `pci_gpu(...)` builds a record."""
    root = "/tmp/envcheck-sim/pci"
    host.run_local(f"mkdir -p {root} && rm -rf {root}/*")
    for d in devices:
        for key in ("vendor", "device", "class", "current_link_speed", "current_link_width",
                    "max_link_speed", "max_link_width"):
            if d.get(key) is not None:
                host.write_file(f"{root}/{d['address']}/{key}", f"{d[key]}\n")
    host.run_local(f"mountpoint -q /sys/bus/pci/devices && umount /sys/bus/pci/devices; "
                   f"mount --bind {root} /sys/bus/pci/devices")


def pci_gpu(address: str, width: int = 16, max_width: int = 16, speed: str = "16.0 GT/s PCIe",
            max_speed: str = "16.0 GT/s PCIe", device: str = "0x20b2") -> dict:
    """One NVIDIA 3D-controller function as sysfs shows it (A100 SXM4 80GB by default)."""
    return {"address": address, "vendor": "0x10de", "device": device, "class": "0x030200",
            "current_link_speed": speed, "current_link_width": width,
            "max_link_speed": max_speed, "max_link_width": max_width}


def plant_kernel_log(host, text: str) -> None:
    """A node-private kernel log: a file with these lines bind-mounted over /dev/kmsg in the
    host's mount namespace (the probe reads it as it reads the ring buffer)."""
    host.write_file("/tmp/envcheck-sim/kmsg", text)
    host.run_local("mountpoint -q /dev/kmsg && umount /dev/kmsg; mount --bind /tmp/envcheck-sim/kmsg /dev/kmsg")
