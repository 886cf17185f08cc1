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


def run_cli(*args: str, env=None, input=None, timeout: float = 120, memory_mib: int = 0) -> subprocess.CompletedProcess:
    """Run the installed `envcheck` console script as a user would (`memory_mib`: its address
    space capped there, so work that grows with a hostile input fails instead of passing slowly)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)

    def cap():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (memory_mib << 20, memory_mib << 20))

    return subprocess.run([envcheck_exe(), *args], capture_output=True, text=True, env=full_env,
                          input=input, timeout=timeout, preexec_fn=cap if memory_mib else None)


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
from tests.cluster.fixtures import mark_cluster_tests  # noqa: E402

# The slowest modules, slowest first (seconds: setup+call+teardown of the whole module in a loaded
# full run, 2026-12-02, /work/notes/citime). tests/run.sh runs xdist's loadscope with
# --no-loadscope-reorder, which hands modules to the 4 workers in collection order; these go first
# so that none of them starts last and sets the run's tail (a 320 s module handed out late kept one
# worker busy long after the others were done). Everything else keeps its collection order.
# Simulated on those figures: ~40 s less than xdist's own order (most tests first). A module
# renamed or removed must leave this list (tests/test_slow_first.py checks that each exists).
SLOW_FIRST = [
    "tests/launch/test_launch_cluster.py",        # 323
    "tests/test_bench.py",                        # 248
    "tests/allreduce/test_nccl_cluster.py",       # 204
    "tests/doctor/test_doctor_cluster.py",        # 196
    "tests/doctor/test_pairs_cluster.py",         # 193
    "tests/allreduce/test_nccl_cmd_local.py",     # 183
    "tests/slurm/test_srun_slurm.py",             # 144
    "tests/launch/test_launch_local.py",          # 129
    "tests/install/test_install_cluster.py",      # 112
    "tests/provision/test_provision_cluster.py",  # 107
    "tests/cli/test_hostile_inputs.py",           # 100
    "tests/slurm/test_hook_slurm.py",             # 76
    "tests/cli/test_check.py",                    # 70
    "tests/rules/test_real_stacks.py",            # 160 (about 60 since d330135)
    "tests/cli/test_every_option.py",             # 69 (less since 0bcaffb)
    "tests/allreduce/test_one_gpu_count.py",      # 65
    "tests/cli/test_audit_fleetview.py",          # 62
    "tests/cli/test_one_voice.py",                # 59
    "tests/install/test_install_cuda.py",         # 58
    "tests/cli/test_audit_fleet.py",              # 51
    "tests/allreduce/test_worker.py",             # 50
    "tests/test_wheel.py",                        # 49
    "tests/test_version_fuzz.py",                 # 46
    "tests/install/test_staging_cluster.py",      # 41
]


def pytest_collection_modifyitems(items) -> None:
    mark_cluster_tests(items)
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    # a stable sort: each module's tests stay together and in their own order
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
