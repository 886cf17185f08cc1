"""explain's fallback from a text's keys (envcheck/explain/keys.py): a text no wording and no
catalogued message or code names still gets the causes its stable keys (error numbers, library
file names, tools, phrases) went with in the labelled texts, `possible` only, saying which keys
gave it; a text whose keys point nowhere, or that explain already answers, gets nothing from it.
The texts are made up from that design, none taken from a corpus."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.explain import keys
from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures

REPO = Path(__file__).resolve().parents[2]
FROM_KEYS = "no known message; the text's keys: "


def _expected(cause: str, matched: str, shown_keys, title: str = "") -> dict:
    """The whole answer the docs describe: the cause's own title, cause, fix, components and
    checks (its defaults filled in), `possible`, its alternatives ranked likely then possible, no
    values read from the text, and `via` naming each key with its weight in keys.json."""
    sig = next(s for s in signatures() if s.id == cause)
    assert not sig.derive
    weights = {k: dict(v)[cause] for k, v in keys.model().weights.items() if cause in dict(v)}
    shown = ", ".join(f"{k} {weights[k]:.2f}" for k in shown_keys)
    return {
        "id": cause, "kind": "environment", "confidence": "possible",
        "title": title or sig.title.format(**sig.defaults), "matched": matched, "line": 1,
        "cause": sig.cause.format(**sig.defaults), "fix": sig.fix.format(**sig.defaults),
        "components": list(sig.components), "checks": [c.format(**sig.defaults) for c in sig.checks], "values": {},
        "alternatives": [{"cause": a["cause"], "check": a["check"], "confidence": "likely" if i == 0 else "possible"}
                         for i, a in enumerate(sig.alternatives)],
        "via": f"{FROM_KEYS}{shown} (keys.json: the causes of the labelled texts holding them)"}


def test_a_cuda_error_number_in_no_known_sentence_gets_the_cause_of_its_number():
    text = "step 3: cuda runtime error 30"
    assert [e.to_dict() for e in explain(text)][:1] == [
        _expected("cuda-unknown-error", text, ["number:cuda runtime error 30", "phrase:runtime"])]


def test_a_cudnn_library_file_in_no_known_sentence_gets_cudnn_missing():
    text = "sandbox: libcudnn_ops_infer.so.8 unavailable in the image"
    assert [e.to_dict() for e in explain(text)] == [
        # the title without the cuDNN major the text did not give (not "cuDNN N library ...")
        _expected("cudnn-lib-missing", text, ["lib:cudnn_ops_infer"], "cuDNN library not found by the dynamic loader")]


def test_infiniband_verbs_in_no_known_sentence_get_the_ib_transport():
    text = "rdma setup: ibv_reg_mr on mlx5_2 refused"
    assert [e.to_dict() for e in explain(text)] == [_expected("nccl-ib-error", text, ["ib:verbs"])]


def test_dev_shm_in_no_known_sentence_gets_shm_too_small_at_most_possible():
    text = "DataLoader worker 3 killed: /dev/shm holds 64M in this container"
    assert [e.to_dict() for e in explain(text)] == [_expected("shm-too-small", text, ["dev:shm"])]


def test_an_out_of_memory_is_the_workload_s_and_gets_nothing_from_the_keys():
    found = explain("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB "
                    "(GPU 0; 7.79 GiB total capacity; libcudart.so.12 loaded)")
    assert [(e.id, e.kind, e.confidence) for e in found] == [("cuda-oom", "workload", "exact")]


@pytest.mark.parametrize("text", [
    "KeyError: 'driver'",
    "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
    "    x = batch['image'].shape\nAttributeError: 'NoneType' object has no attribute 'shape'",
    "RuntimeError: the runtime config has no key 'timeout'",
])
def test_a_program_bug_with_an_environment_word_gets_no_cause(text):
    assert explain(text) == []


def test_no_fallback_where_explain_already_blames_the_environment():
    found = explain("RuntimeError: CUDA error: no kernel image is available for execution on the device "
                    "(libcudart.so.11.0, sm_86)")
    assert top_environment_cause(found).id == "no-kernel-image"
    assert not [e for e in found if e.via.startswith(FROM_KEYS)]


def test_the_fallback_is_never_confident():
    assert keys.MIN_SCORE > 0
    for text in ("lib:cudart cudart64_110.dll libcudart.so.11.0 Could not load", "nvcc sm_90 compute_90 architecture"):
        found = [e for e in explain(text) if e.via.startswith(FROM_KEYS)]
        assert found and {e.confidence for e in found} == {"possible"}


def test_keys_json_is_what_its_generator_builds_from_the_labelled_texts():
    p = subprocess.run([sys.executable, str(REPO / "tools" / "explain_catalogue" / "gen_keys.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_key_table_learns_from_the_scored_rounds_only():
    """A round collected and not yet scored (test_heldout's UNSCORED) must never be read by the
    generator: what the table learnt from it would be in-sample when it is scored once."""
    import json

    from tests.explain.test_heldout import BARS, UNSCORED
    learnt = {Path(f).name for f in json.loads(keys.DATA.read_text())["from"] if "errors-heldout" in f}
    assert learnt == set(BARS) and not learnt & set(UNSCORED)
