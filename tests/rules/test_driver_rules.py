"""envcheck/rules/driver.py, each rule called alone and each finding compared whole (code, severity,
component, message, fix, source) with its remedies. The expected values come from the rules'
docstrings, docs/check-and-matrix.md and compat_matrix.yaml (each CUDA release's driver minimum, the
families' floors, the architectures' first CUDA and last driver branch, forward_compat's branches),
not from what the code printed."""
from __future__ import annotations

import copy

import pytest

from envcheck.model import ERROR, INFO, WARNING, Finding, Remedy, Skipped
from envcheck.rules.driver import (driver_missing, driver_unreadable, driver_vs_gpu, driver_vs_toolkit,
                                   driver_vs_torch)

INSUFFICIENT = "'CUDA driver version is insufficient for CUDA runtime version'"


def source(m, name):
    return m.data["sources"][name]


def rn(m):
    """The CUDA release notes (Table 3): the source of every release's driver minimum."""
    return m.driver_need("12.4.1").source


def facts(driver=None, **sections):
    f = {"schema": 1, "origin": "probe", "hostname": "n1"}
    if driver is not None:   # a version, or the whole driver section
        f["driver"] = {"version": driver} if isinstance(driver, str) else driver
    f.update(sections)
    return f


def torch(version, tag, cuda):
    return {"packages": {"torch": {"version": f"{version}+{tag}" if tag else version}},
            "torch": {"version": version, "local": tag, "cuda": cuda, "cuda_source": "flag" if cuda else None}}


def gpus(*names):
    return [{"index": i, "name": n} for i, n in enumerate(names)]


def upgrade(want, cuda):
    return Remedy(f"upgrade the NVIDIA driver to >= {want}", f"upgrade the NVIDIA driver to >= {want}",
                  (("driver", want),), f"CUDA {cuda} needs driver >= {want}")


# ---------------------------------------------------------------- driver_unreadable
def test_an_unreadable_driver_version_skips_the_driver_checks(m):
    assert driver_unreadable(facts("fivefifty"), m) == [Finding(
        WARNING, "driver-unknown", "driver", "Driver version 'fivefifty' cannot be read; driver checks were skipped.",
        "check `nvidia-smi --query-gpu=driver_version --format=csv`", source(m, "rn_t3"))]
    assert driver_unreadable(facts("550.54.15"), m) == []
    assert driver_unreadable(facts(), m) == []


# ---------------------------------------------------------------- driver_missing
NO_DRIVER_FIX = "install the NVIDIA driver and check that `nvidia-smi` lists the GPUs (ignore on a CPU-only machine)"
TAIL = (" GPU programs fail with 'Found no NVIDIA driver on your system' or " + INSUFFICIENT +
        ", and torch.cuda.is_available() is False.")


@pytest.mark.parametrize("error,said", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
     " (NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver)"),
    ("No NVIDIA driver found: nvidia-smi not found", " (nvidia-smi not found)"),   # its words said once
    ("no nvidia driver found.", ""),
    (None, ""),
])
def test_no_driver_is_a_warning_that_names_what_needs_one(m, error, said):
    f = dict(facts(cuda={"version": "12.4.1"}, **torch("2.4.0", "cu121", "12.1")),
             driver={"version": None, "error": error})
    assert driver_missing(f, m) == [Finding(
        WARNING, "driver-not-found", "driver",
        f"No NVIDIA driver found{said}. Needed by torch 2.4.0+cu121 (CUDA 12.1) and the CUDA 12.4.1 toolkit." + TAIL,
        NO_DRIVER_FIX, source(m, "rn_t3"))]


def test_no_driver_and_nothing_that_needs_one_says_only_that(m):
    f = facts(driver={"version": None, "error": None}, **torch("2.4.0", "cpu", None))
    assert driver_missing(f, m) == [Finding(
        WARNING, "driver-not-found", "driver", "No NVIDIA driver found." + TAIL, NO_DRIVER_FIX, source(m, "rn_t3"))]


@pytest.mark.parametrize("error,why", [(None, "NVML and nvidia-smi failed"), ("NVML: Unknown Error", "NVML: Unknown Error")])
def test_gpus_on_the_bus_and_no_driver_answering_is_an_error_naming_them(m, error, why):
    f = facts(driver={"version": None, "error": error}, cuda={"version": "12.4.1"},
              pci_gpus=[{"address": "0000:3b:00.0"}, {"address": "0000:5e:00.0"}])
    assert driver_missing(f, m) == [Finding(
        ERROR, "driver-not-found", "driver",
        f"2 NVIDIA GPU(s) on the PCI bus (0000:3b:00.0, 0000:5e:00.0) but no driver answers ({why}): no job can use "
        "them. Needed by the CUDA 12.4.1 toolkit.",
        "load the driver (modprobe nvidia; check `dmesg | grep -i nvrm` for why it did not) or install the one "
        "matching the kernel; then `nvidia-smi` must list every GPU", source(m, "driver_install"))]


