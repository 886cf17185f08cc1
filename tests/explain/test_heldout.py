"""The held-out corpus (tests/fixtures/errors-heldout/heldout.yaml): real error texts collected
after the catalogue was built and scored once before anything was changed for them. Recall is
the share of positives whose first environment cause is the one the thread confirmed; a negative
(OOM, a bug in the user's code) must get no environment cause with confidence exact or likely.
Prints every miss; holds the figures docs/doctor.md gives."""
from __future__ import annotations

from pathlib import Path

import yaml

from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures

HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "errors-heldout" / "heldout.yaml"
ITEMS = yaml.safe_load(HELDOUT.read_text())
# docs/doctor.md states both figures: 72.5 % scored once before any change for these texts, then
# 90.2 % after the changes that scoring prompted (no longer out-of-sample)
RECALL_FLOOR = 0.90


def _wanted(item):
    want = item["cause"]
    return want if isinstance(want, list) else [want]


def test_the_held_out_corpus_is_real_texts_with_sources_and_confirmed_causes():
    assert len(ITEMS) >= 60
    ids = {s.id for s in signatures()}
    negatives = [i for i in ITEMS if i["cause"] is None]
    assert len(negatives) >= 10 and {i["kind"] for i in negatives} == {"oom", "user-bug"}
    for item in ITEMS:
        assert item["source"].startswith("https://github.com/") and item["text"].strip() and item["settled"]
        if item["cause"] is not None:
            assert all(c in ids or c.startswith("other:") for c in _wanted(item)), item["source"]
    existing = {i["source"] for f in HELDOUT.parents[1].glob("errors/*.yaml") for i in yaml.safe_load(f.read_text())}
    assert not existing & {i["source"] for i in ITEMS}, "a held-out text is also in the corpus the wordings came from"


def test_recall_on_texts_nobody_here_wrote_and_no_confident_cause_on_negatives(capsys):
    hits, misses, confident = 0, [], []
    for item in ITEMS:
        found = explain(item["text"])
        if item["cause"] is None:
            confident += [(item["source"], e.id) for e in found
                          if e.kind == "environment" and e.confidence in ("exact", "likely")]
            continue
        got = top_environment_cause(found)
        if got and got.id in _wanted(item):
            hits += 1
        else:
            misses.append(f"{item['source']}: want {_wanted(item)}, got {got.id if got else None}")
    positives = hits + len(misses)
    with capsys.disabled():
        print(f"\nheld-out: {hits}/{positives} = {hits / positives:.1%} recall; "
              f"{len(confident)} confident environment causes on {len(ITEMS) - positives} negatives")
        for m in misses:
            print("  miss:", m)
    assert not confident, confident
    assert hits / positives >= RECALL_FLOOR, misses
