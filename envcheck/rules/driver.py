"""Driver rules: is there one, is it new enough for the toolkit and for torch's CUDA, is it too
new for an old GPU. Versions compare numerically field by field (535.104.05 > 535.86.10)."""
from __future__ import annotations

import re
from typing import List, Optional

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import DriverNeed, Matrix
from envcheck.rules import remedy
from envcheck.model import ERROR, INFO, WARNING, Finding, Skipped
from envcheck.rules import driver_state
from envcheck.rules.common import (gpu_ccs, gpu_skip as _gpu_skip, major, needs, src, toolkit_step, torch_build,
                                   torch_install_cmd)
from envcheck.versions import at_least, cu_tag_to_version, major_minor, vkey

INSUFFICIENT = "'CUDA driver version is insufficient for CUDA runtime version'"


def _newest_supported(m: Matrix, driver: str) -> Optional[str]:
    """The newest CUDA release this driver fully supports, by the same floor _judge applies
    (Table 3's minimum, or the driver the release's runfile bundles when that is lower)."""
    def floor(version: str) -> Optional[str]:
        need = m.driver_need(version)
        return need.release_min if need else None

    def newest() -> Optional[str]:
        ok = [r["version"] for r in m.releases() if floor(r["version"]) and at_least(driver, floor(r["version"]))]
        return ok[-1] if ok else None
    # plan's ~140 stacks ask it for the same few drivers, each a walk of every release (issue 26)
    return m.memo("newest_supported", driver, newest) if isinstance(driver, str) else newest()


def _judge(m: Matrix, driver: str, cuda: str, what: str, code: str, extra: str = "", alternatives=(),
           stay: bool = True, forward: tuple = (), compat: Optional[dict] = None) -> list:
    """alternatives: the remedies besides the driver upgrade (what to use with this driver instead);
    stay: whether staying on an older CUDA with this driver is a way out (not where the driver
    cannot drive the host's GPUs at all); forward: the host's GPUs (name, cc), for forward
    compatibility; compat: the cuda_compat facts (None: unknown)."""
    need: Optional[DriverNeed] = m.driver_need(cuda)
    if need is None:
        # an unknown CUDA family: the cuda/torch "unknown" rules say so; this check cannot run
        return [Skipped(code.replace("-", "_"), "driver", f"the matrix knows no driver minimum for CUDA {cuda}",
                        "update envcheck (or --matrix FILE)")]
    if need.release_min and at_least(driver, need.release_min):
        return []
    if need.release_min is None and need.family_min and at_least(driver, need.family_min):
        return []
    if need.unconfirmed:
        extra += f" (the matrix marks CUDA {need.cuda}'s minimum as unconfirmed)"
    newest = _newest_supported(m, driver)
    alt = f", or stay at CUDA <= {newest} which this driver fully supports" if newest and stay else ""
    want = need.release_min or need.family_min
    if need.minor_version_compat and need.family_min and at_least(driver, need.family_min):
        return [Finding(
            WARNING, code, "driver",
            f"Driver {driver} is below CUDA {need.cuda}'s {need.release_min} but at or above the CUDA "
            f"{major(cuda)}.x minimum {need.family_min}{extra}: {what} runs through minor-version "
            f"compatibility with a limited feature set, and PTX built by this CUDA fails with 'the "
            f"provided PTX was compiled with an unsupported toolchain'.",
            f"upgrade the NVIDIA driver to >= {need.release_min}{alt}", need.source)]
    fc = forward and _forward_compat(m, driver, cuda, forward)
    if fc:
        return forward_verdict(m, need, driver, what, code, extra, fc, compat)
    floor = ""
    if need.minor_version_compat and need.family_min:
        floor = f" (and below the CUDA {major(cuda)}.x minimum {need.family_min})"
    elif not need.minor_version_compat:
        floor = " (before CUDA 11 there is no minor-version compatibility)"
    fix = f"upgrade the NVIDIA driver to >= {want}{alt}"
    return [Finding(
        ERROR, code, "driver",
        f"Driver {driver} is older than CUDA {need.cuda} needs ({want}){floor}{extra}: {what} fails with "
        f"{INSUFFICIENT}.", fix, need.source,
        remedies=(remedy.driver(want, f"upgrade the NVIDIA driver to >= {want}",
                                f"CUDA {need.cuda} needs driver >= {want}",
                                f"upgrade the NVIDIA driver to >= {want}"), *alternatives))]