@pytest.mark.parametrize("f", [
    {"schema": 1},                                                     # nobody looked
    {"driver": {"version": "550.54.15"}},                              # one answers
    {"driver": {"version": None, "state": "module-not-loaded"}},       # driver_state's findings speak
    {"driver": {"version": None, "state": "mismatch"}},
    {"driver": {"version": None, "state": "no-userspace"}, "pci_gpus": []},
])
def test_no_driver_finding_where_one_answers_or_its_state_has_its_own(m, f):
    assert driver_missing(f, m) == []


def test_no_userspace_without_the_pci_bus_is_still_this_rules_warning(m):
    f = {"driver": {"version": None, "state": "no-userspace", "error": None}}
    assert [x.code for x in driver_missing(f, m)] == ["driver-not-found"]


# ---------------------------------------------------------------- driver_vs_toolkit
def test_before_cuda_11_a_driver_below_the_release_minimum_is_an_error_with_the_cuda_it_runs(m):
    # CUDA 10.0.130 needs 410.48 (Table 3); 396.26 is 9.2.88's minimum, 9.2.148 needs 396.37
    found = driver_vs_toolkit(facts("396.26", cuda={"version": "10.0.130"}), m)
    assert found == [Finding(
        ERROR, "driver-too-old-for-toolkit", "driver",
        "Driver 396.26 is older than CUDA 10.0.130 needs (410.48) (before CUDA 11 there is no minor-version "
        f"compatibility): every program built with CUDA 10.0.130 fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 410.48, or stay at CUDA <= 9.2.88 which this driver fully supports", rn(m))]
    assert found[0].remedies == (
        upgrade("410.48", "10.0.130"),
        Remedy("install CUDA 9.2.88", "install CUDA 9.2.88 (envcheck install-cuda 9.2): driver 396.26 supports it",
               (("cuda", "9.2.88"),), "driver 396.26 supports CUDA <= 9.2.88"))


def test_below_the_family_floor_is_an_error_that_uses_an_installed_older_toolkit(m):
    # 12.2.2 needs 535.104.05, the 12.x floor is 525; 520.61.05 is exactly 11.8.0's minimum, and an
    # 11.8 toolkit is installed beside 12.2
    cuda = {"toolkits": [{"path": "/usr/local/cuda-11.8", "version": "11.8.0"},
                         {"path": "/usr/local/cuda-12.2", "version": "12.2.2"}], "version": "12.2.2"}
    found = driver_vs_toolkit(facts("520.61.05", cuda=cuda), m)
    assert found == [Finding(
        ERROR, "driver-too-old-for-toolkit", "driver",
        "Driver 520.61.05 is older than CUDA 12.2.2 needs (535.104.05) (and below the CUDA 12.x minimum 525): every "
        f"program built with CUDA 12.2.2 fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 535.104.05, or stay at CUDA <= 11.8.0 which this driver fully supports", rn(m))]
    use = ("use the CUDA 11.8 already installed (/usr/local/cuda-11.8): export PATH=/usr/local/cuda-11.8/bin:$PATH "
           "CUDA_HOME=/usr/local/cuda-11.8")
    assert found[0].remedies == (
        upgrade("535.104.05", "12.2.2"),
        Remedy("install CUDA 11.8.0", f"{use}: driver 520.61.05 supports it", (("cuda", "11.8.0"),),
               "driver 520.61.05 supports CUDA <= 11.8.0"))


@pytest.mark.parametrize("driver,cuda,newest,extra", [
    # 535.86.10 is above 12.2.1's 535.86.09, below 12.2.2's 535.104.05 (a string compare gets it wrong)
    ("535.86.10", "12.4.1", "12.2.1", ""),
    # 12.3.2's minimum is marked unconfirmed in the matrix, and said so
    ("535.104.05", "12.3.2", "12.2.2", " (the matrix marks CUDA 12.3.2's minimum as unconfirmed)"),
    ("525.60.13", "12.1.0", "12.0.0", ""),      # exactly the 12.x floor
])
def test_between_the_family_floor_and_the_release_minimum_is_a_warning(m, driver, cuda, newest, extra):
    want = m.driver_need(cuda).release_min
    assert driver_vs_toolkit(facts(driver, cuda={"version": cuda}), m) == [Finding(
        WARNING, "driver-too-old-for-toolkit", "driver",
        f"Driver {driver} is below CUDA {cuda}'s {want} but at or above the CUDA 12.x minimum 525{extra}: every "
        f"program built with CUDA {cuda} runs through minor-version compatibility with a limited feature set, and "
        "PTX built by this CUDA fails with 'the provided PTX was compiled with an unsupported toolchain'.",
        f"upgrade the NVIDIA driver to >= {want}, or stay at CUDA <= {newest} which this driver fully supports", rn(m))]


