"""A fix is tried before it is offered (envcheck/rules/fixcheck.py): each error's remedy is applied
to a copy of the facts (envcheck/facts/edit.py) and the real rules run again over the real
compat_matrix.yaml. Stacks are those of public reports (tests/cases/real-stacks.jsonl) or the
probe-shaped facts of tests/rules/test_rules.py."""
from __future__ import annotations

import copy
from dataclasses import replace
import json

import pytest

from envcheck.facts import edit
from envcheck.facts.from_flags import stack_facts
from envcheck.model import (ERROR, EXTENDED, INFO, NO_FIX, REPLACED, UNVERIFIED, VERIFIED, WARNING, Finding,
                            FixCheck)
from envcheck.rules import fixcheck, judge, remedy
from envcheck.rules.common import torch_install_cmd
from tests.rules.test_real_stacks import load_cases, stack_kwargs
from tests.rules.test_rules import probe_facts


def errors(m, facts):
    return [f for f in judge(facts, m).findings if f.severity == ERROR]


def one(found, code):
    hits = [f for f in found if f.code == code]
    assert len(hits) == 1, [(f.code, f.message) for f in found]
    return hits[0]


def codes_after(m, facts, edits):
    """The error codes once the fix's edits are made, the rules run without verification."""
    f = facts
    for k, v in edits.items():
        f = edit.apply(f, remedy.Remedy("t", "t", ((k, v),)), m)
    return {x.code for x in judge(f, m, verify_fixes=False).findings if x.severity == ERROR}


# ---------------------------------------------------------------- apply()
def test_applying_a_fix_leaves_the_facts_it_was_given_unchanged(m):
    f = probe_facts(deep={"arch_list": ["sm_37", "sm_50"], "torch_cuda": "10.0.130", "cudnn": 7605})
    before = copy.deepcopy(f)
    for r in (remedy.toolkit("11.8.0", "", ""), remedy.driver("520.61.05", "", ""), remedy.compiler(11, "", ""),
              remedy.wheel(m, "2.0.1", "cu118", "", ""), remedy.cudnn("8.9.7", "", ""),
              remedy.env("LD_LIBRARY_PATH", "", "", ""), remedy.python("3.10", "", "")):
        after = edit.apply(f, r, m)
        assert after != f, r.label
        assert f == before, r.label


def test_installing_a_toolkit_points_nvcc_cuda_home_path_and_the_symlink_at_it(m):
    after = edit.apply(probe_facts(), remedy.toolkit("11.8.0", "", ""), m)
    c = after["cuda"]
    assert c["version"] == "11.8.0" and c["nvcc"]["path"] == "/usr/local/cuda-11.8/bin/nvcc"
    assert {t["path"] for t in c["toolkits"]} == {"/usr/local/cuda-10.0", "/usr/local/cuda-11.8"}
    assert c["symlink"]["target"] == "/usr/local/cuda-11.8"
    assert after["env"]["CUDA_HOME"] == "/usr/local/cuda-11.8"
    assert after["env"]["PATH"].split(":")[0] == "/usr/local/cuda-11.8/bin"
    assert after["env"]["LD_LIBRARY_PATH"] == "/usr/local/cuda-11.8/lib64"
    # the cuDNN copied into the old toolkit stays there: the new one has none
    assert after["cudnn"]["version"] is None
    # nvcc 11.8 runs the gcc on PATH (7.5.0 here)
    assert c["nvcc"]["host_compiler"]["version"] == "7.5.0"


def test_a_new_toolkit_drops_the_compiler_debians_nvcc_profile_chose_but_keeps_ccbin(m):
    f = probe_facts()
    f["gcc"] = {"version": "12.2.0", "path": "/usr/bin/gcc"}
    f["cuda"]["nvcc"]["host_compiler"] = {"path": "/usr/lib/nvidia-cuda-toolkit/bin/gcc", "version": "11.3.0",
                                         "how": "nvcc.profile PATH"}
    assert edit.apply(f, remedy.toolkit("11.7.1", "", ""), m)["cuda"]["nvcc"]["host_compiler"]["version"] == "12.2.0"
    f["cuda"]["nvcc"]["host_compiler"]["how"] = "-ccbin in NVCC_PREPEND_FLAGS"
    assert edit.apply(f, remedy.toolkit("11.7.1", "", ""), m)["cuda"]["nvcc"]["host_compiler"]["version"] == "11.3.0"


