"""envcheck/rules/nccl.py, each rule called alone and each finding compared whole (severity, code,
component, message, fix, source), and torch_nccl's answer compared whole. The expected values come
from the module's docstrings (NCCL_SOCKET_IFNAME: comma-separated prefixes, '^' excludes them, '='
asks exact names, loopback only when named; Gloo takes exact names; torch >= 2.2 reads the TORCH_NCCL_*
names; which NCCL a torch build runs), docs/check-and-matrix.md (`nccl-ifname-missing`,
`gloo-ifname-missing`, `nccl-env-renamed`) and compat_matrix.yaml (the variants' bundled `nccl`, the
`nccl_env` and `torch_nccl_env` sources), not from what the code printed."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules.nccl import renamed_env, socket_ifname, torch_nccl

NAMES = ["lo", "eth0", "eth1", "ib0"]
SYSTEM = {"version": "2.18.3", "source": "libnccl", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}


def facts(env=None, names=NAMES, torch=None, nccl=None, **packages):
    """A probed host: its interfaces, environment, torch wheel (X.Y.Z or X.Y.Z+tag), the probe's own
    `nccl` answer and other packages (name=version)."""
    f = {"schema": 1, "origin": "probe", "hostname": "n1", "env": env or {},
         "interfaces": [{"name": n, "addresses": []} for n in names], "packages": {}}
    if torch:
        version, _, tag = torch.partition("+")
        f["packages"]["torch"] = {"version": torch}
        f["torch"] = {"version": version, "local": tag or None, "cuda": None, "cuda_source": None}
    for name, version in packages.items():
        f["packages"][name.replace("_", "-")] = {"version": version}
    if nccl is not None:
        f["nccl"] = nccl
    return f


def ifname_missing(spec, m, names=NAMES):
    return Finding(ERROR, "nccl-ifname-missing", "nccl",
                   f"NCCL_SOCKET_IFNAME={spec} matches no interface on this host (it has {', '.join(names)}): NCCL "
                   f"stops with 'NCCL WARN Bootstrap : no socket interface found'.",
                   "export NCCL_SOCKET_IFNAME=<the interface on the network the nodes share> "
                   "(`envcheck nccl-test HOSTS` suggests one)", m.data["sources"]["nccl_env"])


# ---------------------------------------------------------------- socket_ifname
@pytest.mark.parametrize("spec", [
    "eth", "eth0", "ib", "en,eth1", "lo", "=eth0", "=ib0,=eth9", "^eth", "^ib", "^=eth0", "eth0,,", "=lo",
])
def test_a_spec_that_matches_an_interface_is_no_finding(m, spec):
    assert socket_ifname(facts({"NCCL_SOCKET_IFNAME": spec}), m) == []


@pytest.mark.parametrize("spec,names", [
    ("bond", NAMES),                 # a prefix of none
    ("eth2", NAMES),
    ("=eth", NAMES),                 # exact: eth is no interface's whole name
    ("=th0", NAMES),
    ("^eth,ib", NAMES),              # every interface but lo excluded, and lo is never picked by exclusion
    ("^=eth0,eth1,ib0", NAMES),     # one '=' for the whole list, as NCCL reads it
    ("^ib,eth", NAMES),
    ("^bond", ["lo"]),               # only loopback left
    (",", NAMES),                    # no prefix at all
])
def test_a_spec_that_matches_no_interface_is_an_error(m, spec, names):
    assert socket_ifname(facts({"NCCL_SOCKET_IFNAME": spec}, names=names), m) == [ifname_missing(spec, m, names)]


def test_gloo_takes_exact_names_and_says_each_missing_one(m):
    found = socket_ifname(facts({"GLOO_SOCKET_IFNAME": "eth,eth1,,ib"}), m)
    assert found == [Finding(
        ERROR, "gloo-ifname-missing", "nccl",
        "GLOO_SOCKET_IFNAME=eth,eth1,,ib names eth, ib, which this host does not have (it has lo, eth0, eth1, ib0); "
        "Gloo takes exact names, not prefixes: init_process_group fails with 'Unable to find address for: eth'.",
        "export GLOO_SOCKET_IFNAME=<exact interface name on the shared network>", m.data["sources"]["nccl_env"])]
    assert socket_ifname(facts({"GLOO_SOCKET_IFNAME": "eth0,ib0"}), m) == []


def test_both_variables_wrong_give_both_findings_nccl_first(m):
    found = socket_ifname(facts({"GLOO_SOCKET_IFNAME": "eth9", "NCCL_SOCKET_IFNAME": "eth9"}), m)
    assert [x.code for x in found] == ["nccl-ifname-missing", "gloo-ifname-missing"]
    assert found[0] == ifname_missing("eth9", m)


@pytest.mark.parametrize("var", ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"])
def test_interfaces_not_collected_is_a_skipped_check_where_a_variable_is_set(m, var):
    assert socket_ifname(facts({var: "eth0"}, names=[]), m) == [
        Skipped("socket_ifname", "nccl", "network interfaces not collected",
                "audit the host (the probe lists its interfaces)")]
    assert socket_ifname(facts({"NCCL_DEBUG": "INFO"}, names=[]), m) == []
    assert socket_ifname(facts({}, names=NAMES), m) == []


def test_an_interface_without_a_name_is_not_one_of_the_host_s(m):
    f = facts({"NCCL_SOCKET_IFNAME": "eth"}, names=["lo"])
    f["interfaces"].append({"name": None})
    assert socket_ifname(f, m) == [ifname_missing("eth", m, ["lo"])]


# ---------------------------------------------------------------- renamed_env
def test_torch_2_2_with_an_old_name_is_a_warning(m):
    env = {"NCCL_BLOCKING_WAIT": "1"}
    assert renamed_env(facts(env, torch="2.2.0+cu121"), m) == [Finding(
        WARNING, "nccl-env-renamed", "nccl",
        "torch 2.2.0 reads TORCH_NCCL_BLOCKING_WAIT, not NCCL_BLOCKING_WAIT: it warns 'Environment variable "
        "NCCL_BLOCKING_WAIT is deprecated; use TORCH_NCCL_BLOCKING_WAIT instead'.",
        "export TORCH_NCCL_BLOCKING_WAIT=1; unset NCCL_BLOCKING_WAIT", m.data["sources"]["torch_nccl_env"])]


def test_several_old_names_are_said_in_one_finding_in_the_module_s_order(m):
    env = {"NCCL_DESYNC_DEBUG": "1", "NCCL_ENABLE_TIMING": "0", "NCCL_ASYNC_ERROR_HANDLING": "3",
           "NCCL_BLOCKING_WAIT": "1", "TORCH_NCCL_BLOCKING_WAIT": "1"}   # already renamed: not said
    assert renamed_env(facts(env, torch="2.4.1"), m) == [Finding(
        WARNING, "nccl-env-renamed", "nccl",
        "torch 2.4.1 reads TORCH_NCCL_ASYNC_ERROR_HANDLING, not NCCL_ASYNC_ERROR_HANDLING: it warns 'Environment "
        "variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead' "
        "(also NCCL_ENABLE_TIMING, NCCL_DESYNC_DEBUG).",
        "export TORCH_NCCL_ASYNC_ERROR_HANDLING=3; export TORCH_NCCL_ENABLE_TIMING=0; export TORCH_NCCL_DESYNC_DEBUG=1; "
        "unset NCCL_ASYNC_ERROR_HANDLING NCCL_ENABLE_TIMING NCCL_DESYNC_DEBUG", m.data["sources"]["torch_nccl_env"])]


def test_two_old_names_say_the_second_as_also(m):
    env = {"NCCL_DESYNC_DEBUG": "1", "NCCL_ASYNC_ERROR_HANDLING": "1"}
    assert renamed_env(facts(env, torch="2.4.1"), m) == [Finding(
        WARNING, "nccl-env-renamed", "nccl",
        "torch 2.4.1 reads TORCH_NCCL_ASYNC_ERROR_HANDLING, not NCCL_ASYNC_ERROR_HANDLING: it warns 'Environment "
        "variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead' "
        "(also NCCL_DESYNC_DEBUG).",
        "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1; export TORCH_NCCL_DESYNC_DEBUG=1; "
        "unset NCCL_ASYNC_ERROR_HANDLING NCCL_DESYNC_DEBUG", m.data["sources"]["torch_nccl_env"])]


@pytest.mark.parametrize("torch,env", [
    ("2.1.2+cu121", {"NCCL_BLOCKING_WAIT": "1"}),     # before 2.2 the old name is the right one
    ("1.13.1", {"NCCL_ASYNC_ERROR_HANDLING": "1"}),
    (None, {"NCCL_BLOCKING_WAIT": "1"}),             # no torch
    ("2.4.1", {"TORCH_NCCL_BLOCKING_WAIT": "1", "NCCL_DEBUG": "INFO"}),
])
def test_no_rename_warning(m, torch, env):
    assert renamed_env(facts(env, torch=torch), m) == []


# ---------------------------------------------------------------- torch_nccl
def test_a_torch_1_x_cuda_build_runs_the_nccl_its_variant_bundles(m):
    # compat_matrix.yaml: torch 1.9.0+cu102 bundles NCCL 2.7.8 (linked statically before 2.0)
    assert torch_nccl(facts(torch="1.9.0+cu102", nccl=dict(SYSTEM)), m) == {
        "version": "2.7.8", "source": "matrix", "note": "linked statically into torch 1.9.0+cu102", "ignored": SYSTEM}
    # the plain PyPI 1.9.0 is the cu102 build, and nothing else found on the host: nothing ignored
    assert torch_nccl(facts(torch="1.9.0", nccl={"version": None, "source": None}), m) == {
        "version": "2.7.8", "source": "matrix", "note": "linked statically into torch 1.9.0"}


def test_a_torch_1_x_variant_whose_nccl_the_matrix_does_not_know(m):
    # 1.9.0+cu111 names no nccl; the probe's extra keys are not carried into "ignored"
    probe = dict(SYSTEM, error=None, note="x")
    assert torch_nccl(facts(torch="1.9.0+cu111", nccl=probe), m) == {
        "version": None, "source": None,
        "note": "linked statically into torch 1.9.0+cu111; the matrix does not know which version", "ignored": SYSTEM}


def test_a_later_torch_loads_its_nccl_wheel_before_a_system_libnccl(m):
    f = facts(torch="2.1.0+cu121", nccl=dict(SYSTEM), nvidia_nccl_cu12="2.18.1", nvidia_cudnn_cu12="8.9.2.26")
    assert torch_nccl(f, m) == {"version": "2.18.1", "source": "wheel", "ignored": SYSTEM}
    f = facts(torch="2.1.0+cu121", nccl={"version": None}, nvidia_nccl_cu12="2.18.1")
    assert torch_nccl(f, m) == {"version": "2.18.1", "source": "wheel"}
    # two wheels: the first by name
    f = facts(torch="2.1.0+cu121", nccl={}, nvidia_nccl_cu12="2.18.1", nvidia_nccl_cu11="2.14.3")
    assert torch_nccl(f, m) == {"version": "2.14.3", "source": "wheel"}


@pytest.mark.parametrize("torch,nccl,packages", [
    ("1.9.0+cu102", {"version": "2.7.8", "source": "torch"}, {}),         # --deep's answer stands
    ("2.1.0+cu121", {"version": "2.18.1", "source": "torch"}, {"nvidia_nccl_cu12": "2.18.1"}),
    ("1.9.0+cpu", dict(SYSTEM), {}),                                      # a CPU build runs no NCCL
    ("1.9.0+git1234", dict(SYSTEM), {}),                                 # a build of unknown variant
    ("2.1.0+cu121", dict(SYSTEM), {}),                                    # no wheel: the probe's answer
    ("2.1.0+cu121", {"version": "2.18.1", "source": "wheel"}, {"nvidia_nccl_cu12": "2.18.1"}),   # found already
    ("2.1.0+cu121", dict(SYSTEM), {"nvidia_nccl_cu12": None}),           # a wheel of no version
    ("2.0.0+cu117", dict(SYSTEM), {"nvidia_cudnn_cu11": "8.5.0.96"}),     # 2.0 is no longer static
    (None, dict(SYSTEM), {"nvidia_nccl_cu12": "2.18.1"}),                 # no torch
])
def test_the_probe_s_answer_is_kept(m, torch, nccl, packages):
    assert torch_nccl(facts(torch=torch, nccl=nccl, **packages), m) is None


def test_a_torch_version_written_with_two_parts_is_that_release(m):
    # `--torch 2.2` is 2.2.0: the new names apply; `2.0` is 2.0.0, which no longer links NCCL statically
    assert renamed_env(facts({"NCCL_BLOCKING_WAIT": "1"}, torch="2.2"), m) == [Finding(
        WARNING, "nccl-env-renamed", "nccl",
        "torch 2.2 reads TORCH_NCCL_BLOCKING_WAIT, not NCCL_BLOCKING_WAIT: it warns 'Environment variable "
        "NCCL_BLOCKING_WAIT is deprecated; use TORCH_NCCL_BLOCKING_WAIT instead'.",
        "export TORCH_NCCL_BLOCKING_WAIT=1; unset NCCL_BLOCKING_WAIT", m.data["sources"]["torch_nccl_env"])]
    assert torch_nccl(facts(torch="2.0+cu117", nccl=dict(SYSTEM)), m) is None
