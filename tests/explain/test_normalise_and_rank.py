"""How pasted text is made comparable, how causes are ranked, and the facts behind fix texts."""
from __future__ import annotations

from envcheck.explain.fixes import driver_cuda, index_hint, nearest_published
from envcheck.explain.match import explain
from envcheck.explain.signatures import anchor_of
from envcheck.explain.verdict import exit_code, verdicts
from envcheck.model import Finding, HostResult


def test_colour_case_curly_quotes_and_wrapped_lines_do_not_hide_a_message():
    text = ("\x1b[31mERROR\x1b[0m  nvidia-smi   HAS failed because it couldn\u2019t communicate\n"
            "   with the NVIDIA driver.")
    [e] = explain(text)
    assert e.id == "nvidia-smi-no-driver" and e.confidence == "exact"
    assert e.line == 1 and "couldn\u2019t" in e.matched


def test_full_width_punctuation_and_log_prefixes_are_straightened():
    text = "[rank3]: 训练报错：RuntimeError：Found no NVIDIA driver on your system。"
    assert explain(text)[0].id == "no-driver-found"


def test_the_key_line_is_found_in_a_long_log_and_reported_with_its_line_number():
    noise = "\n".join(f"step {i} loss=0.{i:04d} host=node{i % 8:02d}" for i in range(20000))
    text = noise + "\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n" + noise
    [e] = explain(text)
    assert e.id == "no-kernel-image" and e.line == 20001