def test_the_wheel_that_is_installed_already_changes_nothing(m):
    f = probe_facts()  # torch 1.1.0 that reports CUDA 10.0: the cu100 build
    assert edit.apply(f, remedy.wheel(m, "1.1.0", "cu100", "", ""), m) == f
    assert edit.apply(f, remedy.wheel(m, "1.1.0", "cu90", "", ""), m) != f
    flags = stack_facts(torch="2.4.0+cu124", torchvision="0.19.0+cu124", matrix=m)
    assert edit.apply(flags, remedy.wheel(m, "2.4.0", "cu124", "", ""), m) == flags


def test_another_build_of_the_installed_release_is_installed_with_force(m):
    # pip: 'Requirement already satisfied: torch==2.4.0 in ... (2.4.0+cu124)' without it
    assert torch_install_cmd(m, "2.4.0", "cu118", "2.4.0+cu124").startswith("pip install --force-reinstall torch==2.4.0 ")
    assert "--force-reinstall" not in torch_install_cmd(m, "2.4.0", "cu118", "2.3.1+cu121")
    # a pin with +tag already says which build
    assert "--force-reinstall" not in torch_install_cmd(m, "1.12.1", "cu113", "1.12.1+cu102")


# ---------------------------------------------------------------- verification
def test_cuda_11_7_on_a_gcc_12_host_is_extended_with_gcc_11(m):
    # torch 1.13.1+cu117 beside CUDA 12.1 and gcc 12.1.0: the fix installs CUDA 11.7, whose
    # host_config.h refuses gcc 12 (NVlabs/tiny-cuda-nn#109: CUDA 11.7 with gcc 12.1.0)
    f = stack_facts(torch="1.13.1+cu117", cuda="12.1", gcc="12.1.0", gpu="NVIDIA A100-SXM4-80GB",
                    driver="535.104.05", matrix=m)
    e = one(errors(m, f), "nvcc-torch-major-mismatch")
    assert e.fix_check.status == EXTENDED
    assert e.fix_check.steps == ("install CUDA 11.7.1", "install gcc-11")
    assert e.fix_check.notes == ("CUDA 11.7.1 needs gcc <= 11: install gcc-11 too",)
    assert "CUDA 11.7.1 needs gcc <= 11, so also: install gcc-11 g++-11" in e.fix
    # and the extended fix is clean where the plain one is not
    assert "gcc-too-new" in codes_after(m, f, {"cuda": "11.7.1"})
    assert not codes_after(m, f, dict(e.fix_check.edits)) & {"gcc-too-new", "nvcc-torch-major-mismatch"}


def test_a_driver_too_old_for_the_toolkit_gets_a_verified_upgrade(m):
    # pytorch/pytorch#112553: driver 470.182.03 with a CUDA 12.1 stack
    f = stack_facts(torch="2.1.0+cu121", cuda="12.1", driver="470.182.03", python="3.11",
                    gpu="NVIDIA GeForce RTX 3090", matrix=m)
    for code in ("driver-too-old-for-toolkit", "driver-too-old-for-torch"):
        e = one(errors(m, f), code)
        assert e.fix_check.status == VERIFIED and e.fix_check.edits == (("driver", "530.30.02"),)
        assert e.fix == "upgrade the NVIDIA driver to >= 530.30.02"
    assert not codes_after(m, f, {"driver": "530.30.02"})
    # a data-center GPU on a forward-compatible branch: a warning, whose upgrade is verified too
    f = stack_facts(torch="2.1.0+cu121", cuda="12.1", driver="470.182.03", python="3.11",
                    gpu="NVIDIA A100-SXM4-80GB", matrix=m)
    for code in ("driver-too-old-for-toolkit", "driver-too-old-for-torch"):
        w = one(judge(f, m).findings, code)
        assert w.severity == WARNING and w.fix_check.status == VERIFIED and "cuda-compat" in w.fix


