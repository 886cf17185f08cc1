"""Playbooks: the shipped ones load and are consistent; bad ones fail with the file and key path."""
from __future__ import annotations

import copy

import pytest
import yaml

from envcheck.errors import UsageError
from envcheck.model import ERROR
from envcheck.provision.playbooks import (available, check_stack, consistency, facts_for_stack, find_playbook,
                                load_playbook, parse_playbook, refusal)

OLD = "cuda10.0-cudnn7.6-torch1.1"
NEW = "cuda12.4-cudnn9.1-torch2.5"


def raw(name: str) -> dict:
    return yaml.safe_load(find_playbook(name).read_text())


def test_both_shipped_playbooks_load_with_the_documented_steps():
    names = {p.stem for p in available()}
    assert {OLD, NEW} <= names
    old = load_playbook(OLD)
    assert [s.name for s in old.steps] == ["install-cuda", "install-cudnn", "env", "pip", "pip", "audit", "nccl-test"]
    assert old.stack["cuda"] == "10.0.130" and old.stack["cudnn"] == "7.6.5.32" and old.stack["torch"] == "1.1.0+cu100"
    pip = old.steps[3].args
    assert pip["packages"] == ["torch==1.1.0", "torchvision==0.3.0"]
    assert pip["find_links"] == "https://download.pytorch.org/whl/cu100/torch_stable.html"
    new = load_playbook(NEW)
    assert new.stack["torch"].endswith("+cu124")
    assert [s for s in new.steps if s.name == "pip"][0].args["index_url"] == "https://download.pytorch.org/whl/cu124"


@pytest.mark.parametrize("name", [OLD, NEW])
def test_shipped_playbooks_are_self_consistent(name):
    assert consistency(load_playbook(name)) == []


def _bad(mutate, name=OLD) -> str:
    data = copy.deepcopy(raw(name))
    mutate(data)
    with pytest.raises(UsageError) as e:
        parse_playbook(data, "pb.yaml")
    return e.value.message


def test_unknown_step_key_names_file_and_key_path():
    msg = _bad(lambda d: d["steps"][3]["pip"].update(pakages=["x"]))
    assert msg.startswith("pb.yaml: steps[3].pip.pakages: unknown key")


def test_unknown_step_name_is_refused():
    msg = _bad(lambda d: d["steps"].append({"reboot": {}}))
    assert "steps[7].reboot: unknown step" in msg and "install-cuda" in msg


def test_unknown_top_and_stack_keys_are_refused():
    assert "stak: unknown key" in _bad(lambda d: d.update(stak={}))
    assert "stack.cudaa: unknown key" in _bad(lambda d: d["stack"].update(cudaa="10.0"))


def test_an_unquoted_version_is_refused_because_yaml_reads_it_as_a_number():
    msg = _bad(lambda d: d["steps"][1]["install-cudnn"].update(cuda=10.0))
    assert "steps[1].install-cudnn.cuda 10.0 must be a quoted version" in msg


def test_missing_required_key_and_unparsable_version():
    assert "steps[0].install-cuda.version: missing" in _bad(lambda d: d["steps"][0]["install-cuda"].pop("version"))
    assert "stack.cuda" in _bad(lambda d: d["stack"].update(cuda="ten"))
    assert "steps: must be a non-empty list" in _bad(lambda d: d.update(steps=[]))


def test_a_step_with_two_names_is_refused():
    msg = _bad(lambda d: d["steps"].__setitem__(0, {"audit": {}, "pip": {"packages": ["x"]}}))
    assert "steps[0]: each step is a mapping with one key" in msg