@pytest.mark.parametrize("driver,cuda", [
    ("550.54.15", "12.4.1"), ("410.48", "10.0.130"),   # exactly the release minimum
    ("530.30.02", "12.7"),     # a 12.x release the matrix lacks: its family floor (525) is all it knows
])
def test_a_driver_at_the_minimum_is_no_finding(m, driver, cuda):
    assert driver_vs_toolkit(facts(driver, cuda={"version": cuda}), m) == []


def test_a_release_the_matrix_lacks_is_held_to_its_family_floor(m):
    found = driver_vs_toolkit(facts("520.61.05", cuda={"version": "12.7"}), m)
    assert [(x.severity, x.message, x.fix) for x in found] == [(
        ERROR, "Driver 520.61.05 is older than CUDA 12.7 needs (525) (and below the CUDA 12.x minimum 525): every "
        f"program built with CUDA 12.7 fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 525, or stay at CUDA <= 11.8.0 which this driver fully supports")]


def test_a_cuda_without_a_family_skips_the_check(m):
    assert driver_vs_toolkit(facts("550.54.15", cuda={"version": "99.0"}), m) == [Skipped(
        "driver_too_old_for_toolkit", "driver", "the matrix knows no driver minimum for CUDA 99.0",
        "update envcheck (or --matrix FILE)")]


def test_a_driver_that_cannot_drive_the_gpu_is_never_told_to_stay_at_an_older_cuda(m):
    # RTX 4090 (Ada, sm_89) arrived with CUDA 11.8 (520.61.05): R450 cannot drive it at all
    f = facts("450.80.02", cuda={"version": "11.8.0"},
              gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}])
    found = driver_vs_toolkit(f, m)
    assert [(x.severity, x.fix) for x in found] == [(WARNING, "upgrade the NVIDIA driver to >= 520.61.05")]


def test_the_installed_userspace_is_judged_when_the_module_is_not_loaded(m):
    f = facts({"version": None, "userspace": {"version": "520.61.05"}}, cuda={"version": "12.2.2"})
    (e,) = driver_vs_toolkit(f, m)
    assert e.message.startswith("Driver 520.61.05 is older than CUDA 12.2.2 needs (535.104.05)")
    # a CPU machine (the PCI bus read, no NVIDIA GPU on it): its leftover userspace runs nothing
    assert driver_vs_toolkit(dict(f, pci_gpus=[]), m) == []
    assert driver_vs_toolkit(dict(f, pci_gpus=[{"address": "0000:3b:00.0"}]), m) != []


# ---------------------------------------------------------------- forward compatibility
# forward_compat in the matrix: CUDA 12.4 runs on R470 (>= 470.57), R525, R535, R545 data-center GPUs
# with cuda-compat-12-4 loaded (NVIDIA's container release notes). 12.4.0 needs 550.54.14.
A100 = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]
HEAD = ("Driver 470.57.02 is older than CUDA 12.4.0 needs (550.54.14), but NVIDIA A100-SXM4-80GB is a data-center GPU "
        "and R470 a forward-compatible branch: every program built with CUDA 12.4.0 runs only with NVIDIA's CUDA "
        "forward-compatibility package (cuda-compat-12-4, which NGC containers ship)")
COMPAT_FIX = ("install NVIDIA's cuda-compat-12-4 package and put its directory first on LD_LIBRARY_PATH "
              "(export LD_LIBRARY_PATH=/usr/local/cuda-12.4/compat:$LD_LIBRARY_PATH)")
EITHER = f"upgrade the NVIDIA driver to >= 550.54.14, or {COMPAT_FIX}"
UPGRADE = Remedy("upgrade the NVIDIA driver to >= 550.54.14", EITHER, (("driver", "550.54.14"),),
                 "CUDA 12.4.0 needs driver >= 550.54.14")
VIA = Remedy("load cuda-compat 12.4", COMPAT_FIX, (("cuda_compat", "12.4"),), "CUDA 12.4.0 needs driver >= 550.54.14")


