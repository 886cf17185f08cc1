"""`envcheck plan` over the real matrix and rules: what it allows must be what `check` accepts."""
from __future__ import annotations

import json

import pytest

from envcheck.errors import UsageError
from envcheck.matrix.load import load_matrix
from envcheck.model import ERROR
from envcheck.plan import make_plan, pip_command
from envcheck.rules import evaluate
from envcheck.facts.from_flags import stack_facts
from envcheck.versions import vkey


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def test_stacks_come_newest_first_and_every_allowed_one_passes_check(m):
    p = make_plan(m, "V100", driver="418.87")
    # clean stacks first, then those that run with a warning (here: through CUDA forward
    # compatibility on a Tesla board), each group newest first
    clean = [s for s in p.allowed if not s.warnings]
    assert clean and p.allowed[:len(clean)] == clean
    for group in (clean, p.allowed[len(clean):]):
        keys = [vkey(s.torch) for s in group]
        assert keys == sorted(keys, reverse=True)
    for s in p.allowed:
        f = stack_facts(driver="418.87", cuda=s.cuda, cudnn=s.cudnn, torch=f"{s.torch}+{s.tag}",
                        torchvision=s.torchvision, gpu="V100", python=s.python[-1], matrix=m)
        assert [x for x in evaluate(f, m) if x.severity == ERROR] == [], s.label


def test_a_driver_excludes_stacks_that_need_a_newer_one_with_the_rule_message(m):
    p = make_plan(m, "V100", driver="418.87")
    assert all(vkey(s.driver_min) <= vkey("418.87") for s in p.allowed if not s.warnings)
    assert all("forward-compatib" in w for s in p.allowed if vkey(s.driver_min) > vkey("418.87") for w in s.warnings)
    newest_excluded = p.excluded[0]
    assert any("CUDA driver version is insufficient" in r for r in newest_excluded.reasons)


def test_the_origin_stack_is_offered_for_a_turing_gpu_with_its_playbook(m):
    p = make_plan(m, "sm_75", torch="1.1.0", python="3.7")
    assert [s.label for s in p.allowed] == ["torch 1.1.0+cu100"]
    # the cu90 wheel embeds PTX and CUDA 9.0 builds sm_70 cubins Turing runs, but its CUDA 9 libraries fail there
    assert any("do not support sm_75" in r for r in p.excluded[0].reasons)
    cu100 = p.allowed[0]
    assert cu100.playbook and cu100.playbook.endswith("cuda10.0-cudnn7.6-torch1.1.yaml")
    assert cu100.cuda == "10.0.130" and cu100.cudnn.startswith("7.6") and cu100.torchvision == "0.3.0"
    assert cu100.commands[-1] == ("pip install --no-index --no-deps -f https://download.pytorch.org/whl/cu100/"
                                  "torch_stable.html torch==1.1.0 torchvision==0.3.0")


def test_nothing_in_the_torch_1_1_era_runs_cuda_kernels_on_an_a100_and_explain_says_why(m):
    p = make_plan(m, "A100", torch="1.1")
    cu100 = [s for s in p.excluded if s.tag == "cu100"][0]
    assert any("no kernels for A100" in r for r in cu100.reasons)


def test_a_python_pin_excludes_releases_without_wheels(m):
    p = make_plan(m, "A100", python="3.12")
    assert p.allowed and all("3.12" in s.python for s in p.allowed)
    assert all(vkey(s.torch) >= (2, 2) for s in p.allowed)


@pytest.mark.parametrize("torch,tag,pypi,expect", [
    ("1.1.0", "cu90", "cu90", "pip install torch==1.1.0 torchvision==0.3.0"),
    ("1.7.1", "cu110", "cu102", "pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 -f https://download.pytorch.org/whl/torch_stable.html"),
    ("2.5.1", "cu124", "cu124", "pip install torch==2.5.1 torchvision==0.8.2"),
    ("2.5.1", "cu118", "cu124", "pip install torch==2.5.1 torchvision==0.8.2 --index-url https://download.pytorch.org/whl/cu118"),
])
def test_pip_command_follows_the_index_scheme_of_the_era(torch, tag, pypi, expect):
    assert pip_command(torch, tag, "0.3.0" if torch == "1.1.0" else "0.8.2", pypi) == expect


def test_unknown_gpu_names_the_fix(m):
    with pytest.raises(UsageError, match="not in the matrix"):
        make_plan(m, "Z9000")


@pytest.mark.parametrize("typed,meant", [("4090", '--gpu "RTX 4090" (sm_89)'), ("H10", "--gpu H100 (sm_90)"),
                                         ("6000", '--gpu "RTX 6000" (sm_75)')])
def test_a_gpu_name_the_matrix_lacks_gets_a_did_you_mean_with_its_sm(m, typed, meant):
    with pytest.raises(UsageError) as e:
        make_plan(m, typed)
    assert e.value.fix.startswith(f"did you mean {meant}")


def test_check_with_a_bare_model_number_suggests_the_board_in_the_fix(cli):
    r = cli("check", "--gpu", "4090", "--json")
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "gpu-unknown"]
    assert 'did you mean --gpu "RTX 4090" (sm_89)?' in f["fix"]


def test_cli_json_and_exit_codes(cli):
    r = cli("plan", "--gpu", "A100", "--torch", "1.1.0", "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["allowed"] == [] and {s["tag"] for s in doc["excluded"]} == {"cu90", "cu100"}
    r = cli("plan", "--gpu", "T4", "--driver", "410.48", "--python", "3.7")
    assert r.returncode == 0 and "1.1.0+cu100" in r.stdout and "envcheck provision" in r.stdout
    r = cli("plan", "--gpu", "T4", "--driver", "x4")
    assert r.returncode == 2 and "--driver" in r.stderr


def test_a_board_name_sold_with_two_chips_is_planned_for_the_higher_and_the_plan_says_so(m):
    # pci.ids: GeForce GT 740M is GK107M (3.0) or GK208M (3.5); check says it as an info, and
    # plan, which shows no findings, must say it too or it silently plans for the wrong board
    p = make_plan(m, "GT 740M")
    assert p.compute_capability == "3.5"
    assert p.note and "GK107M (sm_30)" in p.note and "--gpu X.Y" in p.note
    assert make_plan(m, "A100").note is None
