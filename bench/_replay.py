"""The tree `explain` had at an older commit, for the benches that replay a held-out round as it
was scored once (bench/explain_cv.py, bench/explain_rank_cv.py)."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]


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
