"""The corpus of real error texts (tests/fixtures/errors/<cause>.yaml, each with the thread it
came from) run through `explain`: recall and precision per cause, printed, and held above the
bar. The predicted cause of a text is the first match that blames the environment; a negative
(OOM, a bug in the user's code) predicted as any environment cause counts against precision."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest
import yaml

from envcheck.explain.match import explain, signature_ids, top_environment_cause

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "errors"
NEGATIVES = "_negatives"


def _corpus():
    out = []
    for f in sorted(CORPUS.glob("*.yaml")):
        for i, item in enumerate(yaml.safe_load(f.read_text())):
            out.append((f.stem, i, item))
    return out


def test_the_corpus_is_real_texts_with_sources_and_large_enough():
    items = _corpus()
    env = [c for c in items if c[0] != NEGATIVES]
    neg = [c for c in items if c[0] == NEGATIVES]
    assert len(env) >= 200 and len(neg) >= 30
    for cause, i, item in items:
        assert item["source"].startswith("https://github.com/"), (cause, i)
        assert item["text"].strip(), (cause, i)
    assert {c[0] for c in env} <= set(signature_ids())
    assert len({(c[2]["source"], c[2]["text"]) for c in items}) == len(items), "duplicate entries"


def test_recall_and_precision_per_cause_hold_the_bar(capsys):
    tp, fn, fp = collections.Counter(), collections.Counter(), collections.Counter()
    misses = []
    for cause, i, item in _corpus():
        got = top_environment_cause(explain(item["text"]))
        want = None if cause == NEGATIVES else cause
        predicted = got.id if got else None
        if predicted == want:
            if want:
                tp[want] += 1
            continue
        misses.append(f"{cause}#{i} -> {predicted} ({item['source']})")
        if want:
            fn[want] += 1
        if predicted:
            fp[predicted] += 1
    rows = []
    for c in sorted(set(tp) | set(fn) | set(fp)):
        rec = tp[c] / ((tp[c] + fn[c]) or 1)
        prec = tp[c] / ((tp[c] + fp[c]) or 1)
        rows.append((c, tp[c] + fn[c], rec, prec))
    total_tp, total_fn, total_fp = sum(tp.values()), sum(fn.values()), sum(fp.values())
    recall = total_tp / (total_tp + total_fn)
    precision = total_tp / (total_tp + total_fp)
    with capsys.disabled():
        print("\ncause                          texts  recall  precision")
        for c, n, rec, prec in rows:
            print(f"{c:<30} {n:>5}  {rec:6.1%}  {prec:8.1%}")
        print(f"{'all':<30} {total_tp + total_fn:>5}  {recall:6.1%}  {precision:8.1%}")
        for m in misses:
            print("  miss:", m)
    assert recall >= 0.90 and precision >= 0.98, misses
    low = [r for r in rows if r[2] < 0.90 or r[3] < 0.98]
    assert not low, low


@pytest.mark.parametrize("text", [i["text"] for c, _, i in _corpus() if c == NEGATIVES][:12])
def test_out_of_memory_is_named_but_not_blamed_on_the_environment(text):
    found = explain(text)
    assert found and found[0].kind == "workload" and top_environment_cause(found) is None
