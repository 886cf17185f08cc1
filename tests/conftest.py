"""Shared test helpers. The simulated cluster fixture lives in tests/cluster/."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Some test modules say `from conftest import run_cli`; tests/ is a package, so that only resolves
# with tests/ itself on sys.path. Put it there once, instead of depending on collection order.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))


def _path_python3_has_torch() -> str:
    """The python3 on PATH, when torch is importable there; else ''."""
    py = shutil.which("python3")
    if not py:
        return ""
    r = subprocess.run([py, "-c", "import importlib.util as u; print(u.find_spec('torch') is not None)"],
                       capture_output=True, text=True, timeout=60)
    return py if r.stdout.strip() == "True" else ""


def pytest_sessionstart(session):
    # Workers the tests start must run under an interpreter the suite provisioned (.venv), never
    # under whatever python3 the machine has: a suite that passes only because someone once
    # installed torch into the machine's python3 fails on every fresh machine.
    py = _path_python3_has_torch()
    if py:
        pytest.exit(f"the python3 on PATH ({py}) has torch, so tests could pass only because of it; "
                    f"run the suite through `bash tests/run.sh` (it puts a python3 without torch "
                    f"first on PATH), or prepend one yourself", returncode=4)


def envcheck_exe() -> str:
    """The installed console script next to this interpreter (a venv's bin/), else on PATH."""
    cand = Path(sys.executable).parent / "envcheck"
    if cand.exists():
        return str(cand)
    found = shutil.which("envcheck")
    if not found:
        pytest.skip("the envcheck console script is not installed (pip install .)")
    return found


def run_cli(*args: str, env=None, input=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the installed `envcheck` console script as a user would."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([envcheck_exe(), *args], capture_output=True, text=True, env=full_env,
                          input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def matrix_parsed_once(monkeypatch):
    """In-process CLI runs load the packaged matrix once per test, not once per run: the source
    tree has no compiled JSON, so each load parses the YAML (~0.15 s). A matrix named by path is
    still loaded every time."""
    import functools

    from envcheck.matrix import load
    real = load.load_matrix
    packaged = functools.lru_cache(maxsize=None)(lambda: real())
    monkeypatch.setattr(load, "load_matrix", lambda path=None: packaged() if path is None else real(path))


# The simulated cluster (tests/cluster/README.md): fixtures `cluster_factory` (session) and
# `make_cluster` (per test); tests that use them are marked `cluster` and skip where it cannot run.
# Real Slurm on it: `slurm_factory` (session) and `slurm_cluster` (module), marked `slurm` too.
from tests.cluster.fixtures import cluster_factory, make_cluster  # noqa: E402,F401
from tests.cluster.fixtures import slurm_cluster, slurm_factory  # noqa: E402,F401
from tests.cluster.fixtures import pytest_collection_modifyitems  # noqa: E402,F401
