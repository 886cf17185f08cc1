"""The tree `explain` had at an older commit, for the benches that replay a held-out round as it
was scored once (bench/explain_cv.py, bench/explain_rank_cv.py)."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]

# each held-out round from heldout4: (the commit it was scored once at, how many of gen_keys.ROUNDS
# were scored before it); a round joins here when it is scored
REPLAY = {"heldout4.yaml": ("e82f0fd", 3), "heldout5.yaml": ("71faddf", 4), "heldout6.yaml": ("9d85a87", 5),
          "heldout7.yaml": ("9bf9739", 6), "heldout8.yaml": ("0917e07", 7), "heldout9.yaml": ("0917e07", 7),
          "heldout10.yaml": ("e74c745", 9), "heldout11.yaml": ("e74c745", 9), "heldout12.yaml": ("7d90ef7", 11),
          "heldout13.yaml": ("65ed21e", 12), "heldout14.yaml": ("58cf552", 13), "heldout15.yaml": ("58cf552", 13),
          "heldout16.yaml": ("d7705ab", 15), "heldout17.yaml": ("d7705ab", 15),
          "heldout18.yaml": ("110dd9e", 17), "heldout19.yaml": ("b4f2f93", 18),
          "heldout20.yaml": ("dac7536", 19),
          "heldout21.yaml": ("a618545", 20),
          "heldout22.yaml": ("05ebd54", 21),
          "heldout23.yaml": ("30d763f", 22),
          "heldout24.yaml": ("6a7aaaf", 23),
          "heldout25.yaml": ("5b42059", 24),
          "heldout26.yaml": ("4f9f1e9", 25),
          "heldout27.yaml": ("2818658", 26),
          "heldout28.yaml": ("bb3f056", 27),
          "heldout29.yaml": ("3823f6e", 28),
          "heldout30.yaml": ("d5206bf", 29),
          "heldout31.yaml": ("11591e4", 30),
          "heldout32.yaml": ("fe46cea", 31),
          "heldout33.yaml": ("3d8d456", 32),
          "heldout35.yaml": ("a0e635b", 33),
          "heldout36.yaml": ("14801ce", 34),
          "heldout37.yaml": ("0eaca80", 35),
          "heldout38.yaml": ("c23f709", 36)}


def old_tree(commit: str, name: str, earlier: Sequence[str], dest: Path) -> Optional[str]:
    """Make `dest` the tree at `commit`: envcheck, the matrix, the corpus, the round `name` and the
    `earlier` rounds, and that commit's keys.py (today's where it had none; the key table is built
    from what existed then), so the explain of then answers as it did. None, or why not: a shallow
    clone lacks the commit."""
    paths = ["envcheck", "compat_matrix.yaml", "tests/fixtures/errors", f"tests/fixtures/errors-heldout/{name}",
             *(f"tests/fixtures/errors-heldout/{r}" for r in earlier)]
    tar = subprocess.run(["git", "-C", str(REPO), "archive", commit, *paths], capture_output=True)
    if tar.returncode:
        return tar.stderr.decode().strip()[:100]
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar.stdout, check=True)
    keys = Path(dest) / "envcheck" / "explain" / "keys.py"
    if not keys.exists():      # before the fallback existed: today's, for the "+ keys" column
        shutil.copy(REPO / "envcheck" / "explain" / "keys.py", keys)
    return None


def run_at(script: str, commit: str, name: str, earlier: Sequence[str]) -> Tuple[Optional[str], str]:
    """`script --child TREE name earlier…` run in the tree at `commit` (old_tree): (its stdout,
    "") or (None, why it could not be made)."""
    with tempfile.TemporaryDirectory() as tmp:
        why = old_tree(commit, name, earlier, Path(tmp))
        if why:
            return None, why
        return subprocess.run([sys.executable, script, "--child", tmp, name, *earlier], cwd=tmp,
                              capture_output=True, text=True, check=True).stdout, ""


def enter_old_tree(old: str) -> None:
    """In the child `run_at` starts: make `old`'s envcheck the one imported from here on (drop any
    envcheck module the script's own imports loaded from this checkout)."""
    sys.path.insert(0, old)
    for m in [m for m in sys.modules if m == "envcheck" or m.startswith("envcheck.")]:
        del sys.modules[m]


def replays(script: str, names: Sequence[str], table: Dict[str, Tuple[str, int]],
            scored: Sequence[str]) -> Iterator[Tuple[str, str, str]]:
    """(name, commit, the child's stdout) of each round in `names`, replayed by `script` at the
    commit `table` gives it, with the rounds `scored` before it; a round whose commit this clone
    lacks (a shallow clone) is said and skipped."""
    for name in names:
        commit, k = table[name]
        out, why = run_at(script, commit, name, scored[:k])
        if out is None:
            print(f"{name[:-5]:<10} at {commit}: not replayed ({why})")
            continue
        yield name, commit, out


def bench_main(main: Callable[[bool], int], child: Callable[[Path, str, Sequence[str]], None]) -> None:
    """The `__main__` of a bench that replays rounds: run as `script --child TREE ROUND EARLIER…`
    (run_at, in the old tree), `child(TREE, ROUND, EARLIER)` with the old tree's envcheck
    imported; otherwise `main(quick)`, its return the exit code."""
    if sys.argv[1:2] == ["--child"]:
        enter_old_tree(sys.argv[2])
        child(Path(sys.argv[2]), sys.argv[3], sys.argv[4:])
        # every envcheck module the replay used came from the old tree (an import of this
        # checkout's gen_keys inside `child` once brought today's explain back in)
        stray = sorted(m for m, mod in list(sys.modules.items())
                       if (m == "envcheck" or m.startswith("envcheck."))
                       and not str(getattr(mod, "__file__", None) or sys.argv[2]).startswith(sys.argv[2]))
        if stray:
            sys.exit(f"replay used this checkout's {stray[0]}, not the tree at the commit ({len(stray)} modules)")
    else:
        sys.exit(main("--quick" in sys.argv[1:]))