def forward_verdict(m: Matrix, need: DriverNeed, driver: str, what: str, code: str, extra: str, fc: tuple,
                    compat: Optional[dict]) -> list:
    """A forward-compatible branch on data-center GPUs (fc: their names, the source): the verdict
    by the cuda-compat libraries the process loads. Unknown: a warning and the check skipped;
    none loaded: an error; one loaded: judged like a driver, its version being the driver it was
    built from (`--cuda-compat X.Y`: the driver CUDA X.Y needs), a note when it serves the CUDA."""
    names, source = fc
    want = need.release_min or need.family_min
    pkg = f"cuda-compat-{major_minor(need.cuda).replace('.', '-')}"
    compat_fix = (f"install NVIDIA's {pkg} package and put its directory first on LD_LIBRARY_PATH "
                  f"(export LD_LIBRARY_PATH=/usr/local/cuda-{major_minor(need.cuda)}/compat:$LD_LIBRARY_PATH)")
    either = f"upgrade the NVIDIA driver to >= {want}, or {compat_fix}"
    upgrade = remedy.driver(want, either, f"CUDA {need.cuda} needs driver >= {want}",
                            f"upgrade the NVIDIA driver to >= {want}")
    via = remedy.cuda_compat(major_minor(need.cuda), compat_fix, f"CUDA {need.cuda} needs driver >= {want}")
    head = (f"Driver {driver} is older than CUDA {need.cuda} needs ({want}){extra}, but {names} is a data-center "
            f"GPU and R{vkey(driver)[0]} a forward-compatible branch: {what} runs only with NVIDIA's CUDA "
            f"forward-compatibility package ({pkg}, which NGC containers ship)")
    if compat is None:
        return [Finding(WARNING, code, "driver", f"{head}; without it, it fails with {INSUFFICIENT}.",
                        f"{either} (a container from NGC has it)", source, remedies=(upgrade,)),
                Skipped(f"{code.replace('-', '_')}_cuda_compat", "driver",
                        "whether NVIDIA's cuda-compat libraries are loaded is unknown",
                        "pass --cuda-compat none|X.Y, or audit the host")]
    loaded = compat.get("version") or _compat_driver(m, compat.get("cuda"))
    if not loaded:
        on_disk = [i.get("path") for i in compat.get("installed") or [] if isinstance(i, dict) and i.get("path")]
        why = (f"cuda-compat is installed ({', '.join(on_disk)}) but the loader takes the driver's own libcuda"
               if on_disk else "no cuda-compat library is loaded")
        return [Finding(ERROR, code, "driver", f"{head}, and {why}: it fails with {INSUFFICIENT}.",
                        either, source, remedies=(upgrade, via))]
    where = f", {compat['path']}" if compat.get("path") else ""
    if not at_least(loaded, want):
        newest = _newest_supported(m, loaded)
        mvc = need.minor_version_compat and need.family_min and at_least(loaded, need.family_min)
        said = (f"{head}, and the one loaded (built from driver {loaded}{where}) serves CUDA <= {newest}"
                if newest else f"{head}, and the one loaded (built from driver {loaded}{where}) is older still")
        if mvc:
            return [Finding(WARNING, code, "driver", f"{said}: {what} runs through minor-version compatibility "
                            "with a limited feature set.", compat_fix, source, remedies=(via, upgrade))]
        return [Finding(ERROR, code, "driver", f"{said}: {what} fails with {INSUFFICIENT}.",
                        either, source, remedies=(upgrade, via))]
    return [Finding(INFO, "driver-forward-compat", "driver",
                    f"Driver {driver} is older than CUDA {need.cuda} needs ({want}); {what} runs on {names} through "
                    f"NVIDIA's forward-compatibility libraries (built from driver {loaded}{where}).",
                    f"keep them first on the loader's path (or upgrade the NVIDIA driver to >= {want} to run "
                    "without them)", source)]


def _compat_driver(m: Matrix, cuda: Optional[str]) -> Optional[str]:
    """The driver a cuda-compat-X-Y package is built from: the one CUDA X.Y's release needs (None
    for none named)."""
    need = m.driver_need(cuda)
    return need.release_min if need else None


def _forward_compat(m: Matrix, driver: str, cuda: str, gpus: tuple) -> Optional[tuple]:
    """(the GPUs' names, the source) when every GPU is a data-center board CUDA `cuda` still builds
    for and NVIDIA's forward-compatibility package runs that CUDA on the driver's branch (matrix
    forward_compat: the first release at or above the CUDA); None otherwise."""
    fc = m.data.get("forward_compat") or {}
    want = vkey(major_minor(cuda))
    releases = [r for r in fc.get("releases") or [] if vkey(r["cuda"]) >= want]
    if not releases or not gpus or want[0] < vkey(fc["releases"][0]["cuda"])[0]:
        return None
    rel = releases[0]
    branch = vkey(driver)[0]
    if not any(d == f"R{branch}" if d.startswith("R") else vkey(d)[0] == branch and at_least(driver, d)
               for d in rel["drivers"]):
        return None
    words = [w.lower() for w in fc.get("gpus") or []]
    for name, cc in gpus:
        arch = m.arch(cc) if cc else None
        if arch is None or (arch.get("last_cuda") and vkey(arch["last_cuda"]) < want) \
                or vkey(arch.get("first_cuda") or "0") > want:
            return None  # a CUDA that does not know this GPU, or no longer builds for it
        if not any(w in re.split(r"[\s_-]+", name.lower()) for w in words):
            return None
    return ", ".join(dict.fromkeys(n for n, _ in gpus)), rel["source"]


