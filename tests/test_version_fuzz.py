"""The version parsers never raise anything but VersionError, whatever the text."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck.errors import VersionError
from envcheck.matrix import load_matrix
from envcheck.stack import stack_facts
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
