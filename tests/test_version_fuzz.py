"""The version parsers never raise anything but VersionError, whatever the text."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.errors import VersionError
from envcheck.matrix.load import load_matrix
from envcheck.facts.from_flags import stack_facts
from envcheck.versions import compare, cu_tag_to_version, parse_compute_capability, parse_torch, vkey
from tests.conftest import REPO

M = load_matrix(REPO / "compat_matrix.yaml")
texty = st.one_of(st.text(), st.from_regex(r"[0-9a-z.+_ -]{0,12}", fullmatch=True))


@settings(max_examples=300, deadline=None)
@given(texty)
def test_parsers_raise_only_version_error(s):
    for fn in (vkey, parse_torch, parse_compute_capability, lambda x: compare(x, "1.0")):
        try:
            fn(s)
        except VersionError:
            pass
    cu_tag_to_version(s)  # returns None on garbage


@settings(max_examples=200, deadline=None)
@given(texty, texty)
def test_matrix_queries_never_raise(a, b):
    M.find_cuda(a)
    M.driver_need(a)
    M.gcc_max(a)
    M.cudnn(a)
    M.torch(a)
    M.torch_variant(a, b)
    M.gpu(a)
    M.torchvision_known(a)


@settings(max_examples=200, deadline=None)
@given(texty)
def test_stack_flags_raise_only_version_error(s):
    for flag in ("driver", "cuda", "cudnn", "torch", "torchvision", "python", "gcc", "gpu"):
        try:
            stack_facts(matrix=M, **{flag: s})
        except VersionError:
            pass


_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 700), st.text(max_size=8),
                  st.sampled_from(["10.0.130", "410.48", "7.6.5", "1.1.0+cu100", "cu100", "/usr/local/cuda-10.0",
                                   "V100", "7.0", "eth0", "sm_70", "/usr/local/cuda", "3.7", "12.4"]))
_keys = st.sampled_from(["schema", "origin", "driver", "gpus", "cuda", "cudnn", "packages", "torch", "deep",
                         "gcc", "env", "interfaces", "python", "version", "name", "compute_capability",
                         "toolkits", "symlink", "nvcc", "path", "target", "libs", "local", "arch_list",
                         "torch_cuda", "PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "NCCL_SOCKET_IFNAME",
                         "GLOO_SOCKET_IFNAME", "nvidia-cudnn-cu12", "torchvision", "error", "cuda_source"])
_tree = st.recursive(_leaf, lambda ch: st.one_of(st.lists(ch, max_size=3), st.dictionaries(_keys, ch, max_size=5)),
                     max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_keys, _tree, max_size=8))
def test_rules_judge_malformed_facts_without_crashing(facts):
    from envcheck.rules import evaluate
    found = evaluate(facts, M)
    assert [f for f in found if f.code == "rule-crashed"] == []