def driver_missing(f: F.Facts, m: Matrix) -> List[Finding]:
    # only when a probe looked (the "driver" section exists) and found nothing
    if not F.has(f, "driver") or F.driver_version(f):
        return []
    if driver_state.handled_here(f):  # a state with its own finding and fix
        return []
    # the probe's error often starts with the same words; say them once
    why = re.sub(r"^no nvidia driver found[:;,.]?\s*", "", F.driver_error(f) or "", flags=re.I)
    needs = []
    tb = torch_build(f, m)
    if tb and tb.cuda:
        needs.append(f"torch {tb.label()} (CUDA {tb.cuda})")
    if F.cuda_version(f):
        needs.append(f"the CUDA {F.cuda_version(f)} toolkit")
    ctx = f" Needed by {' and '.join(needs)}." if needs else ""
    pci = F.pci_gpus(f)
    if pci:  # GPUs on the bus, no driver answering and its state not told apart: this finding only
        where = ", ".join(str(d.get("address")) for d in pci)
        return [Finding(
            ERROR, "driver-not-found", "driver",
            f"{len(pci)} NVIDIA GPU(s) on the PCI bus ({where}) but no driver answers "
            f"({F.driver_error(f) or 'NVML and nvidia-smi failed'}): no job can use them.{ctx}",
            "load the driver (modprobe nvidia; check `dmesg | grep -i nvrm` for why it did not) or "
            "install the one matching the kernel; then `nvidia-smi` must list every GPU",
            src(m, "driver_install"))]
    return [Finding(
        WARNING, "driver-not-found", "driver",
        f"No NVIDIA driver found{' (' + why + ')' if why else ''}.{ctx} GPU programs fail with 'Found no "
        f"NVIDIA driver on your system' or {INSUFFICIENT}, and torch.cuda.is_available() is False.",
        "install the NVIDIA driver and check that `nvidia-smi` lists the GPUs (ignore on a CPU-only machine)",
        src(m, "rn_t3"))]


def _installed(f: F.Facts) -> Optional[str]:
    """The driver version to judge against a CUDA: the running one, else the installed userspace
    (its kernel module not loaded, or another version loaded): the driver that runs once the module
    loads or the node reboots, which is what the driver-state finding tells the user to do."""
    if F.driver_version(f):
        return F.driver_version(f)
    if F.has(f, "pci_gpus") and not F.pci_gpus(f):
        return None  # a CPU machine: its leftover NVIDIA packages run nothing
    return F.driver_userspace(f).get("version")


@needs("driver", "cuda")
def driver_vs_toolkit(f: F.Facts, m: Matrix) -> List[Finding]:
    driver, cuda = _installed(f), F.cuda_version(f)
    if not driver or not cuda:
        return []
    newest = _newest_supported(m, driver)
    stay = not _predates(f, m, driver)
    alt = (remedy.toolkit(newest, f"{toolkit_step(f, newest)}: driver {driver} supports it",
                          f"driver {driver} supports CUDA <= {newest}"),) if newest and stay else ()
    return _judge(m, driver, cuda, f"every program built with CUDA {cuda}", "driver-too-old-for-toolkit",
                  alternatives=alt, stay=stay, forward=tuple(gpu_ccs(f, m)) if stay else (), compat=F.cuda_compat(f))


@needs("driver", "torch")
def driver_vs_torch(f: F.Facts, m: Matrix) -> List[Finding]:
    driver, tb = _installed(f), torch_build(f, m)
    if not driver or not tb or not tb.cuda:
        return []
    stay = not _predates(f, m, driver)
    return _judge(m, driver, tb.cuda, f"torch {tb.label()}", "driver-too-old-for-torch", tb.pypi_note(),
                  _wheels_for(m, driver, tb) if stay else (), stay=stay, forward=tuple(gpu_ccs(f, m)) if stay else (),
                  compat=F.cuda_compat(f))


