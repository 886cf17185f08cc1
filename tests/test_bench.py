"""Every benchmark in bench/ runs in its quick mode (small sizes, one repetition), so none can rot
unseen (bench/probe_cpu.py once died of a NameError nobody ran into). Their figures are printed
for the log and never judged here: a speed or memory target is the bench's own output, read by a
person (GUIDE: "Speed/memory targets live in bench/ scripts that print figures, not in timed
tests"). What fails is a bench that crashes, exits non-zero or prints nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster import sim

REPO = Path(__file__).resolve().parent.parent
BENCHES = sorted(p for p in (REPO / "bench").iterdir()
                 if p.suffix in (".py", ".sh") and not p.name.startswith("_"))
# the benches that build simulated hosts, and those that start torch ranks
SIMULATED = {"audit_fanout.py", "audit_scale.py", "probe_cpu.py", "probe_health.py",
             "provision_rerun.py", "ssh_connect.py", "pairs.py"}
TORCH = {"allreduce.py", "gpu_check.sh", "pairs.py"}


def _torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def test_every_bench_is_listed_here_by_what_it_needs():
    names = {p.name for p in BENCHES}
    assert len(names) >= 12 and (SIMULATED | TORCH) - names == set()


@pytest.mark.parametrize("bench", [
    pytest.param(p, id=p.name, marks=[pytest.mark.cluster] if p.name in SIMULATED else []) for p in BENCHES])
def test_the_bench_runs_in_its_quick_mode(bench, tmp_path):
    if bench.name in SIMULATED:
        why = sim.available()
        if why:
            pytest.skip(why)
    if bench.name in TORCH and not _torch():
        pytest.skip("torch is not installed for this interpreter")
    argv = (["bash", str(bench)] if bench.suffix == ".sh" else [sys.executable, str(bench)]) + ["--quick"]
    env = dict(os.environ, PYTHON=sys.executable, OUT=str(tmp_path / "out"))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO, env=env)
    print(proc.stdout[-4000:])  # the figures, for the log (pytest -s, or a failure's report)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip(), proc.stderr[-2000:]