def test_a_driver_upgrade_a_kepler_gpu_cannot_take_is_replaced_by_an_older_toolkit(m):
    f = stack_facts(driver="460.32.03", cuda="12.1", gpu="Tesla K80", gcc="9.4.0", matrix=m)
    e = one(errors(m, f), "driver-too-old-for-toolkit")
    assert e.fix_check.status == REPLACED
    assert e.fix_check.steps == ("install CUDA 11.2.2",)
    assert "instead of upgrade the NVIDIA driver to >= 530.30.02" in e.fix and "[driver-too-new-for-gpu]" in e.fix
    assert "driver-too-new-for-gpu" in codes_after(m, f, {"driver": "530.30.02"})
    assert "driver-too-old-for-toolkit" not in codes_after(m, f, {"cuda": "11.2.2"})


def test_a_cu118_wheel_for_an_sm_120_gpu_is_replaced_by_a_matching_toolkit(m):
    # nvcc 11.8 beside torch 2.7.0+cu128 on an RTX 5090: making torch match nvcc (the cu118
    # build) leaves sm_120 without kernels, so the toolkit is made to match torch instead
    f = stack_facts(torch="2.7.0+cu128", cuda="11.8", gpu="NVIDIA GeForce RTX 5090", driver="570.133.07",
                    gcc="11.4.0", python="3.11", matrix=m)
    e = one(errors(m, f), "nvcc-torch-major-mismatch")
    assert e.fix_check.status == REPLACED
    assert e.fix_check.steps == ("install CUDA 12.8.2",)
    assert "instead of install torch 2.7.0+cu118" in e.fix and "[gpu-no-kernel]" in e.fix
    assert "gpu-no-kernel" in codes_after(m, f, {"torch": "2.7.0+cu118"})


def test_the_corpus_no_kernel_case_gets_a_verified_build_for_its_gpu(m):
    (case,) = [c for c in load_cases() if c["id"] == "pytorch-167244"]
    e = one(errors(m, stack_facts(matrix=m, **stack_kwargs(case))), "gpu-no-kernel")
    assert e.fix_check.status == VERIFIED and e.fix_check.steps == ("install torch 2.7.0+cu128",)
    assert e.fix == "pip install --force-reinstall torch==2.7.0 torchvision==0.22.0 --index-url " \
                    "https://download.pytorch.org/whl/cu128"


def test_reinstalling_the_installed_wheel_is_not_offered(m):
    # torch 1.1.0 (the cu100 build) says its arch list lacks the V100's sm_70: the matrix's own
    # candidate, 1.1.0+cu100, is that very wheel
    f = probe_facts(deep={"arch_list": ["sm_37", "sm_50"], "torch_cuda": "10.0.130"})
    e = one(errors(m, f), "gpu-no-kernel")
    assert e.remedies[0].label == "install torch 1.1.0+cu100"
    assert e.fix_check.status == REPLACED
    assert e.fix_check.notes[0] == "instead of install torch 1.1.0+cu100: it changes nothing: it is what the host has already"
    assert e.fix_check.steps[0] != "install torch 1.1.0+cu100"


def test_a_finding_whose_every_fix_changes_nothing_offers_none(m):
    f = stack_facts(torch="2.4.0+cu124", torchvision="0.19.0+cu124", gpu="NVIDIA H100 80GB HBM3", matrix=m)
    same = remedy.wheel(m, "2.4.0", "cu124", "", torch_install_cmd(m, "2.4.0", "cu124", "2.4.0+cu124"))
    fd = Finding(ERROR, "gpu-no-kernel", "gpu", "as if", same.fix, remedies=(same,))
    (out,) = fixcheck.verify(f, m, [fd], lambda x: judge(x, m, verify_fixes=False).findings)
    assert out.fix_check.status == NO_FIX and out.fix.startswith("none that changes anything: install torch 2.4.0+cu124")


def test_a_fix_that_cannot_be_made_clean_is_marked_unverified_with_the_reason(m):
    # K80 with torch 2.1.0: an R470 driver is too old for CUDA 12.1, and no torch 2.1 build runs on sm_37
    f = stack_facts(torch="2.1.0+cu121", cuda="12.1", gpu="Tesla K80", driver="535.104.05", gcc="12.2.0", matrix=m)
    e = one(errors(m, f), "driver-too-new-for-gpu")
    assert e.fix_check.status == UNVERIFIED and "(unverified: it brings " in e.fix
    assert json.loads(json.dumps(e.to_dict()))["fix_check"]["verified"] is False