def _wheels_for(m: Matrix, driver: str, tb) -> tuple:
    """Other CUDA builds of the same torch release that this driver runs, newest CUDA first."""
    out = []
    for tag in reversed(list((tb.record or {}).get("variants") or [])):
        need = m.driver_need(cu_tag_to_version(tag))   # None for a tag that is no CUDA build
        floor = need and (need.family_min if need.minor_version_compat else need.release_min)
        if tag != tb.tag and floor and at_least(driver, floor):
            out.append(remedy.wheel(m, tb.version, tag, f"driver {driver} runs torch {tb.version}+{tag}",
                                    torch_install_cmd(m, tb.version, tag, tb.version)))
    return tuple(out[:2])


def _first_driver(m: Matrix, arch: dict) -> Optional[str]:
    """The first driver for an architecture: the minimum of the first CUDA that supports it (a
    proxy: NVIDIA publishes no per-GPU driver floor; its runfile bundles such a driver)."""
    first = m.driver_need(arch["first_cuda"])
    return first.release_min if first else None


def _predates(f: F.Facts, m: Matrix, driver: str) -> list:
    """(name, cc, arch, first driver) of each GPU whose architecture came with a later driver
    branch than this one: that driver cannot drive it at all."""
    out = []
    for name, cc in gpu_ccs(f, m):
        arch = m.arch(cc) if cc else None
        first = _first_driver(m, arch) if arch else None
        if first and vkey(driver)[0] < vkey(first)[0]:
            out.append((name, cc, arch, first))
    return out


@needs("driver", "gpu")
def driver_vs_gpu(f: F.Facts, m: Matrix) -> List[Finding]:
    driver = F.driver_version(f)
    if not driver:
        return []
    out = []
    for name, cc in gpu_ccs(f, m):
        arch = m.arch(cc) if cc else None
        if not arch:
            out.append(_gpu_skip("driver_vs_gpu", "driver", name, cc))
            continue
        first = _first_driver(m, arch)
        if first and not at_least(driver, first):
            # a whole driver branch older than the one the architecture arrived with cannot drive
            # it (error); within that branch, an earlier build may already know it (warning)
            older = vkey(driver)[0] < vkey(first)[0]
            upgrade = f"upgrade the NVIDIA driver to >= {first}"
            said = ("cannot drive it: the driver does not know this GPU" if older else
                    "may not know it (its branch gained the architecture late)")
            sm = f"sm_{cc[0]}{cc[1]}"
            gpu = f"{sm} ({arch['name']})" if name in (sm, f"{cc[0]}.{cc[1]}") else f"{name} ({arch['name']}, {sm})"
            out.append(Finding(
                ERROR if older else WARNING, "driver-too-old-for-gpu", "driver",
                f"Driver {driver} predates {gpu}, which arrived with CUDA "
                f"{arch['first_cuda']} (drivers >= {first}), and {said} (nvidia-smi: 'No devices were found'; "
                f"CUDA: 'no CUDA-capable device is detected').",
                upgrade, arch["source"],
                remedies=(remedy.driver(first, upgrade, f"{name} needs driver >= {first}", upgrade),)))
        last = arch and arch["last_driver_branch"]
        # a branch's later updates carry higher numbers on Windows (R470: 471.xx - 474.xx, R580:
        # 581.xx, 582.xx), and the next branch after each last one starts 10 or more above it
        if last and vkey(driver)[0] >= last + 10:
            fix = (f"install an R{last} driver (for example the one bundled with the newest CUDA it supports, "
                   f"CUDA <= {arch['last_cuda']})")
            branch = [r["min_driver"] for r in m.releases() if r.get("min_driver") and vkey(r["min_driver"])[0] == last]
            fits = (remedy.driver(branch[-1], fix, f"{name} needs an R{last} driver", f"install driver {branch[-1]}"),
                    ) if branch else ()
            out.append(Finding(
                ERROR, "driver-too-new-for-gpu", "driver",
                f"Driver {driver} (R{vkey(driver)[0]}) no longer supports {name} ({arch['name']}, sm_{cc[0]}{cc[1]}): "
                f"the last driver branch for it is R{last}; nvidia-smi shows 'No devices were found'.",
                fix, arch["source"], remedies=fits))
    return out


def driver_unreadable(f: F.Facts, m: Matrix) -> List[Finding]:
    driver = F.driver_version(f)
    if not driver:
        return []
    try:
        vkey(driver)
    except VersionError:
        return [Finding(WARNING, "driver-unknown", "driver",
                        f"Driver version {driver!r} cannot be read; driver checks were skipped.",
                        "check `nvidia-smi --query-gpu=driver_version --format=csv`", src(m, "rn_t3"))]
    return []


RULES = [driver_unreadable, driver_missing, driver_vs_toolkit, driver_vs_torch, driver_vs_gpu]
