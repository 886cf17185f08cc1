"""Forward compatibility as a fact: a data-center GPU on an older driver branch runs a newer CUDA
only with NVIDIA's cuda-compat libraries loaded (https://docs.nvidia.com/deploy/cuda-compatibility/
forward-compatibility.html). `check --cuda-compat none|X.Y` (or the probe's cuda_compat facts)
says whether they are; without it the verdict stays a warning and the check is listed as skipped."""
from __future__ import annotations

import pytest

from envcheck.errors import VersionError
from envcheck.facts.from_flags import stack_facts
from envcheck.model import ERROR, INFO, WARNING, VERIFIED
from envcheck.rules import judge

# pytorch/pytorch#43058: pip's torch 1.6.0 (CUDA 10.2) on V100s with driver 418.67 on a bare server
STACK = dict(torch="1.6.0", gpu="Tesla V100-PCIE-16GB", driver="418.67", python="3.7")


def verdict(m, **kw):
    v = judge(stack_facts(matrix=m, **kw), m)
    return [f for f in v.findings if f.component == "driver"], v.skipped


@pytest.mark.parametrize("compat,severity,code", [
    (None, WARNING, "driver-too-old-for-torch"),      # unknown: a warning, and the check skipped
    ("none", ERROR, "driver-too-old-for-torch"),      # known absent: what the thread saw
    ("10.2", INFO, "driver-forward-compat"),          # cuda-compat-10-2 loaded: runs, said in a note
    ("440.33.01", INFO, "driver-forward-compat"),     # the same, by its libcuda's driver version
    ("10.1", ERROR, "driver-too-old-for-torch"),      # a compat package older than torch's CUDA
])
def test_the_verdict_follows_what_is_known_of_cuda_compat(m, compat, severity, code):
    found, skipped = verdict(m, **STACK, **({"cuda_compat": compat} if compat else {}))
    assert [(f.severity, f.code) for f in found] == [(severity, code)]
    assert any(s.check.endswith("_cuda_compat") for s in skipped) == (compat is None)
    if compat == "10.1":
        assert "serves CUDA <= 10.1" in found[0].message


def test_a_known_absent_compat_is_an_error_whose_fixes_are_tried(m):
    found, _ = verdict(m, **STACK, cuda_compat="none")
    e = found[0]
    assert "no cuda-compat library is loaded" in e.message and "insufficient" in e.message
    assert e.fix_check.status == VERIFIED and e.fix_check.edits == (("driver", "440.33"),)
    assert [r.edits for r in e.remedies][1] == (("cuda_compat", "10.2"),)  # the other way out, as data
    assert "cuda-compat-10-2" in e.remedies[1].fix and "/usr/local/cuda-10.2/compat" in e.remedies[1].fix


def test_installed_but_not_loaded_says_so(m):
    f = stack_facts(matrix=m, **STACK)
    f["cuda_compat"] = {"version": None, "path": None, "via": None,
                        "installed": [{"path": "/usr/local/cuda-10.2/compat/libcuda.so.440.33.01", "version": "440.33.01"}]}
    e = [x for x in judge(f, m).findings if x.code == "driver-too-old-for-torch"][0]
    assert e.severity == ERROR and "installed (/usr/local/cuda-10.2/compat/libcuda.so.440.33.01)" in e.message


def test_compat_changes_nothing_where_forward_compatibility_does_not_apply(m):
    # a GeForce board: no forward compatibility whatever is loaded; a driver new enough: nothing to say
    for kw in (dict(STACK, gpu="GeForce RTX 2080 Ti"), dict(STACK, driver="440.33.01")):
        before = [(f.severity, f.code) for f in verdict(m, **kw)[0]]
        assert before == [(f.severity, f.code) for f in verdict(m, **kw, cuda_compat="10.2")[0]]


@pytest.mark.parametrize("text", ["yes", "10", "12.4.1.2", "sm_80", "1.2.3.4"])
def test_an_unreadable_cuda_compat_is_a_usage_error(m, text):
    with pytest.raises(VersionError) as e:
        stack_facts(matrix=m, cuda_compat=text)
    assert "--cuda-compat" in e.value.message