def test_an_ambiguous_error_lists_its_causes_in_the_order_they_occur_with_a_check_each():
    [e] = explain("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    # its most frequent cause is the workload's (memory), so the environment is only possible
    assert e.confidence == "possible"
    assert "memory" in e.alternatives[0].cause and e.alternatives[0].confidence == "likely"
    assert [a.confidence for a in e.alternatives[1:]] == ["possible"] * (len(e.alternatives) - 1)
    assert all(a.check for a in e.alternatives)
    for text in ("RuntimeError: CUDA error: unknown error", "an illegal memory access was encountered",
                 "NCCL error in: ProcessGroupNCCL.cpp:272, unhandled system error"):
        [e] = explain(text)
        assert len(e.alternatives) >= 3, text


def test_a_specific_root_cause_ranks_above_the_ambiguous_consequence():
    text = ("libcudnn_cnn_infer.so.8: cannot open shared object file\n"
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    ids = [e.id for e in explain(text)]
    assert ids == ["cudnn-lib-missing", "cudnn-not-initialized"]


def test_a_weak_hint_is_only_likely():
    [e] = explain("RuntimeError: No CUDA GPUs are available")
    assert e.id == "no-driver-found" and e.confidence == "likely"


def test_an_error_whose_first_cause_is_the_workloads_is_only_possibly_the_environments():
    for text in ("RuntimeError: CUDA error: an illegal memory access was encountered",
                 "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)`",
                 "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"):
        e = explain(text)[0]
        assert e.confidence == "possible", text
    # one whose first cause is the setup's keeps its confidence
    assert explain("RuntimeError: CUDA error: unknown error")[0].confidence == "likely"


def test_forms_people_paste_besides_the_emitters_own():
    # the loader's "version `GLIBCXX_3.4.30' not found" quoted without "version"
    [e] = explain("error: GLIBCXX_3.4.30 not found (required by /opt/app/_ext.so)")
    assert e.id == "system-lib-too-old" and e.values["symver"] == "GLIBCXX_3.4.30"
    # NCCL tags every InfiniBand/RoCE transport warning "NET/IB"
    assert explain("node3:1234:1290 [2] NCCL WARN NET/IB : Got async event : GID table change")[0].id == "nccl-ib-error"
    # a Python list is no CUDA_VISIBLE_DEVICES value: CUDA then sees no GPU
    assert explain("os.environ['CUDA_VISIBLE_DEVICES'] = '[0,1]'")[0].id == "no-driver-found"
    assert explain("export CUDA_VISIBLE_DEVICES=0,1") == []


def test_anchor_is_the_longest_literal_and_absent_for_top_level_alternatives():
    assert anchor_of(r"libcudart\.so\.(?P<ver>\d+): cannot open shared object file") == ": cannot open shared object file"
    assert anchor_of(r"abcde|fghij") is None
    assert anchor_of(r"lib[0-9a-f_]{8}\.so: cannot") == ".so: cannot"
    assert anchor_of(r"(?:trying to build pytorch|running) with a too old gcc") == "with a too old gcc"


def test_an_index_url_only_for_a_published_variant_else_the_nearest_one_the_driver_runs():
    pub = frozenset({"cu118", "cu121", "cu124", "cu126"})
    assert nearest_published("11.8", pub) == "cu118"
    assert nearest_published("12.7", pub) == "cu126"
    assert nearest_published("11.7", pub) is None        # 11.8 needs a newer driver than 11.7's
    assert "whl/cu126" in index_hint("12.7", pub) and "no cu127" in index_hint("12.7", pub)
    assert "whl/" not in index_hint("11.7", pub)


def test_the_packaged_matrix_decides_what_is_published():
    e = explain("The detected CUDA version (12.7) mismatches the version that was used to compile PyTorch (11.8)")[0]
    assert "whl/cu127" not in e.fix and "whl/cu126" in e.fix
    e = explain("The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.4)")[0]
    assert "whl/cu118" in e.fix


def test_torch_driver_version_number_reads_as_the_cuda_it_supports():
    assert driver_cuda("11040") == "11.4" and driver_cuda("6050") == "6.5" and driver_cuda("x") is None
    e = explain("RuntimeError: The NVIDIA driver on your system is too old (found version 10010).")[0]
    assert "CUDA 10.1" in e.title and "whl/cu101" in e.fix


def _host(name, findings=(), error=None, facts=None):
    return HostResult(host=name, facts=facts, findings=list(findings), error=error)


FACTS = {"driver": {"version": "535.104.05"}, "gpus": [{"name": "NVIDIA A100"}], "torch": {"version": "2.1.0"},
         "cuda": {"version": "12.1"}, "cudnn": {"version": "8.9.2"}, "env": {}}


def test_each_host_says_which_cause_is_confirmed_ruled_out_or_not_checked():
    found = explain("libcudnn.so.8: cannot open shared object file\nCUDA out of memory.")
    assert [e.id for e in found] == ["cudnn-lib-missing", "cuda-oom"]
    bad = Finding("error", "cudnn-missing", "cudnn", "cuDNN 8 not found", fix="install it")
    other = Finding("warning", "gcc", "gcc", "gcc too new")
    no_cudnn = {k: v for k, v in FACTS.items() if k != "cudnn"}
    d = verdicts(found, [_host("n1", [bad, other], facts=FACTS), _host("n2", [other], facts=FACTS),
                         _host("n3", error="ssh: timed out"), _host("n4", facts=no_cudnn)])
    by = {x["host"]: {c["id"]: c["verdict"] for c in x["causes"]} for x in d}
    assert by["n1"] == {"cudnn-lib-missing": "confirmed", "cuda-oom": "not checked"}
    assert by["n2"]["cudnn-lib-missing"] == "ruled out"
    assert by["n3"]["cudnn-lib-missing"] == "not checked"
    # no cuDNN seen: the audit had nothing to judge, so nothing is ruled out
    assert by["n4"]["cudnn-lib-missing"] == "not checked" and "cudnn" in d[3]["causes"][0]["why"]
    # a confirmed cause outranks a host that could not be audited (model.Outcome: FAIL over UNKNOWN)
    assert exit_code(d) == 1 and exit_code(d[1:3]) == 3 and exit_code(d[1:2]) == 0


def test_a_run_time_cause_is_never_ruled_out_by_the_static_audit():
    found = explain("NCCL error: remote process exited or there was a network error, NCCL version 2.18.5")
    [d] = verdicts(found, [_host("n1", facts=dict(FACTS, nccl={"version": "2.18.5"}))])
    assert d["causes"][0]["verdict"] == "not checked" and "doctor" in d["causes"][0]["why"]


def test_a_generic_socket_error_is_a_rendezvous_failure_only_in_a_distributed_log():
    hub = "ConnectionRefusedError: [Errno 111] Connection refused"
    assert all(e.id != "rendezvous-refused" for e in explain(hub))
    store = "  File \"torch/distributed/rendezvous.py\", line 176, in _create_c10d_store\n" + hub
    assert explain(store)[0].id == "rendezvous-refused"


def test_past_the_size_bound_the_tail_is_read_and_line_numbers_stay_true(monkeypatch):
    import envcheck.explain.match as m
    monkeypatch.setattr(m, "MAX_TEXT", 1000)
    text = "x" * 50 + "\n" + ("noise line\n" * 500) + "invalid device ordinal\n"
    [e] = explain(text)
    assert e.id == "invalid-device-ordinal" and e.line == 502


def test_every_wording_that_matches_a_corpus_text_finds_its_anchor_there():
    # the anchor is a shortcut: a wrong one would silently stop its wording from ever matching
    from pathlib import Path

    import yaml

    from envcheck.explain.normalise import Normalised
    from envcheck.explain.signatures import signatures
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "errors"
    texts = [Normalised(i["text"]) for f in corpus.glob("*.yaml") for i in yaml.safe_load(f.read_text())]
    checked = 0
    for sig in signatures():
        for w in sig.wordings:
            for n in texts:
                if w.regex.search(n.text):
                    checked += 1
                    assert w.anchor is None or w.anchor in n.lower, (sig.id, w.regex.pattern, w.anchor)
    assert checked > 300