def fc_source(m, cuda):
    return next(r["source"] for r in m.data["forward_compat"]["releases"] if r["cuda"] == cuda)


def forward(m, compat, driver="470.57.02", gpu=A100, cuda="12.4.0"):
    f = facts(driver, cuda={"version": cuda}, gpus=gpu)
    if compat is not ...:
        f["cuda_compat"] = compat
    return driver_vs_toolkit(f, m)


def test_forward_compatibility_unknown_is_a_warning_and_a_skipped_check(m):
    found = forward(m, ...)
    assert found == [
        Finding(WARNING, "driver-too-old-for-toolkit", "driver", f"{HEAD}; without it, it fails with {INSUFFICIENT}.",
                f"{EITHER} (a container from NGC has it)", fc_source(m, "12.4")),
        Skipped("driver_too_old_for_toolkit_cuda_compat", "driver",
                "whether NVIDIA's cuda-compat libraries are loaded is unknown", "pass --cuda-compat none|X.Y, or audit the host")]
    assert found[0].remedies == (UPGRADE,)


@pytest.mark.parametrize("installed,why", [
    ([], "no cuda-compat library is loaded"),
    ([{"path": "/usr/local/cuda-12.4/compat/libcuda.so.550.54.14"}, {"path": None}, "junk",
      {"path": "/opt/compat/libcuda.so.1"}],
     "cuda-compat is installed (/usr/local/cuda-12.4/compat/libcuda.so.550.54.14, /opt/compat/libcuda.so.1) but the "
     "loader takes the driver's own libcuda"),
])
def test_forward_compatibility_without_the_libraries_loaded_is_an_error(m, installed, why):
    found = forward(m, {"version": None, "cuda": None, "path": None, "installed": installed})
    assert found == [Finding(ERROR, "driver-too-old-for-toolkit", "driver",
                             f"{HEAD}, and {why}: it fails with {INSUFFICIENT}.", EITHER, fc_source(m, "12.4"))]
    assert found[0].remedies == (UPGRADE, VIA)


@pytest.mark.parametrize("compat,built,where", [
    ({"version": "550.54.14", "path": "/usr/local/cuda-12.4/compat/libcuda.so.550.54.14"}, "550.54.14",
     ", /usr/local/cuda-12.4/compat/libcuda.so.550.54.14"),
    ({"version": "555.42.02"}, "555.42.02", ""),        # newer than needed, no path known
    ({"cuda": "12.4"}, "550.54.14", ""),                # --cuda-compat 12.4: built from the driver 12.4 needs
])
def test_forward_compatibility_libraries_that_serve_the_cuda_are_a_note(m, compat, built, where):
    assert forward(m, compat) == [Finding(
        INFO, "driver-forward-compat", "driver",
        "Driver 470.57.02 is older than CUDA 12.4.0 needs (550.54.14); every program built with CUDA 12.4.0 runs on "
        f"NVIDIA A100-SXM4-80GB through NVIDIA's forward-compatibility libraries (built from driver {built}{where}).",
        "keep them first on the loader's path (or upgrade the NVIDIA driver to >= 550.54.14 to run without them)",
        fc_source(m, "12.4"))]


def test_forward_compatibility_libraries_too_old_within_the_family_run_by_minor_version_compatibility(m):
    # built from 545.23.08 (12.3.2's minimum): CUDA <= 12.3.2, and at or above the 12.x floor 525
    found = forward(m, {"version": "545.23.08", "path": "/usr/local/cuda-12.3/compat/libcuda.so.1"})
    assert found == [Finding(
        WARNING, "driver-too-old-for-toolkit", "driver",
        f"{HEAD}, and the one loaded (built from driver 545.23.08, /usr/local/cuda-12.3/compat/libcuda.so.1) serves "
        "CUDA <= 12.3.2: every program built with CUDA 12.4.0 runs through minor-version compatibility with a limited "
        "feature set.", COMPAT_FIX, fc_source(m, "12.4"))]
    assert found[0].remedies == (VIA, UPGRADE)


@pytest.mark.parametrize("compat,said", [
    ({"version": "520.61.05"}, "the one loaded (built from driver 520.61.05) serves CUDA <= 11.8.0"),  # below 525
    ({"version": "300.10"}, "the one loaded (built from driver 300.10) is older still"),   # older than any CUDA
])
def test_forward_compatibility_libraries_below_the_family_floor_are_an_error(m, compat, said):
    found = forward(m, compat)
    assert found == [Finding(ERROR, "driver-too-old-for-toolkit", "driver",
                             f"{HEAD}, and {said}: every program built with CUDA 12.4.0 fails with {INSUFFICIENT}.",
                             EITHER, fc_source(m, "12.4"))]
    assert found[0].remedies == (UPGRADE, VIA)


