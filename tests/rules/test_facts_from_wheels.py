"""Facts users need from real wheels: the numpy torch runs with, the NCCL a statically linked
torch carries (the same verdict with and without --deep), which cuDNN torch loads beside the
system one, the driver a runfile bundles as the floor of "stay at CUDA <= X", and a Skipped
record where a rule lacks a fact. Judged against the real compat_matrix.yaml."""
from __future__ import annotations

import copy

import pytest

from envcheck.audit.fleet import compare
from envcheck.facts.from_flags import stack_facts
from envcheck.facts.load import derive_cudnn, derive_nccl
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, HostResult
from envcheck.report import render_facts
from envcheck.rules import cudnn, judge
from envcheck.rules.driver import _newest_supported


def by_code(v, code):
    return [f for f in v.findings if f.code == code]


# ---------------------------------------------------------------- numpy 2 and torch < 2.3

def test_torch_1_13_with_numpy_2_is_an_error_whose_fix_pins_numpy_below_2(m):
    v = judge(stack_facts(matrix=m, torch="1.13.1", torchvision="0.14.1", numpy="2.0.1"), m)
    [f] = by_code(v, "torch-numpy2")
    assert f.severity == ERROR and f.component == "torch"
    assert "compiled using NumPy 1.x cannot be run in NumPy 2.0.1" in f.message
    assert "Numpy is not available" in f.message
    assert f.fix.startswith('pip install "numpy<2"') and "torch >= 2.3.0" in f.fix
    assert f.source == m.numpy2()["source"] and f.source.startswith("https://")


@pytest.mark.parametrize("torch, numpy", [("1.13.1", "1.26.4"), ("2.3.0", "2.0.0"), ("2.4.1", "2.1.2")])
def test_numpy_1_or_a_torch_built_for_numpy_2_is_fine(m, torch, numpy):
    v = judge(stack_facts(matrix=m, torch=torch, numpy=numpy), m)
    assert not [f for f in v.findings if "numpy" in f.code]
    assert not [s for s in v.skipped if s.check == "numpy_vs_torch"]


def test_an_old_torch_with_numpy_unknown_is_a_skipped_check_not_silence(m):
    v = judge(stack_facts(matrix=m, torch="1.13.1"), m)
    [s] = [s for s in v.skipped if s.check == "numpy_vs_torch"]
    assert "numpy version unknown" in s.reason and "--numpy" in s.needs
    # a torch built for numpy 2 needs no numpy to be judged
    assert not [s for s in judge(stack_facts(matrix=m, torch="2.4.1"), m).skipped if s.check == "numpy_vs_torch"]


def test_a_python_older_than_numpy_2_needs_settles_it_without_the_numpy_version(m):
    # numpy 2.0.0 requires Python >= 3.9: on 3.8, or with a torch that has no wheel for 3.9+,
    # numpy 2 cannot be installed
    assert m.numpy2()["python"] == "3.9" and m.numpy2()["python_source"].startswith("https://pypi.org/")
    for kw in (dict(torch="1.13.1", python="3.8"), dict(torch="1.1.0")):
        v = judge(stack_facts(matrix=m, **kw), m)
        assert not [s for s in v.skipped if s.check == "numpy_vs_torch"], kw
    assert [s for s in judge(stack_facts(matrix=m, torch="1.13.1", python="3.10"), m).skipped
            if s.check == "numpy_vs_torch"]


def test_a_probe_that_found_no_numpy_judges_old_torch_fine(m):
    f = probe_facts(torch="1.13.1+cu117")
    f["numpy"] = {"version": None, "location": None}
    v = judge(f, m)
    assert not by_code(v, "torch-numpy2") and not [s for s in v.skipped if s.check == "numpy_vs_torch"]
    f["packages"]["numpy"] = {"version": "2.0.2", "location": "/venv/lib/python3.10/site-packages"}
    assert by_code(judge(f, m), "torch-numpy2")


def test_an_old_torchvision_with_a_numpy_2_ready_torch_is_a_torchvision_warning(m):
    v = judge(stack_facts(matrix=m, torch="2.3.1", torchvision="0.18.1", numpy="2.2.5"), m)
    [f] = by_code(v, "torchvision-numpy2")
    assert f.severity == WARNING and f.component == "torchvision" and "0.19.0" in f.fix


def test_the_matrix_refuses_a_numpy2_floor_that_is_not_a_known_release(m):
    from envcheck.errors import MatrixError
    from envcheck.matrix.schema import validate
    data = copy.deepcopy(m.data)
    data["torch"]["numpy2"]["torch"] = "2.2.9"
    with pytest.raises(MatrixError, match="torch.numpy2.torch"):
        validate(data, "broken.yaml")
    data = copy.deepcopy(m.data)
    del data["torch"]["numpy2"]["source"]
    with pytest.raises(MatrixError, match="torch.numpy2.source"):
        validate(data, "broken.yaml")


