"""Leave-one-round-out cross-validation of explain's fallback from a text's keys
(envcheck/explain/keys.py, its table built by tools/explain_catalogue/gen_keys.py). For each scored
held-out round R from heldout2 to heldout37 (heldout31, heldout33 and heldout35 scoped to texts that name PyTorch; heldout36 and 37 from files, not threads): the key
table is built from the corpus and every other scored round, never from R, and R is scored with it,
as test_heldout.py scores (recall: the first environment cause is the thread's; a negative fails on
an exact/likely environment cause). Prints per round:

  scored once   the out-of-sample figure R got when it was first scored (docs/doctor.md)
  no fallback   explain now, without the key table (in-sample: explain's wordings and catalogue
                rules were changed after R was read)
  + keys (CV)   explain now, with the table built without R: the fallback's own share is
                out-of-sample, the rest is not
  rescued       positives the fallback turned from a miss into a hit (and hits it broke: none can,
                it only answers where nothing blames the environment)
  keys alone    the key table alone, built without R, its first cause against R's label on every
                positive with a cause id: how far the keys reach a round they never saw
  neg conf/any  R's negatives answered with a confident environment cause / any (possible) one

Then the replay, the figure that says what the fallback adds to a round nobody had read: each
round from heldout4 is scored by explain as it was at the commit the round was first scored at
(`git archive` of that commit into a temporary directory, run there in a child process), with the
key table built only from what existed then (that commit's corpus and the rounds before it), the
fallback added where that explain blamed nothing on the environment. Its "scored once" column
reproduces docs/doctor.md's figures.

Then the corpus's negatives (tests/fixtures/errors/_negatives.yaml) with the full table (in-sample:
the table learnt from them). Never reads a round that has not been scored (gen_keys.ROUNDS).

    python bench/explain_cv.py [--quick]     (--quick: the last round's fold and replay only, what CI runs)
"""
from __future__ import annotations

import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools" / "explain_catalogue"))
sys.path.insert(0, str(REPO))

from _replay import REPLAY, bench_main, replays  # noqa: E402
from gen_keys import CORPUS, HELDOUT, ROUNDS, build, environment_ids, labelled, read_yaml  # noqa: E402

from envcheck.explain.keys import Model, guess  # noqa: E402
from envcheck.explain.match import explain, top_environment_cause  # noqa: E402
from envcheck.explain.normalise import Normalised  # noqa: E402

SCORED_ONCE = {"heldout2.yaml": (28, 49), "heldout3.yaml": (23, 40), "heldout4.yaml": (40, 50),
               "heldout5.yaml": (39, 46), "heldout6.yaml": (42, 65), "heldout7.yaml": (41, 64),
               "heldout8.yaml": (33, 65), "heldout9.yaml": (38, 67), "heldout10.yaml": (29, 64),
               "heldout11.yaml": (35, 62), "heldout12.yaml": (38, 64), "heldout13.yaml": (27, 62),
               "heldout14.yaml": (17, 54), "heldout15.yaml": (30, 60),
               "heldout16.yaml": (24, 53), "heldout17.yaml": (19, 47), "heldout18.yaml": (20, 73),
               "heldout19.yaml": (27, 50),
               "heldout20.yaml": (24, 46),
               "heldout21.yaml": (20, 53),
               "heldout22.yaml": (11, 46),
               "heldout23.yaml": (13, 40),
               "heldout24.yaml": (11, 37),
               "heldout25.yaml": (15, 41),
               "heldout26.yaml": (19, 45),
               "heldout27.yaml": (12, 58),
               "heldout28.yaml": (16, 39),
               "heldout29.yaml": (6, 32),
               "heldout30.yaml": (13, 58),
               "heldout31.yaml": (8, 20), "heldout32.yaml": (8, 45),
               "heldout33.yaml": (10, 27), "heldout35.yaml": (19, 41),
               "heldout36.yaml": (46, 94), "heldout37.yaml": (33, 66),
               "heldout38.yaml": (21, 59)}


NONE = Model({"tools": [], "phrases": [], "weights": {}})     # no key has a weight: no fallback


def _wanted(item):
    want = item["cause"]
    return want if isinstance(want, list) else [want]


def _hit(found, want):
    got = top_environment_cause(found)
    return bool(got and got.id in want)


def score_round(name: str, weights) -> dict:
    env = environment_ids()
    r = {"pos": 0, "base": 0, "cv": 0, "rescued": 0, "broken": 0, "alone": 0, "with_id": 0,
         "neg": 0, "conf": 0, "any": 0, "any_base": 0}
    for item in read_yaml(HELDOUT / name):
        base, cv = explain(item["text"], key_model=NONE), explain(item["text"], key_model=weights)
        if item["cause"] is None:
            r["neg"] += 1
            r["conf"] += any(e.kind == "environment" and e.confidence in ("exact", "likely") for e in cv)
            r["any"] += top_environment_cause(cv) is not None
            r["any_base"] += top_environment_cause(base) is not None
            continue
        want = _wanted(item)
        b, c = _hit(base, want), _hit(cv, want)
        r["pos"] += 1
        r["base"] += b
        r["cv"] += c
        r["rescued"] += c and not b
        r["broken"] += b and not c
        if any(w in env for w in want):
            r["with_id"] += 1
            g = guess(Normalised(item["text"]).lower, weights, top=1)
            r["alone"] += bool(g and g[0].cause in want)
    return r




