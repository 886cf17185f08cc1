"""Would a whole-text similarity fallback generalise? (issue 21.) The key table
(envcheck/explain/keys.py) answers a text no wording and no catalogued message names from its
stable keys only (error names, library files, tools, a few phrases). The levers tried here read
every word of the text instead, as the labelled texts' TF-IDF vectors (words and word pairs of the
normalised text's last 64 KiB, each word in at least two labelled texts):

  knn        the 7 labelled texts most like it (cosine); their causes vote, weighted by
             similarity, the negatives (OOMs, program bugs) voting for "no cause"
  centroid   each cause's mean vector (its 300 heaviest words), and one for the negatives; the
             nearest one, no answer when that is the negatives'
  centroid+  centroid, answered only where the nearest cause's similarity is >= 0.3 and beats the
             next cause's by >= 0.1

Measured only on the replay (as bench/explain_cv.py): each round from heldout4 is scored by
`explain` as it was at the commit it was first scored at, and the lever is built only from what
existed then (that commit's corpus and the rounds scored before it), so the lever never saw the
round. A lever answers (as `possible`) only where that explain named no environment cause, as the
key table does. Per lever: the positives it rescues (a miss turned into the thread's cause), its
wrong answers on positives, and the negatives it gives a cause (all `possible`: none can make a
negative confident, so these are noise a user reads, not a failed negative in test_heldout).

    python bench/explain_similar.py [--quick]    (--quick: the last replay only, what CI runs)
"""
from __future__ import annotations

import collections
import math
import re
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools" / "explain_catalogue"))
sys.path.insert(0, str(REPO))

from _replay import REPLAY, bench_main, replays  # noqa: E402
from gen_keys import ROUNDS  # noqa: E402

LEVERS = ("keys", "knn", "centroid", "centroid+")
WORD = re.compile(r"[a-z_][a-z0-9_]{2,}")
STOP = frozenset("the and for you not this that with are was from have has but can use all any its".split())
TAIL = 64 * 1024


class Vectors:
    """TF-IDF over the labelled texts (the training set of one replay)."""

    def __init__(self, texts, lower):
        self.lower = lower
        counts = [self.words(t) for t in texts]
        df = collections.Counter(w for c in counts for w in c)
        n = len(texts)
        self.idf = {w: math.log((n + 1) / (d + 1)) + 1 for w, d in df.items() if d >= 2}
        self.docs = [self._unit(c) for c in counts]

    def words(self, text):
        low = [w for w in WORD.findall(self.lower(text)[-TAIL:]) if w not in STOP]
        return collections.Counter(low + [a + " " + b for a, b in zip(low, low[1:])])

    def _unit(self, counts):
        v = {w: (1 + math.log(x)) * self.idf[w] for w, x in counts.items() if w in self.idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {w: x / norm for w, x in v.items()}

    def vector(self, text):
        return self._unit(self.words(text))


def _dot(a, b):
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(w, 0.0) for w, x in a.items())


def knn(vec, causes, v, k=7):
    sims = sorted(((_dot(v, d), c) for d, c in zip(vec.docs, causes)), key=lambda t: -t[0])[:k]
    votes = collections.Counter()
    for s, c in sims:
        for cause in (c or [None]):
            votes[cause] += s / max(1, len(c))
    return votes.most_common(1)[0][0] if votes else None


def centroids(vec, causes, top=300):
    sums = collections.defaultdict(collections.Counter)
    for d, c in zip(vec.docs, causes):
        for cause in (c or [None]):
            sums[cause].update(d)
    out = {}
    for cause, s in sums.items():
        heavy = s.most_common(top)
        norm = math.sqrt(sum(x * x for _, x in heavy)) or 1.0
        out[cause] = {w: x / norm for w, x in heavy}
    return out


