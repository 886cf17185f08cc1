"""Does a general re-ranking of explain's environment causes generalise? (issue 21, thirteenth
round). Of the positives explain misses, some get ANOTHER environment cause first while the
thread's cause is among its later answers or among what the text's keys point to. Candidate
levers, each applied to explain's own ordered answers, among the environment causes of the same
confidence as its first one (a lever never changes a confidence, so it cannot make a negative
confident):

  keys-tie   the key table's score of each such cause (keys.py's sum of its keys' weights, no
             floor) as the tie-breaker; explain's order where the scores tie
  last       the cause matched latest in the text first (the error is printed last)
  specific   the longest matched wording first (a code or a short phrase is weaker evidence)
  keys-add   keys-tie, and where explain's first environment cause is only `possible`, the key
             table's causes scoring above MIN_SCORE join the candidates (as `possible`)

Two measures, both with the key table built without the round scored:

  1. leave-one-round-out on today's explain: every scored round (gen_keys.ROUNDS), the table built
     from the corpus and every other round (today's wordings are in-sample for every round)
  2. the replay: each round scored by explain as it was at the commit it was first scored at (git
     archive, as bench/explain_cv.py), the table built from the rounds before it: the only figure
     where the explain being re-ranked had never seen the round

Per round: recall now, and with each lever (hits gained -lost); negatives whose first environment
cause a lever would show with any confidence (keys-add only can add one); the misses whose cause is
among explain's environment answers (any confidence) or among the causes the text's keys point to
(any score): what a re-ranking could reach at most.

    python bench/explain_rank_cv.py [--no-replay | --replay-only] [--quick]

--quick (what CI runs, tests/test_bench.py): the last round's fold and the last replay only. A
replay whose commit this clone lacks (a shallow clone) is said and skipped.
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools" / "explain_catalogue"))

from _replay import REPLAY as ALL_REPLAY  # noqa: E402

LEVERS = ("now", "keys-tie", "last", "specific", "keys-add")
# the rounds this study replayed (heldout4 to heldout12, before the thirteenth round asked it)
REPLAY = {n: v for n, v in ALL_REPLAY.items() if int(n[len("heldout"):-len(".yaml")]) <= 12}


def raw_scores(lower: str, table) -> dict:
    """keys.py's score of every cause the text's keys point to, without the floor."""
    from envcheck.explain import keys as K
    skip = max(0, len(lower) - K.TAIL)
    score: dict = {}
    for key in table.keys(lower[skip:]).keys() & table.weights.keys():
        for cause, w in table.weights[key]:
            score[cause] = score.get(cause, 0.0) + w
    return score


def first_cause(found, lever: str, lower: str, table, env_ids) -> "str | None":
    """The first environment cause `lever` puts first (None: no environment cause)."""
    env = [e for e in found if e.kind == "environment"]
    if not env:
        return None
    if lever == "now":
        return env[0].id
    tied = [e for e in env if e.confidence == env[0].confidence]
    if lever == "last":
        return max(tied, key=lambda e: e.position).id
    if lever == "specific":
        return max(tied, key=lambda e: e.span).id
    score = raw_scores(lower, table)
    ids = [e.id for e in tied]
    if lever == "keys-add" and env[0].confidence == "possible":
        from envcheck.explain.keys import MIN_SCORE
        ids += sorted(c for c, s in score.items() if s > MIN_SCORE and c in env_ids and c not in ids)
    return max(ids, key=lambda c: (score.get(c, 0.0), -ids.index(c)))


def score(items, explain, lower_of, table, env_ids) -> dict:
    n = {"pos": 0, "neg": 0, **{f"hit:{v}": 0 for v in LEVERS}, **{f"lost:{v}": 0 for v in LEVERS},
         **{f"negany:{v}": 0 for v in LEVERS},
         "reach:answers": 0, "reach:keys": 0}
    for item in items:
        found, lower = explain(item["text"]), lower_of(item["text"])
        got = {v: first_cause(found, v, lower, table, env_ids) for v in LEVERS}
        if item["cause"] is None:
            n["neg"] += 1
            for v in LEVERS:
                n[f"negany:{v}"] += got[v] is not None
            continue
        want = item["cause"] if isinstance(item["cause"], list) else [item["cause"]]
        n["pos"] += 1
        env = [e.id for e in found if e.kind == "environment"]
        # the most any re-ranking could rescue: misses whose cause is a later answer / a key's cause
        n["reach:answers"] += got["now"] not in want and any(c in want for c in env)
        n["reach:keys"] += got["now"] not in want and any(c in want for c in raw_scores(lower, table))
        for v in LEVERS:
            n[f"hit:{v}"] += got[v] in want
            n[f"lost:{v}"] += got["now"] in want and got[v] not in want
    return n


def _line(label: str, n: dict, means: dict, folds: int) -> None:
    cells = []
    for v in LEVERS:
        h = n[f"hit:{v}"]
        means[v] = means.get(v, 0.0) + h / n["pos"] / folds
        gained = h - n["hit:now"] + n[f"lost:{v}"]
        cells.append(f"{h:>3}/{n['pos']} {h / n['pos']:6.1%}" + ("" if v == "now" else f" +{gained}-{n[f'lost:{v}']}"))
    negs = "/".join(str(n[f"negany:{v}"]) for v in LEVERS)
    print(f"{label:<24} " + " | ".join(cells) + f" | neg any env {negs} of {n['neg']}"
          f" | misses with the cause among the answers {n['reach:answers']}, among the keys' {n['reach:keys']}")


def loro(quick: bool = False) -> None:
    from gen_keys import HELDOUT, ROUNDS, build, environment_ids, labelled, read_yaml

    from envcheck.explain.keys import Model
    from envcheck.explain.match import explain
    from envcheck.explain.normalise import Normalised
    print("leave-one-round-out, today's explain, table without R:  " + " | ".join(LEVERS))
    means: dict = {}
    env = environment_ids()
    rounds = ROUNDS[-1:] if quick else ROUNDS
    for name in rounds:
        table = Model(build(labelled([r for r in ROUNDS if r != name])))
        n = score(read_yaml(HELDOUT / name), lambda t: explain(t, key_model=table),
                  lambda t: Normalised(t).lower, table, env)
        _line(name[:-5], n, means, len(rounds))
    print(f"{'mean':<24} " + " | ".join(f"{means[v]:>20.1%}" for v in LEVERS))


def child(old: Path, name: str, earlier) -> None:
    import gen_keys as G
    sys.path.insert(0, str(old))          # the old tree's envcheck, not the one gen_keys put first
    for m in [m for m in sys.modules if m == "envcheck" or m.startswith("envcheck.")]:
        del sys.modules[m]
    from envcheck.explain import keys as K
    from envcheck.explain.match import explain
    from envcheck.explain.normalise import Normalised
    assert K.__file__.startswith(str(old)), K.__file__
    G.ROOT, G.CORPUS, G.HELDOUT = old, old / "tests/fixtures/errors", old / "tests/fixtures/errors-heldout"
    table = K.Model(G.build(G.labelled(earlier)))
    n = score(G.read_yaml(G.HELDOUT / name), explain, lambda t: Normalised(t).lower,
              table, G.environment_ids())
    print(yaml.safe_dump(n))


def replay(quick: bool = False) -> None:
    from _replay import replays
    from gen_keys import ROUNDS
    print("\nreplay: explain at the commit R was scored once at, table from the rounds before R")
    means: dict = {}
    items = list(REPLAY.items())[-1:] if quick else list(REPLAY.items())
    for name, commit, out in replays(__file__, [n for n, _ in items], REPLAY, ROUNDS):
        _line(f"{name[:-5]} ({commit})", yaml.safe_load(out), means, len(items))
    if means:   # empty when no commit could be replayed
        print(f"{'mean':<24} " + " | ".join(f"{means[v]:>20.1%}" for v in LEVERS))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]), sys.argv[3], sys.argv[4:])
    else:
        sys.path.insert(0, str(REPO))
        quick = "--quick" in sys.argv[1:]
        if "--replay-only" not in sys.argv[1:]:
            loro(quick)
        if "--no-replay" not in sys.argv[1:]:
            replay(quick)