def child(old: Path, name: str, earlier) -> None:
    """In a child process whose `envcheck` is the old tree's (keys.py copied in): the round's
    figures by that explain, alone and with the fallback, one line of numbers."""
    global Normalised, top_environment_cause   # the old tree's, for _hit and the keys' guess too
    from envcheck.explain.match import top_environment_cause
    from envcheck.explain.normalise import Normalised
    import gen_keys as G
    from envcheck.explain import keys as K
    from envcheck.explain.match import explain as old_explain
    assert K.__file__.startswith(str(old)), K.__file__
    G.ROOT, G.CORPUS, G.HELDOUT = old, old / "tests/fixtures/errors", old / "tests/fixtures/errors-heldout"
    env, weights = G.environment_ids(), K.Model(G.build(G.labelled(earlier)))
    n = dict.fromkeys(("pos", "hit", "rescued", "fired", "neg", "conf", "any", "any_after"), 0)
    for item in G.read_yaml(G.HELDOUT / name):
        found = old_explain(item["text"])
        fire = not any(e.kind == "environment" or e.confidence != "possible" for e in found)
        g = [x for x in K.guess(Normalised(item["text"]).lower, weights) if x.cause in env] if fire else []
        n["fired"] += bool(g)
        if item["cause"] is None:
            n["neg"] += 1
            n["conf"] += any(e.kind == "environment" and e.confidence in ("exact", "likely") for e in found)
            n["any"] += top_environment_cause(found) is not None
            n["any_after"] += top_environment_cause(found) is not None or bool(g)
            continue
        want = _wanted(item)
        hit = _hit(found, want)
        n["pos"] += 1
        n["hit"] += hit
        n["rescued"] += (not hit) and bool(g) and g[0].cause in want
    print(" ".join(str(n[k]) for k in n))


def replay(rounds) -> None:
    print(f"\nreplay at the scoring commits: {'scored once':>12} {'+ keys':>12} {'fired':>6} {'neg conf':>9} "
          f"{'neg any env':>12}")
    rates = []    # (scored once, + keys) of each round replayed; a shallow clone may lack a commit
    for name, commit, out in replays(__file__, rounds, REPLAY, ROUNDS):
        pos, hit, rescued, fired, neg, conf, anyb, anya = map(int, out.split())
        rates.append((hit / pos, (hit + rescued) / pos))
        print(f"{name[:-5]:<10} at {commit} {hit:>8}/{pos} {hit / pos:5.1%} {hit + rescued:>3}/{pos} "
              f"{(hit + rescued) / pos:5.1%} {fired:>6} {conf:>6}/{neg} {anyb:>5} -> {anya}")
    if rates:
        print(f"{'mean':<21} {sum(r[0] for r in rates) / len(rates):>12.1%} {sum(r[1] for r in rates) / len(rates):>12.1%}")


def main(quick: bool) -> int:
    print(f"{'round':<10} {'scored once':>12} {'no fallback':>12} {'+ keys (CV)':>12} {'rescued':>8} "
          f"{'keys alone':>11} {'neg conf/any':>13}")
    tot = {"once": 0.0, "base": 0.0, "cv": 0.0, "alone": 0.0}
    folds = [r for r in ROUNDS if r in SCORED_ONCE][-1 if quick else 0:]
    for name in folds:
        weights = Model(build(labelled([r for r in ROUNDS if r != name])))
        r = score_round(name, weights)
        h, n = SCORED_ONCE[name]
        pct = {"once": h / n, "base": r["base"] / r["pos"], "cv": r["cv"] / r["pos"],
               "alone": r["alone"] / (r["with_id"] or 1)}
        for k in tot:
            tot[k] += pct[k] / len(folds)
        print(f"{name[:-5]:<10} {h:>3}/{n} {pct['once']:5.1%} {r['base']:>3}/{r['pos']} {pct['base']:5.1%} "
              f"{r['cv']:>3}/{r['pos']} {pct['cv']:5.1%} {r['rescued']:>4} -{r['broken']} "
              f"{r['alone']:>3}/{r['with_id']} {pct['alone']:5.1%} {r['conf']:>5}/{r['any']} (was {r['any_base']})"
              f" of {r['neg']}")
    print(f"{'mean':<10} {tot['once']:>12.1%} {tot['base']:>12.1%} {tot['cv']:>12.1%} {'':>8} {tot['alone']:>11.1%}")
    weights = Model(build(labelled()))
    negs = read_yaml(CORPUS / "_negatives.yaml")
    named = [i["source"] for i in negs if top_environment_cause(explain(i["text"], key_model=weights))]
    print(f"corpus negatives with any environment cause (full table, in-sample): {len(named)} of {len(negs)}")
    for s in named:
        print("  ", s)
    replay(list(REPLAY)[-1 if quick else 0:])
    return 0


if __name__ == "__main__":
    bench_main(main, child)