def nearest(cents, v, floor=0.0, margin=0.0):
    ranked = sorted(((_dot(v, c), cause) for cause, c in cents.items()), key=lambda t: (-t[0], str(t[1])))
    (s1, c1), s2 = ranked[0], (ranked[1][0] if len(ranked) > 1 else 0.0)
    if c1 is None or s1 < floor or s1 - s2 < margin:
        return None
    return c1


def child(old: Path, name: str, earlier) -> None:
    """In the old tree (bench/_replay.py): one line, per lever: rescued wrong negatives-answered,
    then: positives, hits, negatives."""
    import gen_keys as G
    from envcheck.explain import keys as K
    from envcheck.explain.match import explain, top_environment_cause
    from envcheck.explain.normalise import Normalised
    G.ROOT, G.CORPUS, G.HELDOUT = old, old / "tests/fixtures/errors", old / "tests/fixtures/errors-heldout"
    env = G.environment_ids()
    train = G.labelled(earlier)
    weights = K.Model(G.build(train))
    vec = Vectors([t for _, t, _ in train], lambda t: Normalised(t).lower)
    causes = [c for _, _, c in train]
    cents = centroids(vec, causes)
    n = {lever: [0, 0, 0] for lever in LEVERS}
    pos = hits = neg = 0
    for item in G.read_yaml(G.HELDOUT / name):
        found = explain(item["text"])
        want = item["cause"] if isinstance(item["cause"], list) else [item["cause"]]
        top = top_environment_cause(found)
        if item["cause"] is None:
            neg += 1
        else:
            pos += 1
            hits += bool(top and top.id in want)
        if any(e.kind == "environment" or e.confidence != "possible" for e in found):
            continue
        v = vec.vector(item["text"])
        g = K.guess(Normalised(item["text"]).lower, weights, top=1)
        answers = {"keys": g[0].cause if g else None, "knn": knn(vec, causes, v),
                   "centroid": nearest(cents, v), "centroid+": nearest(cents, v, 0.3, 0.1)}
        for lever, a in answers.items():
            if a is None or a not in env:
                continue
            if item["cause"] is None:
                n[lever][2] += 1
            elif a in want:
                n[lever][0] += 1
            else:
                n[lever][1] += 1
    print(" ".join(str(x) for lever in LEVERS for x in n[lever]), pos, hits, neg)


def main(quick: bool) -> int:
    head = "".join(f" {lever + ' +/wrong/neg':>22}" for lever in LEVERS)
    print(f"{'round':<10} {'scored once':>12}{head}")
    total = collections.Counter()
    for name, commit, out in replays(__file__, list(REPLAY)[-1 if quick else 0:], REPLAY, ROUNDS):
        x = list(map(int, out.split()))
        pos, hits, neg = x[-3:]
        total.update({"pos": pos, "hits": hits, "neg": neg})
        cells = ""
        for i, lever in enumerate(LEVERS):
            r, w, a = x[3 * i:3 * i + 3]
            total.update({lever + "r": r, lever + "w": w, lever + "a": a})
            cells += f" {r:>10} / {w:>3} / {a:>3}"
        print(f"{name[:-5]:<10} {hits:>4}/{pos:<3} {hits / pos:5.1%}{cells}")
    if total["pos"]:
        print(f"{'total':<10} {total['hits']:>4}/{total['pos']:<3} {total['hits'] / total['pos']:5.1%}", end="")
        for lever in LEVERS:
            print(f" {total[lever + 'r']:>10} / {total[lever + 'w']:>3} / {total[lever + 'a']:>3}", end="")
        print(f"\nnegatives: {total['neg']}")
        for lever in LEVERS:
            r, w = total[lever + "r"], total[lever + "w"]
            print(f"{lever:<10} recall {total['hits'] / total['pos']:.1%} -> {(total['hits'] + r) / total['pos']:.1%};"
                  f" its answers right on positives: {r}/{r + w}; negatives given a cause: {total[lever + 'a']}")
    return 0


if __name__ == "__main__":
    bench_main(main, child)
