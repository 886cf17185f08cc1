"""Every parser of user text (versions, hostlists, host targets, sizes, durations, URLs, staging
directories, JSON and YAML documents) raises nothing but the usage error, whatever the text:
no ValueError, RecursionError, MemoryError or UnicodeError escapes to the user as a traceback."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from envcheck import inputs
from envcheck.allreduce.bandwidth import parse_size
from envcheck.cli.common import check_numbers
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


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 30, 10 ** 30))
def test_durations_ports_and_thresholds_raise_only_the_usage_error(x, n):
    for params in ({"timeout": x}, {"run_timeout": x}, {"connect_timeout": x}, {"min_busbw": x},
                   {"master_port": n}, {"port": n}):
        try:
            check_numbers(params)
        except UsageError:
            pass


def test_the_checks_do_refuse_what_they_must():
    for bad in ({"timeout": float("nan")}, {"install_timeout": 0.0}, {"connect_timeout": float("inf")},
                {"master_port": 70000}, {"min_busbw": float("nan")}):
        try:
            check_numbers(bad)
        except UsageError:
            continue
        raise AssertionError(f"{bad} was accepted")
    check_numbers({"timeout": 60.0, "master_port": 29500, "min_busbw": 0.0})