def test_load_reports_yaml_syntax_errors_with_the_file(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("schema: 1\nsteps: [\n")
    with pytest.raises(UsageError, match="broken.yaml: not valid YAML"):
        load_playbook(p)
    with pytest.raises(UsageError, match="no such file"):
        load_playbook(tmp_path / "missing.yaml")


def test_pip_without_the_variant_index_is_inconsistent():
    data = raw(OLD)
    data["steps"][3]["pip"].pop("find_links")
    found = consistency(parse_playbook(data, "pb.yaml"))
    assert [f.code for f in found] == ["playbook-pip-variant"]
    assert "installs the variant PyPI serves" in found[0].message


def test_steps_that_disagree_with_the_stack_are_named():
    data = raw(NEW)
    data["steps"][0]["install-cuda"]["version"] = "12.6.3"
    data["steps"][2]["env"]["cuda_home"] = "/usr/local/cuda-11.8"
    data["steps"][3]["pip"]["packages"] = ["torch==2.4.0", "torchvision==0.20.1"]
    data["steps"][1]["install-cudnn"]["archive"] = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
    codes = sorted(f.code for f in consistency(parse_playbook(data, "pb.yaml")))
    assert codes == ["playbook-cuda-step", "playbook-cudnn-archive", "playbook-env-cuda-home", "playbook-pip-version"]


def test_facts_built_from_the_stack_follow_the_facts_schema():
    f = facts_for_stack(load_playbook(OLD).stack, "3.7")
    from envcheck.facts import schema as facts
    assert facts.cuda_version(f) == "10.0.130" and facts.cudnn_version(f) == "7.6.5.32"
    assert facts.torch_version(f) == "1.1.0" and facts.torch_cuda(f) == "10.0"
    assert facts.package_version(f, "torchvision") == "0.3.0" and facts.python_version(f) == "3.7"
    assert facts.driver_version(f) == "410.48"


def test_the_shipped_stacks_pass_the_matrix_rules():
    from envcheck.matrix.load import load_matrix
    m = load_matrix()
    for name in (OLD, NEW):
        assert [f for f in check_stack(load_playbook(name), m) if f.severity == ERROR] == []


def test_a_python_without_torch_wheels_refuses_the_stack_naming_the_python():
    from envcheck.matrix.load import load_matrix
    data = raw(OLD)
    data["stack"]["python"] = ["3.7", "3.9"]   # torch 1.1.0 has no cp39 wheel
    pb = parse_playbook(data, "pb.yaml")
    errs = [f for f in check_stack(pb, load_matrix()) if f.severity == ERROR]
    assert errs and all(f.component == "python" for f in errs) and "3.9" in errs[0].message
    assert refusal(pb, errs).startswith("pb.yaml: stack cuda10.0-cudnn7.6-torch1.1 refused: [python]")


def test_a_cudnn_built_for_another_cuda_refuses_the_stack():
    from envcheck.matrix.load import load_matrix
    data = raw(NEW)
    data["stack"]["cudnn"] = "7.6.5.32"
    data["steps"][1]["install-cudnn"]["archive"] = "cudnn-10.0-linux-x64-v7.6.5.32.tgz"
    errs = [f for f in check_stack(parse_playbook(data, "pb.yaml"), load_matrix()) if f.severity == ERROR]
    assert any(f.component == "cudnn" for f in errs), errs


# --- every field checked by the declaration the CLI uses for the same input (issue 24) ----------
@pytest.mark.parametrize("mutate,words", [
    (lambda d: d["steps"][2]["env"].update(cuda_home="usr/local/cuda-10.0"), "cuda_home 'usr/local/cuda-10.0' is not an absolute path"),
    (lambda d: d["steps"][2]["env"].update(cuda_home="/usr/local/cuda-10.0\nexport X=1"), "control character"),
    (lambda d: d["steps"][1]["install-cudnn"].update(cuda_home="cuda"), "install-cudnn.cuda_home"),
    (lambda d: d["steps"][6]["nccl-test"].update(timeout=0), "nccl-test.timeout 0 is not a number of seconds"),
    (lambda d: d["steps"][6]["nccl-test"].update(timeout=31 * 365 * 86400), "timeout 977616000"),
    (lambda d: d["steps"][6]["nccl-test"].update(timeout=float("inf")), "timeout inf"),
    (lambda d: d["steps"][6]["nccl-test"].update(max_bytes="1000G"), "above 256G"),
    (lambda d: d["steps"][6]["nccl-test"].update(min_busbw=float("nan")), "min_busbw nan"),
    (lambda d: d["steps"][3]["pip"].update(find_links="not\na url"), "control character"),
    (lambda d: d["steps"][0]["install-cuda"].update(url="ftp//x"), "install-cuda.url"),
    (lambda d: d["steps"][0]["install-cuda"].update(sha256="abc"), "64 hex digits"),
    (lambda d: d["steps"][0]["install-cuda"].update(tmpdir="var/tmp"), "not an absolute directory"),
    (lambda d: d.update(schema=True), "schema: version True not supported"),
    (lambda d: d.update(name="x" * 1_000_000), "(1000000 characters)"),
])
def test_a_value_the_cli_refuses_is_refused_in_a_playbook_before_any_step(mutate, words):
    msg = _bad(mutate)
    assert words in msg and len(msg) < 400, msg


def test_a_pip_index_that_is_not_a_url_is_refused():
    msg = _bad(lambda d: next(s for s in d["steps"] if "pip" in s)["pip"].update(
        index_url="download.pytorch.org/whl/cu100"), NEW)
    assert "index_url 'download.pytorch.org/whl/cu100' is not an http(s), ftp or file URL" in msg


def test_the_json_schema_for_editors_is_the_one_the_declarations_give():
    import json
    from pathlib import Path

    import jsonschema

    from envcheck.provision.schema import json_schema
    shipped = Path(__file__).resolve().parents[2] / "envcheck" / "provision" / "playbook.schema.json"
    assert json.loads(shipped.read_text()) == json_schema(), \
        "regenerate envcheck/provision/playbook.schema.json from envcheck.provision.schema.json_schema()"
    check = jsonschema.Draft202012Validator(json_schema())
    for name in (OLD, NEW):
        assert list(check.iter_errors(raw(name))) == []
    # what parse_playbook refuses, the schema refuses too (where JSON Schema can say it)
    for mutate in (lambda d: d["steps"][2]["env"].update(cuda_home="rel"),
                   lambda d: d["steps"][6]["nccl-test"].update(timeout=0),
                   lambda d: d["steps"][3]["pip"].update(index_url="not a url"),
                   lambda d: d["stack"].update(cuda=10.0),
                   lambda d: d["steps"][0]["install-cuda"].update(flags="--silent")):
        data = copy.deepcopy(raw(OLD))
        mutate(data)
        assert list(check.iter_errors(data)), data