def test_verification_is_bounded(m):
    runs = []

    def run(f):
        runs.append(1)
        return judge(f, m, verify_fixes=False).findings

    f = probe_facts(deep={"arch_list": ["sm_37"], "torch_cuda": "10.0.130"},
                    gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090"}], driver={"version": "410.48"})
    found = judge(f, m, verify_fixes=False).findings
    fixcheck.verify(f, m, found, run)
    assert 0 < len(runs) <= fixcheck.BUDGET


def test_every_remedy_over_the_corpus_names_known_edits_and_applies(m):
    seen = 0
    for case in load_cases():
        f = stack_facts(matrix=m, **stack_kwargs(case))
        for x in judge(f, m, verify_fixes=False).findings:
            for r in x.remedies:
                assert {k.partition(":")[0] for k, _ in r.edits} <= set(edit.KINDS), r
                assert r.label and r.fix, r
                edit.apply(f, r, m)
                seen += 1
    assert seen >= 20


def test_a_fix_offered_with_a_warning_goes_through_the_same_check(m):
    """Issue 21, item 2: a warning's fix is tried as an error's is (here torch's own build brings
    the torchvision that matches it); a warning without remedies is left as the rule gave it."""
    f = stack_facts(torch="2.4.0+cu124", torchvision="0.19.0+cu121", matrix=m)
    (w,) = [x for x in judge(f, m).findings if x.code == "torchvision-cuda-mismatch"]
    assert w.fix_check is not None and w.fix_check.status == "verified"
    f = stack_facts(cuda="11.0", gpu="sm_86", matrix=m)
    (w,) = [x for x in judge(f, m).findings if x.code == "gpu-arch-too-new-for-toolkit"]
    assert w.severity == "warning" and w.fix_check.status == "verified" and "TORCH_CUDA_ARCH_LIST" in w.fix
    f = stack_facts(driver="535.54.03", cuda="12.4", matrix=m)  # minor-version compatibility: text only
    (w,) = [x for x in judge(f, m).findings if x.code == "driver-too-old-for-toolkit"]
    assert w.severity == "warning" and w.fix_check is None and "fix_check" not in w.to_dict()


# ---- each remedy constructor whole: label, fix, edits and why (each seen to fail on a planted
# change: bench/mutation.py); the torchvision pin as pip names it, on either side of torch 1.2

@pytest.mark.parametrize("made,whole", [
    (lambda: remedy.driver("550.54.15", "FIX", "WHY"),
     remedy.Remedy("upgrade the NVIDIA driver to 550.54.15", "FIX", (("driver", "550.54.15"),), "WHY")),
    (lambda: remedy.driver("550.54.15", "FIX", "WHY", label="install driver 550"),
     remedy.Remedy("install driver 550", "FIX", (("driver", "550.54.15"),), "WHY")),
    (lambda: remedy.toolkit("12.4.1", "FIX", "WHY"), remedy.Remedy("install CUDA 12.4.1", "FIX", (("cuda", "12.4.1"),), "WHY")),
    (lambda: remedy.compiler(11, "FIX", "WHY"), remedy.Remedy("install gcc-11", "FIX", (("host_compiler", "11"),), "WHY")),
    (lambda: remedy.cudnn("8.9.7", "FIX", "WHY"), remedy.Remedy("install cuDNN 8.9.7", "FIX", (("cudnn", "8.9.7"),), "WHY")),
    (lambda: remedy.loaded_cudnn("8.9.7", "FIX", "WHY"),
     remedy.Remedy("let torch load cuDNN 8.9.7", "FIX", (("loaded_cudnn", "8.9.7"),), "WHY")),
    (lambda: remedy.package("numpy", "1.26.4", "FIX", "WHY"),
     remedy.Remedy("install numpy 1.26.4", "FIX", (("numpy", "1.26.4"),), "WHY")),
    (lambda: remedy.python("3.10", "FIX", "WHY"), remedy.Remedy("use Python 3.10", "FIX", (("python", "3.10"),), "WHY")),
    (lambda: remedy.cuda_compat("12.4", "FIX", "WHY"),
     remedy.Remedy("load cuda-compat 12.4", "FIX", (("cuda_compat", "12.4"),), "WHY")),
    (lambda: remedy.env("NCCL_P2P_DISABLE", "1", "FIX", "WHY"),
     remedy.Remedy("set NCCL_P2P_DISABLE", "FIX", (("env:NCCL_P2P_DISABLE", "1"),), "WHY")),
    (lambda: remedy.env("NCCL_P2P_DISABLE", "", "FIX", "WHY"),
     remedy.Remedy("unset NCCL_P2P_DISABLE", "FIX", (("env:NCCL_P2P_DISABLE", ""),), "WHY")),
])
def test_each_remedy_says_its_change_and_carries_the_fix_and_why(made, whole):
    assert made() == whole


@pytest.mark.parametrize("version,tag,torchvision", [
    ("1.1.0", "cu100", "0.3.0"),          # before 1.2 torchvision carries no +tag
    ("1.2.0", "cu92", "0.4.0+cu92"),      # from 1.2 on it does ...
    ("1.2", "cu92", "0.4.0+cu92"),        # (1.2 is 1.2.0)
    ("1.3.0", "cu92", "0.4.1+cu92"),
    ("1.2.0", "cu100", "0.4.0"),          # ... except PyPI's own build
])
def test_a_wheel_remedy_pins_torchvision_as_pip_names_it(m, version, tag, torchvision):
    assert remedy.wheel(m, version, tag, "WHY", "FIX") == remedy.Remedy(
        f"install torch {version}+{tag}", "FIX", (("torch", f"{version}+{tag}"), ("torchvision", torchvision)), "WHY")


def test_a_wheel_remedy_for_a_torch_the_matrix_does_not_know_edits_torch_alone(m):
    assert remedy.wheel(m, "9.9.9", "cu121", "WHY", "FIX") == remedy.Remedy(
        "install torch 9.9.9+cu121", "FIX", (("torch", "9.9.9+cu121"),), "WHY")


# ---- the check itself over a made-up rule (issue 24 item 8: the survivors of a mutmut run on
# rules/fixcheck.py). Facts are an env block; fixes set or unset variables (edit kind env:NAME);
# the rule says which variables are wrong. Each status, fix text and note compared whole.

def fix_env(name, value, label=None, fix=None, why=""):
    return remedy.Remedy(label or f"set {name}={value}", fix if fix is not None else f"export {name}={value}",
                         ((f"env:{name}", value),), why)


def env_rule(*rules, calls=None):
    """run(facts): an error per (code, test(env), message, remedies) whose test holds."""
    def run(f):
        env = f.get("env", {})
        if calls is not None:
            calls.append(dict(env))
        return [Finding(ERROR, code, "env", msg, f"fix {code}", remedies=rs) for code, test, msg, rs in rules if test(env)]
    return run


def verified(fd, run, env, m):
    (out,) = fixcheck.verify({"env": dict(env)}, m, [fd], run)
    return out


A_OFF = ("bad-A", lambda e: e.get("A") != "1", "A is off", ())
SET_A = fix_env("A", "1", label="set A")


def test_an_extended_fix_says_why_each_added_fix_is_needed_and_adds_at_most_two(m):
    # setting A brings C's error, setting C brings D's, (in the second run) setting D brings E's
    rules = [A_OFF,
             ("bad-C", lambda e: e.get("A") == "1" and e.get("C") != "ok", "C must be set: it is unset",
              (fix_env("C", "ok", why="A 1 needs C ok"),)),
             ("bad-D", lambda e: e.get("C") == "ok" and e.get("D") != "ok", "D conflicts with C; see the log: details",
              (fix_env("D", "ok", label="set D"),))]
    fd = Finding(ERROR, "bad-A", "env", "A is off", "fix A", remedies=(SET_A,))
    out = verified(fd, env_rule(*rules), {}, m)
    assert out.fix == "export A=1. A 1 needs C ok, so also: export C=ok. D conflicts with C [bad-D], so also: export D=ok"
    assert out.fix_check == FixCheck(EXTENDED, ("set A", "set C=ok", "set D"),
                                     (("env:A", "1"), ("env:C", "ok"), ("env:D", "ok")),
                                     ("A 1 needs C ok: set C=ok too", "D conflicts with C [bad-D]: set D too"))
    # a third added fix is past MAX_DEPTH: the first candidate, unverified, with what stayed wrong
    rules.append(("bad-E", lambda e: e.get("D") == "ok", "E is on", (fix_env("E", "ok"),)))
    out = verified(fd, env_rule(*rules), {}, m)
    assert out.fix_check.status == UNVERIFIED
    assert out.fix == ("export A=1 (unverified: it brings C must be set [bad-C]; with set C=ok too, it brings "
                       "D conflicts with C [bad-D]; with set D too, it brings E is on [bad-E], whose fix would be "
                       "one more than the 2 envcheck adds to one)")


def test_a_fix_of_the_new_error_that_would_undo_the_first_is_passed_over_for_the_next(m):
    b_off = ("bad-B", lambda e: e.get("A") == "1" and e.get("B") != "ok", "B is off",
             (fix_env("A", "0", label="undo A"), fix_env("A", "1", label="keep A"), fix_env("B", "ok", label="set B")))
    fd = Finding(ERROR, "bad-A", "env", "A is off", "fix A", remedies=(SET_A,))
    out = verified(fd, env_rule(A_OFF, b_off), {"A": "0"}, m)
    assert (out.fix_check.status, out.fix_check.steps) == (EXTENDED, ("set A", "set B"))
    assert out.fix == "export A=1. B is off [bad-B], so also: export B=ok"


def test_a_new_error_whose_only_fix_would_undo_the_first_or_that_has_none_is_said_so(m):
    fd = Finding(ERROR, "bad-A", "env", "A is off", "fix A", remedies=(SET_A,))
    undoing = ("bad-B", lambda e: e.get("A") == "1", "B is off", (fix_env("A", "0", label="undo A"),))
    assert verified(fd, env_rule(A_OFF, undoing), {"A": "0"}, m).fix == (
        "export A=1 (unverified: it brings B is off [bad-B], which no further fix clears without undoing it)")
    # one level down: the new error's new error can only be cleared by undoing the fix before it
    c_off = ("bad-C", lambda e: e.get("A") == "1" and e.get("C") != "ok", "C is off", (fix_env("C", "ok"),))
    d_on = ("bad-D", lambda e: e.get("C") == "ok", "D is on", (fix_env("C", "no", label="undo C"),))
    assert verified(fd, env_rule(A_OFF, c_off, d_on), {"A": "0"}, m).fix == (
        "export A=1 (unverified: it brings C is off [bad-C]; with set C=ok too, it brings D is on [bad-D], "
        "which no further fix clears without undoing it)")
    bare = ("bad-B", lambda e: e.get("A") == "1", "B is off", ())
    out = verified(fd, env_rule(A_OFF, bare), {"A": "0"}, m)
    assert out.fix == "export A=1 (unverified: it brings B is off [bad-B])"
    assert out.fix_check == FixCheck(UNVERIFIED, ("set A",), (("env:A", "1"),), ("set A: it brings B is off [bad-B]",))


def test_a_long_new_error_is_cut_at_a_word_before_110_characters(m):
    words = " ".join(["word"] * 30)                              # 149 characters
    exactly = ("x" * 105) + " tail"                               # 110: kept whole
    for msg, head in [(words, " ".join(["word"] * 22) + " …"), (exactly, exactly),
                      ("x" + exactly, "x" * 106 + " …")]:
        fd = Finding(ERROR, "bad-A", "env", "A", "fix A", remedies=(fix_env("B", "1"),))
        out = verified(fd, env_rule(("bad-B", lambda e: e.get("B") == "1", msg + ": detail", ())), {}, m)
        assert out.fix == f"export B=1 (unverified: it brings {head} [bad-B])"


def test_a_replaced_fix_says_why_each_earlier_candidate_did_not_hold(m):
    run = env_rule(("bad-A", lambda e: e.get("A") == "1", "A is on", ()), ("bad-B", lambda e: e.get("B") == "1", "B is on", ()))
    fd = Finding(ERROR, "bad-A", "env", "A is on", "fix A", remedies=(
        fix_env("X", "1", label="try X"), remedy.Remedy("try B", "export B=1; unset A", (("env:A", ""), ("env:B", "1"))),
        fix_env("A", "", fix="")))
    out = verified(fd, run, {"A": "1"}, m)
    assert out.fix == ("fix A (instead of try X: the error remains after it; "
                       "instead of try B: it brings B is on [bad-B])")
    assert out.fix_check == FixCheck(REPLACED, ("set A=",), (("env:A", ""),),
                                     ("instead of try X: the error remains after it",
                                      "instead of try B: it brings B is on [bad-B]"))


def test_every_candidate_changing_nothing_is_no_fix_with_each_said(m):
    fd = Finding(ERROR, "bad-A", "env", "A is on", "fix A", remedies=(fix_env("A", "1", label="keep A"),
                                                                      fix_env("B", "2", label="keep B")))
    out = verified(fd, env_rule(("bad-A", lambda e: e.get("A") == "1", "A is on", ())), {"A": "1", "B": "2"}, m)
    why = "it changes nothing: it is what the host has already"
    assert out.fix == f"none that changes anything: keep A: {why}; keep B: {why}"
    assert out.fix_check == FixCheck(NO_FIX, (), (), (f"keep A: {why}", f"keep B: {why}"))


def test_an_unverified_candidate_without_its_own_text_offers_the_findings_fix(m):
    fd = Finding(ERROR, "bad-A", "env", "A is on", "unset A", remedies=(fix_env("B", "1", fix=""),))
    out = verified(fd, env_rule(("bad-A", lambda e: e.get("A") == "1", "A is on", ())), {"A": "1"}, m)
    assert out.fix == "unset A (unverified: the error remains after it)"


def test_a_remedy_envcheck_cannot_apply_leaves_the_fix_as_given_marked_unverified(m):
    fd = Finding(ERROR, "bad-A", "env", "A is on", "unset A",
                 remedies=(remedy.Remedy("odd", "odd", (("no-such-edit", "1"),)),))
    out = verified(fd, env_rule(), {"A": "1"}, m)
    assert out == replace(fd, fix_check=FixCheck(UNVERIFIED, notes=("envcheck could not try it (KeyError: 'no-such-edit')",)))
    assert out.fix == "unset A" and out.fix_check == FixCheck(
        UNVERIFIED, notes=("envcheck could not try it (KeyError: 'no-such-edit')",))


def test_info_findings_and_findings_without_remedies_are_left_as_they_are(m):
    calls = []
    info = Finding(INFO, "note-A", "env", "A", "fix A", remedies=(fix_env("A", "1"),))
    bare = Finding(ERROR, "bad-B", "env", "B", "fix B")
    assert fixcheck.verify({"env": {}}, m, [info, bare], env_rule(calls=calls)) == [info, bare]
    assert calls == []
    checked = Finding(ERROR, "bad-C", "env", "C", "fix C", remedies=(fix_env("C", "1"),))   # so the check runs
    out = fixcheck.verify({"env": {}}, m, [info, bare, checked], env_rule(calls=calls))
    assert [(x.fix, x.fix_check) for x in out[:2]] == [("fix A", None), ("fix B", None)]
    assert out[2].fix_check.status == VERIFIED and calls == [{"C": "1"}]


def test_the_same_facts_reached_by_edits_in_another_order_are_judged_once(m):
    calls = []
    fd = Finding(ERROR, "bad-A", "env", "A is on", "fix A", remedies=(
        remedy.Remedy("one", "one", (("env:X", "1"), ("env:Y", "1"))),
        remedy.Remedy("two", "two", (("env:Y", "1"), ("env:X", "1")))))
    verified(fd, env_rule(("bad-A", lambda e: e.get("A") == "1", "A is on", ()), calls=calls), {"A": "1"}, m)
    assert calls == [{"A": "1", "X": "1", "Y": "1"}]


def test_the_bound_on_re_checks_is_exactly_budget_runs_and_says_so(m):
    calls = []
    hard = [Finding(ERROR, f"bad-{i}", "env", "on", f"fix {i}", remedies=tuple(fix_env(f"V{i}", str(k)) for k in range(3)))
            for i in range(20)]
    rules = [(f"bad-{i}", (lambda i: lambda e: e.get(str(i)) == "on")(i), "on", ()) for i in range(20)]
    out = fixcheck.verify({"env": {str(i): "on" for i in range(20)}}, m, hard, env_rule(*rules, calls=calls))
    assert len(calls) == fixcheck.BUDGET               # each candidate fails: 16 findings' 3 candidates
    assert out[15].fix == "export V15=0 (unverified: the error remains after it)"
    assert out[16].fix == "export V16=0 (unverified: not tried to the end: envcheck's bound on re-checks was reached)"
    assert [x.fix_check.status for x in out] == [UNVERIFIED] * 20