# ---------------------------------------------------------------- NCCL of static builds

def probe_facts(torch="1.12.1+cu102", deep=False, nccl_seen=None, host="n1", **extra):
    """A facts document as the probe writes it for a pip torch (no GPU needed to judge NCCL)."""
    public, _, tag = torch.partition("+")
    f = {"schema": 1, "origin": "probe", "probe": {"deep": deep}, "hostname": host, "machine_id": host,
         "python": {"version": "3.10.12"}, "driver": {"version": "535.104.05", "state": "working"},
         "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}],
         "packages": {"torch": {"version": torch, "location": "/venv/lib/python3.10/site-packages"}},
         "torch": {"version": public, "local": tag or None, "cuda": None, "cuda_source": "local-tag"},
         "cudnn": {"version": None, "headers": [], "libs": []}, "numpy": {"version": "1.26.4"},
         "env": {}, "nccl": nccl_seen or {"version": None, "source": None}}
    f.update(extra)
    return f


def with_deep(f, m, nccl_version, cudnn_code):
    """The same host audited with --deep: torch itself says its CUDA, cuDNN, NCCL and arch list."""
    f = copy.deepcopy(f)
    var = m.torch_variant(f["torch"]["version"], f["torch"]["local"])
    f["probe"]["deep"] = True
    f["deep"] = {"torch": f["packages"]["torch"]["version"], "torch_cuda": var["cuda"], "cudnn": cudnn_code,
                 "nccl": nccl_version, "cuda_available": True, "device_count": 1, "arch_list": var["arch"],
                 "ops": [], "error": None}
    f["torch"]["cuda"], f["torch"]["cuda_source"] = var["cuda"], "deep"
    f["nccl"] = {"version": nccl_version, "source": "torch"}
    return f


SYSTEM_NCCL = {"version": "2.18.3", "source": "libnccl", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}


def test_a_static_torch_takes_its_nccl_from_the_matrix_not_the_system_library(m):
    f = probe_facts(nccl_seen=dict(SYSTEM_NCCL))
    derive_nccl(f, m)
    assert f["nccl"]["version"] == m.torch_variant("1.12.1", "cu102")["nccl"] == "2.10.3"
    assert f["nccl"]["source"] == "matrix" and "statically" in f["nccl"]["note"]
    assert f["nccl"]["ignored"]["version"] == "2.18.3"
    text = render_facts(f)
    assert "2.10.3 (from matrix); linked statically into torch 1.12.1+cu102" in text
    assert "not loaded by torch: 2.18.3 (libnccl /usr/lib/x86_64-linux-gnu/libnccl.so.2)" in text


def test_a_torch_2_with_an_nccl_wheel_loads_the_wheel_before_a_system_libnccl(m):
    f = probe_facts(torch="2.1.0+cu121", nccl_seen=dict(SYSTEM_NCCL))
    f["packages"]["nvidia-nccl-cu12"] = {"version": "2.18.1"}
    derive_nccl(f, m)
    assert (f["nccl"]["version"], f["nccl"]["source"]) == ("2.18.1", "wheel")


def test_what_torch_itself_reported_with_deep_always_stands(m):
    f = with_deep(probe_facts(), m, "2.10.3", 7605)
    before = copy.deepcopy(f["nccl"])
    derive_nccl(f, m)
    assert f["nccl"] == before


def fleet_codes(hosts):
    audit = compare([HostResult(h, f) for h, f in hosts.items()])
    return sorted([(r.host, x.code, x.message) for r in audit.results for x in r.findings]
                  + [("fleet", x.code, x.message) for x in audit.fleet])


def test_findings_are_the_same_with_and_without_deep_for_a_static_torch(m):
    """Two nodes of one fleet on torch 1.12.1+cu102: one has a system libnccl 2.18.3 besides.
    Audited with --deep both report the NCCL torch carries; without, the matrix's value must
    stand in for it, or the fleet sees NCCL skew that does not exist."""
    plain = {"n1": probe_facts(host="n1", nccl_seen=dict(SYSTEM_NCCL)), "n2": probe_facts(host="n2")}
    deep = {h: with_deep(f, m, "2.10.3", 7605) for h, f in plain.items()}
    for f in list(plain.values()) + list(deep.values()):
        derive_nccl(f, m)
        derive_cudnn(f, m)
    for h in plain:  # per host: the same findings; --deep may only settle checks that were skipped
        assert [x.code for x in judge(plain[h], m).findings] == [x.code for x in judge(deep[h], m).findings]
        assert {s.check for s in judge(deep[h], m).skipped} <= {s.check for s in judge(plain[h], m).skipped}
    assert fleet_codes(plain) == fleet_codes(deep) == []
    # without the matrix's value the two nodes would differ: the comparison can fail
    raw = {"n1": probe_facts(host="n1", nccl_seen=dict(SYSTEM_NCCL)), "n2": deep["n2"]}
    assert any(code.startswith("fleet-nccl-") for _, code, _ in fleet_codes(raw))


