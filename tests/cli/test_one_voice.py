"""One output grammar for every command, on clush's conventions: 32 identical hosts fold into one
block under `node[01-32]` and every command ends with the same summary line (doctor, env
--dry-run, install-cuda --dry-run on the simulated cluster); colour everywhere or nowhere
(FORCE_COLOR, NO_COLOR)."""
from __future__ import annotations

import re

import pytest

from tests.cluster.standins import plant_python_package
from tests.conftest import run_cli

SUMMARY = re.compile(r"^(PASS|WARN|FAIL|UNKNOWN): ")


def _torch(h):
    # a torch that imports (metadata and torch.__version__): doctor FAILs a node without one, and
    # 32 real imports would cost a minute of CPU here
    plant_python_package(h, "torch", "2.3.1+cpu", importable=True)


@pytest.fixture(scope="module")
def fleet(cluster_factory):
    c = cluster_factory(32, per_host_setup=_torch)
    c.trust_all_host_keys()
    yield c
    c.close()


@pytest.mark.parametrize("argv", [
    ["doctor", "HOSTS", "--quick", "--no-expect-gpus"],
    ["env", "HOSTS", "--cuda-home", "/usr/local/cuda-12.4", "--dry-run"],
    ["install-cuda", "12.4", "HOSTS", "--dry-run", "--url", "http://mirror.invalid/cuda_12.4.1_550.54.15_linux.run",
     "--no-checksum"],
], ids=["doctor", "env", "install-cuda"])
def test_32_identical_hosts_print_one_folded_block_within_a_screen(fleet, argv):
    r = run_cli(*[fleet.hostlist if a == "HOSTS" else a for a in argv], "--ssh-config", str(fleet.ssh_config),
                "--connect-timeout", "30", timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines() + r.stderr.splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert any(line.startswith("node[01-32]") for line in r.stdout.splitlines()), r.stdout
    assert not any(re.match(r"node\d\d[: ]", line) for line in r.stdout.splitlines()), r.stdout
    summary = [line for line in r.stdout.splitlines() if SUMMARY.match(line)]
    assert len(summary) == 1 and summary[0].startswith("PASS: 32 hosts: 32 "), r.stdout


def test_colour_is_forced_by_force_color_and_refused_by_no_color_in_every_command():
    argv = ["check", "--driver", "396.26", "--cuda", "10.0"]
    forced = run_cli(*argv, env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\033[1;31mFAIL\033[0m: 1 error" in forced.stdout and "\033[1;31merror" in forced.stdout
    assert "\033[" not in run_cli(*argv, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert "\033[" not in run_cli(*argv, env={"FORCE_COLOR": "", "NO_COLOR": ""}).stdout   # piped
    plan = run_cli("plan", "--gpu", "A100", "--limit", "1", env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\033[32mPASS\033[0m: " in plan.stdout
