"""The registry's own promises (envcheck/rules/__init__.py), with stand-in rules put in REGISTRY:
an unreadable version is a Skipped check pointing at the *-unknown finding, any other crash is a
`rule-crashed` warning plus a Skipped check (one host's odd facts never stop an audit), both
filed under the rule module's component (`env` for a module that is no component), a rule
lacking the env section on a stack given by flags is not applicable (not skipped), and the
findings come out errors first. Each answer is compared whole, written from the docstrings."""
from __future__ import annotations

import pytest

import envcheck.rules as rules
from envcheck.errors import VersionError
from envcheck.facts.from_flags import stack_facts
from envcheck.model import ERROR, INFO, WARNING, Finding, Skipped
from envcheck.rules.common import needs


def _rule(name, module, body, *needed):
    def rule(facts, matrix):
        return body()
    rule.__name__, rule.__qualname__, rule.__module__ = name, name, module
    return needs(*needed)(rule) if needed else rule


def _raise(e):
    def body():
        raise e
    return body


@pytest.fixture
def registry(monkeypatch):
    def use(*rs):
        monkeypatch.setattr(rules, "REGISTRY", list(rs))
    return use


FACTS = {"schema": 1, "origin": "flags"}


def test_an_unreadable_version_is_a_skipped_check_naming_the_unknown_finding(registry, m):
    registry(_rule("cudnn_vs_x", "envcheck.rules.cudnn", _raise(VersionError("bad version '7.x'"))))
    got = rules.judge(FACTS, m)
    assert got.findings == []
    assert got.skipped == [Skipped("cudnn_vs_x", "cudnn", "a version in the facts cannot be read",
                                   "see the *-unknown finding")]


def test_a_crash_is_a_warning_and_a_skipped_check_never_a_traceback(registry, m):
    after = Finding(INFO, "after", "gcc", "the rule after the crash still ran")
    registry(_rule("torch_vs_y", "envcheck.rules.torch", _raise(KeyError("variants"))),
             _rule("next_rule", "envcheck.rules.gcc", lambda: [after]))
    got = rules.judge(FACTS, m)
    assert got.findings[1:] == [after]
    assert got.findings[:1] == [Finding(
        WARNING, "rule-crashed", "torch",
        "envcheck's torch_vs_y rule could not judge these facts (KeyError: 'variants'); the torch checks are "
        "incomplete for this host.", "report this with the facts file (envcheck audit --json)", "")]
    assert got.skipped == [Skipped("torch_vs_y", "torch", "the rule crashed", "report it")]


@pytest.mark.parametrize("module, component", [
    ("envcheck.rules.gcc", "gcc"), ("envcheck.rules.driver", "driver"), ("envcheck.rules.health", "health"),
    # modules that are no component of a finding: their checks are filed under env
    ("envcheck.rules.driver_state", "env"), ("envcheck.rules.fabric", "env"), ("envcheck.rules.fixcheck", "env"),
])
def test_a_rule_is_filed_under_its_modules_component_or_env(registry, m, module, component):
    registry(_rule("r", module, _raise(VersionError("x"))), _rule("s", module, _raise(ValueError("y"))))
    got = rules.judge(FACTS, m)
    assert [(s.check, s.component) for s in got.skipped] == [("r", component), ("s", component)]
    assert [f.component for f in got.findings] == [component]


def test_lacking_env_on_a_flags_stack_is_not_applicable_but_on_a_host_is_skipped(registry, m):
    ran = []
    registry(_rule("env_rule", "envcheck.rules.env", lambda: ran.append(1) or [], "env"))
    assert rules.judge(FACTS, m).skipped == [] and ran == []
    host = {"schema": 1, "origin": "probe"}
    skipped = rules.judge(host, m).skipped
    assert [(s.check, s.component) for s in skipped] == [("env_rule", "env")] and ran == []


def test_what_rules_return_is_split_into_findings_errors_first_and_skipped(registry, m):
    info = Finding(INFO, "i", "gcc", "an info")
    err = Finding(ERROR, "e", "cuda", "an error")
    warn = Finding(WARNING, "w", "nccl", "a warning")
    skip = Skipped("own", "cuda", "no arch list", "audit --deep")
    registry(_rule("a", "envcheck.rules.gcc", lambda: [info, skip]), _rule("b", "envcheck.rules.cuda",
                                                                            lambda: [warn, err]))
    got = rules.judge(FACTS, m, verify_fixes=False)
    assert got.findings == [err, warn, info] and got.skipped == [skip]
    assert rules.evaluate(FACTS, m) == [err, warn, info]


def test_judge_tries_each_errors_fix_and_evaluate_only_when_asked(m):
    # CUDA 12.4 on driver 410.48: an error whose fixes judge() tries before offering them
    facts = stack_facts(matrix=m, driver="410.48", cuda="12.4")
    judged = [f for f in rules.judge(facts, m).findings if f.severity == ERROR]
    assert judged and all(f.remedies and f.fix_check is not None for f in judged)
    plain = [f for f in rules.evaluate(facts, m) if f.severity == ERROR]
    assert [f.code for f in plain] == [f.code for f in judged] and all(f.fix_check is None for f in plain)
    asked = [f for f in rules.evaluate(facts, m, verify_fixes=True) if f.severity == ERROR]
    assert [(f.code, f.fix_check) for f in asked] == [(f.code, f.fix_check) for f in judged]