@pytest.mark.parametrize("driver,gpu,cuda", [
    ("510.47.03", A100, "12.4.0"),        # R510 is no forward-compatible branch for 12.4
    ("470.42.01", A100, "12.4.0"),        # R470, but below the 470.57 that 12.4 needs of it
    ("470.57.02", [{"index": 0, "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}], "12.4.0"),
    ("470.57.02", A100 + [{"index": 1, "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}], "12.4.0"),
    ("470.57.02", [{"index": 0, "name": "Tesla K80", "compute_capability": "3.7"}], "12.4.0"),  # 12.x builds no sm_37
    ("470.57.02", [{"index": 0, "name": "NVIDIA B200", "compute_capability": "10.0"}], "12.4.0"),  # 12.4 predates it
    ("470.57.02", [{"index": 0, "name": "Mystery", "compute_capability": "1.0"}], "12.4.0"),    # no such arch
    ("470.57.02", [], "12.4.0"),          # no GPU known
    ("470.57.02", A100, "13.3.0"),        # a CUDA after the last one listed (13.2)
])
def test_no_forward_compatibility_is_the_plain_error(m, driver, gpu, cuda):
    found = forward(m, {"version": "550.54.14"}, driver=driver, gpu=gpu, cuda=cuda)
    assert [(x.severity, x.code) for x in found if isinstance(x, Finding)] == [(ERROR, "driver-too-old-for-toolkit")]
    assert "forward" not in found[0].message


def test_forward_compatibility_takes_the_first_listed_cuda_at_or_above_the_one_asked(m):
    # 11.3's entry allows 418.40 (R418); 11.4 is not listed, and 11.7's entry (the first above it) has no
    # R418. A V100 (Volta, from CUDA 9.0): R418 drives it (an A100 it could not)
    v100 = [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}]
    found = forward(m, ..., driver="418.87.01", gpu=v100, cuda="11.3.0")
    assert found[0].severity == WARNING and found[0].source == fc_source(m, "11.3")
    assert "R418 a forward-compatible branch" in found[0].message and "(cuda-compat-11-3," in found[0].message
    found = forward(m, ..., driver="418.87.01", gpu=v100, cuda="11.4.0")
    assert [(x.severity, x.source) for x in found] == [(ERROR, rn(m))]


def test_a_gpu_of_unknown_architecture_or_compute_capability_is_no_forward_compatibility(m):
    for gpu in ([{"index": 0, "name": "Mystery"}], A100 + [{"index": 1, "name": "Mystery"}]):
        found = forward(m, {"version": "550.54.14"}, gpu=gpu)
        assert [(x.severity, x.source) for x in found] == [(ERROR, rn(m))]


def test_forward_compatibility_starts_at_the_first_listed_cuda_major(m):
    # the matrix lists 10.1 first: a CUDA 9.2 program never runs through cuda-compat (R384 >= 384.111
    # is allowed for 10.1). And a listing that started at 10.1 then 11.0 still serves a 10.2 program.
    v100 = [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}]
    assert [x.source for x in forward(m, ..., driver="384.111", gpu=v100, cuda="9.2.88")] == [rn(m)]
    data = dict(m.data, forward_compat=dict(m.data["forward_compat"], releases=[
        dict(m.data["forward_compat"]["releases"][0], cuda="10.1", drivers=["R384"]),
        dict(m.data["forward_compat"]["releases"][2], cuda="11.0", drivers=["R384"])]))
    found = forward(type(m)(data, m.path), ..., driver="384.111", gpu=v100, cuda="10.2.89")
    assert found[0].severity == WARNING and "R384 a forward-compatible branch" in found[0].message


def test_a_compat_package_for_a_cuda_the_matrix_lacks_is_none_loaded(m):
    found = forward(m, {"cuda": "99.9"})
    assert [x.message for x in found] == [f"{HEAD}, and no cuda-compat library is loaded: it fails with {INSUFFICIENT}."]


# ---------------------------------------------------------------- driver_vs_torch
def test_a_driver_too_old_for_torchs_cuda_offers_the_builds_of_its_release_it_runs(m):
    # torch 2.4.0+cu124 needs 550.54.14 (12.4.x); 520.61.05 is below the 12.x floor, so neither cu124
    # nor cu121 runs (12.x builds need >= 525 under minor-version compatibility); cu118 does (11.x: 450)
    found = driver_vs_torch(facts("520.61.05", **torch("2.4.0", "cu124", "12.4")), m)
    assert found == [Finding(
        ERROR, "driver-too-old-for-torch", "driver",
        "Driver 520.61.05 is older than CUDA 12.4.x needs (550.54.14) (and below the CUDA 12.x minimum 525): torch "
        f"2.4.0+cu124 fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 550.54.14, or stay at CUDA <= 11.8.0 which this driver fully supports", rn(m))]
    cmd = "pip install --force-reinstall torch==2.4.0 torchvision==0.19.0 --index-url https://download.pytorch.org/whl/cu118"
    assert found[0].remedies == (
        upgrade("550.54.14", "12.4.x"),
        Remedy("install torch 2.4.0+cu118", cmd, (("torch", "2.4.0+cu118"), ("torchvision", "0.19.0+cu118")),
               "driver 520.61.05 runs torch 2.4.0+cu118"))


def test_before_cuda_11_the_builds_offered_are_held_to_their_release_minimum_and_are_at_most_two(m):
    # torch 1.7.1: cu92, cu101, cu102, cu110 (PyPI's is cu102). 440.33 is exactly 10.2's minimum: it runs
    # cu102, cu101 (418.39) and cu92 (396.26); the newest two are offered
    found = driver_vs_torch(facts("440.33", **torch("1.7.1", "cu110", "11.0")), m)
    assert [(x.severity, x.code) for x in found] == [(ERROR, "driver-too-old-for-torch")]
    assert found[0].remedies == (
        upgrade("450.36.06", "11.0.x"),
        Remedy("install torch 1.7.1+cu102", "pip install --force-reinstall torch==1.7.1 torchvision==0.8.2",
               (("torch", "1.7.1+cu102"), ("torchvision", "0.8.2")), "driver 440.33 runs torch 1.7.1+cu102"),
        Remedy("install torch 1.7.1+cu101",
               "pip install torch==1.7.1+cu101 torchvision==0.8.2+cu101 -f https://download.pytorch.org/whl/torch_stable.html",
               (("torch", "1.7.1+cu101"), ("torchvision", "0.8.2+cu101")), "driver 440.33 runs torch 1.7.1+cu101"))


def test_a_plain_pypi_torch_says_which_build_was_judged(m):
    found = driver_vs_torch(facts("520.61.05", **torch("2.4.0", None, None)), m)
    assert [x.message for x in found] == [
        "Driver 520.61.05 is older than CUDA 12.1.x needs (530.30.02) (and below the CUDA 12.x minimum 525) (a plain "
        f"torch==2.4.0 from PyPI is the cu121 build): torch 2.4.0 fails with {INSUFFICIENT}."]


@pytest.mark.parametrize("gpu,names", [
    (A100 + [{"index": 1, "name": "NVIDIA A30", "compute_capability": "8.0"}], "NVIDIA A100-SXM4-80GB, NVIDIA A30"),
    (A100 + [dict(A100[0], index=1)], "NVIDIA A100-SXM4-80GB"),          # each model once
    # Volta's last CUDA is 12.9: a 12.9 program still runs on a V100 through 13.0's entry (R470 >= 470.57)
    ([{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}], "Tesla V100-SXM2-16GB"),
])
def test_forward_compatibility_names_each_gpu_model_once(m, gpu, names):
    cuda = "12.9.0" if "V100" in names else "12.4.0"
    (found, _) = forward(m, ..., gpu=gpu, cuda=cuda)
    assert found.severity == WARNING and f", but {names} is a data-center GPU and R470" in found.message


def edited(m, edit):
    """The matrix with its data changed by edit(data): a case the shipped data does not hold."""
    data = copy.deepcopy(m.data)
    edit(data)
    return type(m)(data, m.path)


def test_a_family_with_minor_version_compatibility_but_no_known_floor_says_no_floor(m):
    def no_floor(d):
        fam = next(f for f in d["cuda"]["families"] if f["major"] == 12)
        fam["min_driver"] = None
    found = driver_vs_toolkit(facts("520.61.05", cuda={"version": "12.4.1"}), edited(m, no_floor))
    assert [(x.severity, x.message, x.fix) for x in found] == [(
        ERROR, f"Driver 520.61.05 is older than CUDA 12.4.1 needs (550.54.15): every program built with CUDA 12.4.1 "
        f"fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 550.54.15, or stay at CUDA <= 11.8.0 which this driver fully supports")]


def test_an_unconfirmed_minimum_is_said_after_the_pypi_note(m):
    def unconfirmed(d):
        for r in d["cuda"]["releases"]:
            if r["version"].startswith("12.1."):
                r["unconfirmed"] = ["min_driver"]
    found = driver_vs_torch(facts("520.61.05", **torch("2.4.0", None, None)), edited(m, unconfirmed))
    assert [x.message for x in found] == [
        "Driver 520.61.05 is older than CUDA 12.1.x needs (530.30.02) (and below the CUDA 12.x minimum 525) (a plain "
        "torch==2.4.0 from PyPI is the cu121 build) (the matrix marks CUDA 12.1.x's minimum as unconfirmed): torch "
        f"2.4.0 fails with {INSUFFICIENT}."]


def test_a_gpu_first_built_by_exactly_the_cuda_judged_can_run_it_forward(m):
    # Turing (T4) arrived with CUDA 10.0 (410.48); 410.10 is on that branch, below it: 10.1's entry (the
    # first at or above 10.0) allows R410
    t4 = [{"index": 0, "name": "Tesla T4", "compute_capability": "7.5"}]
    (found, _) = forward(m, ..., driver="410.10", gpu=t4, cuda="10.0.130")
    assert found.severity == WARNING and found.source == fc_source(m, "10.1")
    assert found.message.startswith("Driver 410.10 is older than CUDA 10.0.130 needs (410.48), but Tesla T4 is a "
                                    "data-center GPU and R410 a forward-compatible branch")


# ---------------------------------------------------------------- driver_vs_gpu
HOPPER = "https://forums.developer.nvidia.com/t/minimum-required-cuda-version-by-gpu/276955/2"
DC = "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
NO_DEVICE = "(nvidia-smi: 'No devices were found'; CUDA: 'no CUDA-capable device is detected')."


def gpu(name, cc, index=0):
    return {"index": index, "name": name, "compute_capability": cc}


@pytest.mark.parametrize("driver,severity,said", [
    # Hopper arrived with CUDA 11.8, whose driver minimum is 520.61.05: R515 does not know it at all;
    # an earlier R520 build may not (its branch gained the architecture late)
    ("515.65.01", ERROR, "cannot drive it: the driver does not know this GPU"),
    ("520.56.06", WARNING, "may not know it (its branch gained the architecture late)")])
def test_a_driver_older_than_the_gpus_architecture(m, driver, severity, said):
    up = "upgrade the NVIDIA driver to >= 520.61.05"
    found = driver_vs_gpu(facts(driver, gpus=[gpu("H100", "9.0")]), m)
    assert found == [Finding(
        severity, "driver-too-old-for-gpu", "driver",
        f"Driver {driver} predates H100 (Hopper, sm_90), which arrived with CUDA 11.8 (drivers >= 520.61.05), "
        f"and {said} {NO_DEVICE}", up, HOPPER)]
    assert found[0].remedies == (Remedy(up, up, (("driver", "520.61.05"),), "H100 needs driver >= 520.61.05"),)
    # a GPU given by its architecture (--gpu sm_90, or 9.0) is named by it once
    for name in ("sm_90", "9.0"):
        assert driver_vs_gpu(facts(driver, gpus=[gpu(name, "9.0")]), m)[0].message.startswith(
            f"Driver {driver} predates sm_90 (Hopper), which arrived")
    assert driver_vs_gpu(facts("520.61.05", gpus=[gpu("H100", "9.0")]), m) == []


def test_a_driver_branch_past_the_gpus_last_offers_that_branchs_newest_driver(m):
    # Kepler's last driver branch is R470; the matrix's R470 drivers are the CUDA 11.4.x minimums,
    # the newest 470.82.01 (11.4.3 and 11.4.4)
    fix = "install an R470 driver (for example the one bundled with the newest CUDA it supports, CUDA <= 11.8)"
    found = driver_vs_gpu(facts("535.104.05", gpus=[gpu("Tesla K80", "3.7")]), m)
    assert found == [Finding(
        ERROR, "driver-too-new-for-gpu", "driver",
        "Driver 535.104.05 (R535) no longer supports Tesla K80 (Kepler, sm_37): the last driver branch for it is "
        "R470; nvidia-smi shows 'No devices were found'.", fix, DC)]
    assert found[0].remedies == (
        Remedy("install driver 470.82.01", fix, (("driver", "470.82.01"),), "Tesla K80 needs an R470 driver"),)
    # Fermi's last branch, R390, is no CUDA release's minimum in the matrix: no driver to offer
    fermi = driver_vs_gpu(facts("535.104.05", gpus=[gpu("Quadro 6000", "2.0")]), m)
    assert fermi == [Finding(
        ERROR, "driver-too-new-for-gpu", "driver",
        "Driver 535.104.05 (R535) no longer supports Quadro 6000 (Fermi, sm_20): the last driver branch for it is "
        "R390; nvidia-smi shows 'No devices were found'.",
        "install an R390 driver (for example the one bundled with the newest CUDA it supports, CUDA <= 8.0)",
        "https://docs.nvidia.com/deploy/cuda-compatibility/index.html")]
    assert fermi[0].remedies == ()
    # R470's later updates (to 474.xx on Windows) are still R470
    assert driver_vs_gpu(facts("479.99", gpus=[gpu("Tesla K80", "3.7")]), m) == []


def test_each_gpu_is_judged_after_one_the_matrix_cannot(m):
    found = driver_vs_gpu(facts("535.104.05", gpus=[gpu("Mystery", "99.9"), gpu("Odd", None, 1),
                                                     gpu("Tesla K80", "3.7", 2)]), m)
    assert found[:2] == [
        Skipped("driver_vs_gpu", "driver", "architecture 99.9 not in the matrix", "update envcheck (or --matrix FILE)"),
        Skipped("driver_vs_gpu", "driver", "compute capability of 'Odd' unknown",
                "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")]
    assert [x.code for x in found[2:]] == ["driver-too-new-for-gpu"]


# where the driver cannot drive the host's GPU at all (it predates the architecture), no older CUDA
# and no other torch build is a way out (_judge's stay): the driver upgrade is the one remedy
def test_a_driver_that_predates_the_gpu_is_offered_nothing_but_an_upgrade(m):
    h100 = [gpu("H100", "9.0")]
    found = driver_vs_toolkit(facts("396.26", cuda={"version": "10.0.130"}, gpus=h100), m)
    assert found == [Finding(
        ERROR, "driver-too-old-for-toolkit", "driver",
        "Driver 396.26 is older than CUDA 10.0.130 needs (410.48) (before CUDA 11 there is no minor-version "
        f"compatibility): every program built with CUDA 10.0.130 fails with {INSUFFICIENT}.",
        "upgrade the NVIDIA driver to >= 410.48", rn(m))]
    assert found[0].remedies == (upgrade("410.48", "10.0.130"),)
    # torch 2.4.0+cu121 on R450 with an H100: neither its cu118 build nor CUDA 11 runs the GPU there
    found = driver_vs_torch(facts("450.80.02", gpus=h100, **torch("2.4.0", "cu121", "12.1")), m)
    assert [x.code for x in found] == ["driver-too-old-for-torch"] and ", or stay at" not in found[0].fix
    assert [e for r in found[0].remedies for e in r.edits if e[0] != "driver"] == []


def test_a_driver_older_than_every_cuda_is_offered_no_toolkit(m):
    found = driver_vs_toolkit(facts("300.10", cuda={"version": "10.0.130"}), m)
    assert found[0].fix == "upgrade the NVIDIA driver to >= 410.48"
    assert found[0].remedies == (upgrade("410.48", "10.0.130"),)


@pytest.mark.parametrize("driver,torch_facts", [
    (None, torch("2.4.0", "cu121", "12.1")),             # no driver: driver_missing's to say
    ("450.80.02", torch("2.1.0", "cpu", None)),          # a CPU build needs no driver
    ("450.80.02", torch("not-a-version", None, None)),   # torch unreadable: the torch rules say so
])
def test_driver_against_torch_needs_both(m, driver, torch_facts):
    assert driver_vs_torch(facts(driver, **torch_facts), m) == []


def test_forward_compatibility_is_never_offered_on_a_driver_that_predates_the_gpu(m):
    # R470 is a forward-compatibility branch, but it predates Hopper (520.61.05): the cuda-compat
    # libraries cannot make it drive an H100, so CUDA 12.4 on it is the plain error
    found = driver_vs_toolkit(facts("470.57.02", cuda={"version": "12.4.0"}, gpus=[gpu("H100", "9.0")]), m)
    assert [(x.severity, x.code, x.fix) for x in found] == [
        (ERROR, "driver-too-old-for-toolkit", "upgrade the NVIDIA driver to >= 550.54.14")]
    found = driver_vs_torch(facts("470.57.02", gpus=[gpu("H100", "9.0")], **torch("2.4.0", "cu124", "12.4")), m)
    assert [(x.severity, x.code, x.fix) for x in found] == [
        (ERROR, "driver-too-old-for-torch", "upgrade the NVIDIA driver to >= 550.54.14")]
