"""Load the node-side probe by path (it is not importable as envcheck.node.probe on purpose:
the controller only reads it as text) and build the stand-ins the probe tests plant."""
from __future__ import annotations

import atexit
import glob
import importlib.util
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Optional

from envcheck.audit.probe import probe_source

# with a real, loaded driver, NVML/nvidia-smi answer before any stand-in could. The packaged
# userspace alone (tests/nvidia_userspace.sh) answers nothing without the kernel module: a
# stand-in first on PATH / LD_LIBRARY_PATH still speaks for the driver.
REAL_DRIVER = os.path.exists("/proc/driver/nvidia/version")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# the probe script that ships: joined from the installed package's parts (the wheel), exactly as
# envcheck sends it, and written once to a file so tests can run and import it by path (its
# folder goes when the test process ends: each xdist worker writes one, every run)
PROBE = Path(tempfile.mkdtemp(prefix="envcheck-probe-")) / "probe.py"
atexit.register(shutil.rmtree, str(PROBE.parent), True)
PROBE.write_text(probe_source(), encoding="utf-8")


def load_probe():
    spec = importlib.util.spec_from_file_location("envcheck_node_probe_under_test", PROBE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def stand_in_nvidia_smi(bin_dir: Path, generation: str) -> Path:
    """An `nvidia-smi` that answers exactly the queries the probe makes with the captured output
    of one driver generation (tests/fixtures/nvidia-smi/<generation>/), and like the real one
    exits 2 on a field its driver does not know. Any other invocation fails loudly."""
    d = FIXTURES / "nvidia-smi" / generation
    full = "--query-gpu=driver_version,name,compute_cap,memory.total,uuid,pci.bus_id"
    nocc = "--query-gpu=driver_version,name,memory.total,uuid,pci.bus_id"
    fmt = "--format=csv,noheader,nounits"

    def answer(name: str, code: int = 0) -> str:
        return 'cat "%s"; exit %d' % (d / name, code) if (d / name).exists() else \
            'echo "stand-in has no %s" >&2; exit 99' % name

    if (d / "query-error.txt").exists():
        full_answer = answer("query-error.txt", 18 if generation == "mismatch" else 2)
    else:
        full_answer = answer("query.csv")
    plain = answer("plain.txt", 18 if generation == "mismatch" else 0)
    body = f"""case "$*" in
  "{full} {fmt}") {full_answer};;
  "{nocc} {fmt}") {answer("query-nocc.csv", 18 if generation == "mismatch" else 0)};;
  "") {plain};;
  *) echo "stand-in nvidia-smi: unexpected arguments: $*" >&2; exit 99;;
esac
"""
    return write_script(bin_dir / "nvidia-smi", body)


def plant_toolkit(root: Path, *, version_json: Optional[str] = "version-12.1.json",
                  version_txt: Optional[str] = None, nvcc: str = "nvcc-12.1.txt",
                  cudnn_header: Optional[str] = "cudnn_version-8.9.7.h",
                  cudnn_lib: Optional[str] = "8.9.7") -> Path:
    """A CUDA toolkit tree as the runfile leaves it: version file, bin/nvcc (prints the real
    `nvcc -V` text), include/cudnn*.h and lib64/libcudnn.so.X.Y.Z with its soname link."""
    root.mkdir(parents=True)
    if version_json:
        shutil.copy(FIXTURES / "cuda" / version_json, root / "version.json")
    if version_txt:
        shutil.copy(FIXTURES / "cuda" / version_txt, root / "version.txt")
    write_script(root / "bin" / "nvcc", 'cat "%s"\n' % (FIXTURES / "nvcc" / nvcc))
    (root / "include").mkdir()
    if cudnn_header:
        target = "cudnn.h" if cudnn_header.startswith("cudnn-") else "cudnn_version.h"
        shutil.copy(FIXTURES / "cudnn" / cudnn_header, root / "include" / target)
    if cudnn_lib:
        lib64 = root / "lib64"
        lib64.mkdir()
        (lib64 / ("libcudnn.so." + cudnn_lib)).write_bytes(b"\x7fELF stand-in")
        os.symlink("libcudnn.so." + cudnn_lib, lib64 / ("libcudnn.so." + cudnn_lib.split(".")[0]))
    return root


def old_pythons():
    """Interpreters older than the controller's (3.6, 3.7, 3.8) found on this machine."""
    found = {}
    for minor in ("3.6", "3.7", "3.8"):
        cands = [shutil.which("python" + minor)] + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s" % (minor, minor))))
        for c in cands:
            if c and os.access(c, os.X_OK) and "shims" not in c:
                found[minor] = c
                break
    return found


FAKE_NVML_C = r"""
/* Stand-in for the NVIDIA driver's libnvidia-ml.so.1: the NVML entry points the probe reaches
   through the real nvidia-ml-py binding, answering with one machine's values. */
#include <string.h>
#include <unistd.h>
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
                 char busId[32]; } nvmlPciInfo_t;
typedef struct { const char *name, *uuid, *bus; int major, minor; unsigned long long mem; } gpu_t;
static const gpu_t GPUS[] = { %(gpus)s };
static const unsigned NGPUS = %(ngpus)d;
static int up = 0;
static int put(char *dst, const char *src, unsigned n) {
    if (strlen(src) + 1 > n) return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    strcpy(dst, src); return 0; }
int nvmlInitWithFlags(unsigned flags) { (void)flags; if (%(hang)d) sleep(300); if (%(init_error)d) return %(init_error)d; up = 1; return 0; }
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) { up = 0; return 0; }
const char *nvmlErrorString(int r) {
    switch (r) { case 9: return "Driver Not Loaded";
                 case 18: return "RM has detected an NVML/RM version mismatch.";
                 default: return "Unknown Error"; } }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { return up ? put(v, "%(driver)s", n) : 1; }
/* like the real library: answers before nvmlInit, without a kernel module (NVML major 12) */
int nvmlSystemGetNVMLVersion(char *v, unsigned n) { return put(v, "12.%(driver)s", n); }
int nvmlSystemGetCudaDriverVersion(int *v) { if (!up) return 1; *v = %(cuda)d; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
int nvmlDeviceGetCount_v2(unsigned *n) { if (!up) return 1; *n = NGPUS; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, const gpu_t **h) {
    if (!up) return 1; if (i >= NGPUS) return 2; *h = &GPUS[i]; return 0; }
int nvmlDeviceGetName(const gpu_t *h, char *s, unsigned n) { return put(s, h->name, n); }
int nvmlDeviceGetUUID(const gpu_t *h, char *s, unsigned n) { return put(s, h->uuid, n); }
int nvmlDeviceGetCudaComputeCapability(const gpu_t *h, int *ma, int *mi) {
    *ma = h->major; *mi = h->minor; return 0; }
int nvmlDeviceGetMemoryInfo(const gpu_t *h, nvmlMemory_t *m) {
    m->total = h->mem; m->free = h->mem; m->used = 0; return 0; }
int %(pci_symbol)s(const gpu_t *h, nvmlPciInfo_t *p) {
    memset(p, 0, sizeof *p); strncpy(p->busIdLegacy, h->bus, 15); strncpy(p->busId, h->bus, 31);
    return 0; }
"""


def build_fake_nvml(out_dir: Path, driver: str, cuda: int, gpus, init_error: int = 0,
                    pci: bool = True, hang: bool = False) -> Path:
    """Compile a libnvidia-ml.so.1 answering with `driver`, `cuda` (e.g. 12020) and `gpus`
    [(name, uuid, bus_id, (major, minor), memory_mib)]; returns the directory to put on
    LD_LIBRARY_PATH. init_error makes nvmlInit fail with that NVML code (9: driver not loaded,
    18: library/driver mismatch); pci=False leaves out nvmlDeviceGetPciInfo_v3 (an old driver);
    hang=True makes nvmlInit sleep 300 s (a wedged GPU)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = ", ".join('{"%s", "%s", "%s", %d, %d, %dULL}' % (n, u, b, cc[0], cc[1], mib << 20)
                     for n, u, b, cc, mib in gpus) or "{0}"
    src = out_dir / "fake_nvml.c"
    src.write_text(FAKE_NVML_C % {"gpus": rows, "ngpus": len(gpus), "driver": driver,
                                  "cuda": cuda, "init_error": init_error, "hang": int(hang),
                                  "pci_symbol": "nvmlDeviceGetPciInfo_v3" if pci else "notNvmlPciInfo"})
    import subprocess
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(out_dir / "libnvidia-ml.so.1"),
                    str(src)], check=True, capture_output=True, timeout=120)
    return out_dir


def plant_dist(site: Path, dirname: str, name: str, version: str, *, egg: bool = False) -> None:
    """A package's metadata in `site` as pip (dist-info/METADATA) or an old setuptools
    (egg-info/PKG-INFO) leaves it: what the probe reads instead of importing the package."""
    d = site / dirname
    d.mkdir(parents=True)
    (d / ("PKG-INFO" if egg else "METADATA")).write_text(
        f"Metadata-Version: {'1.1' if egg else '2.1'}\nName: {name}\nVersion: {version}\n\nbody\n")


def poison(site: Path, module: str) -> None:
    """A `module` in `site` that ends the process when imported: the probe must never import it."""
    (site / module).mkdir(parents=True, exist_ok=True)
    (site / module / "__init__.py").write_text(f"raise SystemExit('the probe imported {module}')\n")
