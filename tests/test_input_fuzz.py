"""Every parser of user text (versions, hostlists, host targets, sizes, durations, URLs, staging
directories, JSON and YAML documents) raises nothing but the usage error, whatever the text:
no ValueError, RecursionError, MemoryError or UnicodeError escapes to the user as a traceback."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck import inputs
from envcheck.allreduce.bandwidth import parse_size
from envcheck import params as P
from envcheck.errors import UsageError
from envcheck.hostlist import expand_hostlist, parse_targets
from envcheck.install.cuda_source import check_url
from envcheck.install.staging import check_tmpdir
from envcheck.versions import parse_compute_capability, parse_torch, strict_version, vkey

# plain text, text shaped like the input it feeds (so the deeper branches are reached), and
# the characters that broke things before: full-width digits, brackets, huge numbers
texty = st.one_of(
    st.text(),
    st.from_regex(r"[0-9a-z.,@:\[\]\-]{0,40}", fullmatch=True),
    st.from_regex(r"[a-z]{1,4}\[[0-9]{1,7}-[0-9]{1,7}\](\[[0-9]{1,6}-[0-9]{1,6}\])?", fullmatch=True),
    st.from_regex(r"[0-9]{1,5000}(\.[0-9]{0,3}){0,3}[KMGkmg]?", fullmatch=True),
    st.text(alphabet="０１２３４５６７８９.[]-,", max_size=20),
)

PARSERS = [
    lambda s: vkey(s), lambda s: strict_version(s, "--cuda"), parse_torch, parse_compute_capability,
    expand_hostlist, lambda s: parse_targets([s]), lambda s: parse_targets(s.split(" ")), parse_size,
    lambda s: check_url(s, "--url"), lambda s: check_tmpdir(s),
    lambda s: inputs.parse_json(s, "facts", "fix"), lambda s: inputs.parse_yaml(s, "playbook", "fix"),
]


@settings(max_examples=400, deadline=None)
@given(texty)
def test_every_text_parser_raises_only_the_usage_error(s):
    for parse in PARSERS:
        try:
            parse(s)
        except UsageError:
            pass


# every declared input (envcheck/params/catalog.py) that does not name a local path: those
# are exercised against real files in tests/cli/test_every_option.py
DECLARED = [v for v in vars(P).values() if isinstance(v, P.Param) and not v.kind.startswith(("local-", "out-"))]
NUMERIC = [p for p in DECLARED if p.kind in ("int", "float", "seconds")]


def test_every_numeric_input_has_an_upper_bound():
    assert len(NUMERIC) > 15
    assert [p.key for p in NUMERIC if p.hi is None or p.lo is None] == []


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 30, 10 ** 30),
                 texty, st.booleans(), st.none()))
def test_every_declared_input_raises_only_the_usage_error_and_keeps_its_bounds(x):
    import math
    for p in DECLARED:
        try:
            v = p.parse(x)
        except UsageError:
            continue
        if p.kind in ("int", "float", "seconds") and v is not None:
            assert math.isfinite(v) and p.lo <= v <= p.hi, (p.key, x, v)


def test_the_declarations_do_refuse_what_they_must():
    for p, bad in ((P.COMMAND_TIMEOUT, "nan"), (P.INSTALL_TIMEOUT, "0"), (P.CONNECT_TIMEOUT, "inf"),
                   (P.MASTER_PORT, "70000"), (P.MIN_BUSBW, "nan"), (P.GRACE, "inf"),
                   (P.GRACE, "100000000"), (P.NPROC_PER_NODE, "100000"), (P.NPROC_PER_NODE, "1e20"),
                   (P.RUN_TIMEOUT, "1e400"), (P.PORT, "0"), (P.FORKS, "-1")):
        try:
            p.parse(bad)
        except UsageError:
            continue
        raise AssertionError(f"{p.name} {bad} was accepted")
    assert P.COMMAND_TIMEOUT.parse("60") == 60.0 and P.MASTER_PORT.parse("29500") == 29500
    assert P.MIN_BUSBW.parse(0.0) == 0.0 and P.GRACE.parse("0") == 0.0


def test_a_number_longer_than_python_reads_is_a_usage_error_in_yaml_and_json():
    import pytest
    for parse in (lambda s: inputs.parse_yaml(s, "playbook", "fix"), lambda s: inputs.parse_json(s, "facts", "fix")):
        with pytest.raises(UsageError):
            parse("9" * 5000)