def test_a_statically_linked_nccl_the_matrix_does_not_know_is_unknown_not_the_system_one(m):
    f = probe_facts(torch="1.13.1+cu116", nccl_seen=dict(SYSTEM_NCCL))
    assert not m.torch_variant("1.13.1", "cu116").get("nccl")
    derive_nccl(f, m)
    assert f["nccl"]["version"] is None and f["nccl"]["ignored"]["version"] == "2.18.3"


# ---------------------------------------------------------------- the cuDNN torch loads

def test_the_cudnn_row_shows_system_and_pip_cudnn_and_which_one_torch_loads(m):
    f = probe_facts(torch="2.4.0+cu124", cudnn={
        "version": "8.9.7", "headers": [{"path": "/usr/include/cudnn_version.h", "version": "8.9.7"}],
        "libs": [{"path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "version": "8.9.7"}]})
    f["packages"]["nvidia-cudnn-cu12"] = {"version": "9.1.0.70", "location": "/venv/lib/python3.10/site-packages"}
    derive_cudnn(f, m)
    text = render_facts(f)
    assert "8.9.7 (system)" in text and "pip    nvidia-cudnn-cu12 9.1.0.70" in text
    assert "torch loads 9.1.0.70: pip package nvidia-cudnn-cu12" in text
    # the same system directory put on LD_LIBRARY_PATH: the loader finds it first
    f["env"] = {"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu"}
    derive_cudnn(f, m)
    assert f["cudnn"]["torch_loads"]["how"] == "shadow" and f["cudnn"]["torch_loads"]["version"] == "8.9.7"
    codes = [x.code for x in judge(f, m).findings]
    assert codes.count("cudnn-shadows-torch") == 1 and "cudnn-refused-by-torch" not in codes


def test_a_torch_before_1_13_loads_the_cudnn_its_wheel_carries_with_or_without_deep(m):
    plain = probe_facts(torch="1.12.1+cu113")
    loads = cudnn.torch_cudnn(plain, m)
    assert loads["how"] == "bundled" and loads["version"] == m.torch_variant("1.12.1", "cu113")["cudnn"]
    v = judge(plain, m)
    assert not [s for s in v.skipped if s.check == "cudnn_vs_torch"] and not by_code(v, "cudnn-refused-by-torch")
    deep = with_deep(plain, m, "2.10.3", 8200)
    assert cudnn.torch_cudnn(deep, m) == {"version": "8.2.0", "how": "deep",
                                          "from": "torch.backends.cudnn.version() (--deep)"}


# ---------------------------------------------------------------- driver floor and @needs

def test_stay_at_cuda_uses_the_runfiles_bundled_driver_as_the_floor(m):
    """Where Table 3 asks more than the runfile bundles (12.8.0 here, raised for the test), the
    bundled driver runs that toolkit: it is the newest this driver fully supports."""
    data = copy.deepcopy(m.data)
    rec = next(r for r in data["cuda"]["releases"] if r["version"] == "12.8.0")
    rec["min_driver"], rec["bundled_driver"] = "570.124.06", "570.86.10"
    raised = Matrix(data, m.path)
    assert _newest_supported(raised, "570.86.10") == "12.8.0"
    assert _newest_supported(raised, "570.86.09") == "12.6.3"
    v = judge(stack_facts(matrix=raised, driver="570.86.10", cuda="12.8.1"), raised)
    [f] = by_code(v, "driver-too-old-for-toolkit")
    assert "stay at CUDA <= 12.8.0" in f.fix


def test_a_cpu_torch_without_gpu_facts_is_a_skipped_check_not_silence(m):
    v = judge(stack_facts(matrix=m, torch="2.4.0+cpu"), m)
    [s] = [s for s in v.skipped if s.check == "torch_cpu_with_gpus"]
    assert "no GPU" in s.reason
    with_gpu = judge(stack_facts(matrix=m, torch="2.4.0+cpu", gpu="NVIDIA A100-SXM4-80GB"), m)
    assert by_code(with_gpu, "torch-cpu-build")


def test_a_facts_file_without_the_environment_skips_the_cudnn_shadow_check(m):
    f = probe_facts(torch="2.4.0+cu124")
    del f["env"]
    f["packages"]["nvidia-cudnn-cu12"] = {"version": "9.1.0.70"}
    assert [s for s in judge(f, m).skipped if s.check == "cudnn_shadows_torch"]
    f["env"] = {}
    assert not [s for s in judge(f, m).skipped if s.check == "cudnn_shadows_torch"]
