"""`envcheck slurm-check` on this machine: the deadline holds against a hanging scontrol, the
wrapper `--print-config` installs runs with Slurm's empty environment, bad input is one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, run_cli

SHOW = (Path(__file__).resolve().parent.parent / "fixtures" / "slurm" / "scontrol-show-node.txt").read_text()


def _alive_with(marker: str):
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd:
            out.append(cmd)
    return out


def _standin(tmp_path, body: str) -> str:
    p = tmp_path / "scontrol"
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return str(p)


def test_a_hanging_scontrol_does_not_keep_the_hook_past_its_deadline(tmp_path):
    hang = _standin(tmp_path, "exec sleep 600\n")
    t0 = time.monotonic()
    r = run_cli("slurm-check", "--node", "node01", "--scontrol", hang, "--scontrol-timeout", "4",
                "--deadline", "20", "--state-dir", str(tmp_path / "state"), "--json", timeout=60)
    took = time.monotonic() - t0
    assert took < 20 + 3, took
    doc = json.loads(r.stdout)
    assert doc["scontrol"][0]["error"] == "scontrol timed out after 4 s"
    assert doc["decision"]["action"] == "nothing" and "could not be read" in doc["decision"]["why"]
    assert _alive_with(hang) == []                                 # the hung call was killed, not left


def test_a_scontrol_that_answers_then_hangs_on_the_drain_still_ends_in_time(tmp_path):
    # the node reads as idle with no reason; --strict makes this machine's warnings drain it
    line = next(l for l in SHOW.splitlines() if l.startswith("NodeName=node02")).replace("node02", "node09")
    line = line.split(" State=")[0] + " State=IDLE ThreadsPerCore=1"
    sc = _standin(tmp_path, f'if [ "$1" = -o ]; then echo {json.dumps(line)}; exit 0; fi\nexec sleep 600\n')
    t0 = time.monotonic()
    r = run_cli("slurm-check", "--node", "node09", "--scontrol", sc, "--scontrol-timeout", "3", "--strict",
                "--deadline", "25", "--mode", "epilog", "--state-dir", str(tmp_path / "state"), "--json", timeout=60)
    assert time.monotonic() - t0 < 25 + 3
    doc = json.loads(r.stdout)
    assert doc["want"] == "drain" and doc["decision"]["action"] == "drain", doc
    assert [c["error"] for c in doc["scontrol"]] == ["", "scontrol timed out after 3 s"]
    # an Epilog that could not drain exits 1 (Slurm then drains: 'Epilog error') and records why
    assert r.returncode == 1
    rec = json.loads((tmp_path / "state" / "slurm-hook.json").read_text())
    assert rec["mode"] == "epilog" and rec["reason"] == doc["reason"] and rec["reason"].startswith("envcheck: ")
    assert _alive_with(sc) == []


def test_the_printed_wrapper_runs_with_slurms_empty_environment_and_takes_its_mode_from_the_context(tmp_path):
    wrapper = tmp_path / "sbin" / "envcheck-slurm-hook"
    state = tmp_path / "state"
    r = run_cli("slurm-check", "--print-config", "--wrapper", str(wrapper), "--state-dir", str(state),
                "--no-expect-gpus", "--interval", "30")
    assert r.returncode == 0, r.stderr
    assert f"#   HealthCheckProgram={wrapper}" in r.stdout and "#   HealthCheckInterval=30" in r.stdout
    subprocess.run(["sh", "-e"], input=r.stdout, text=True, check=True, capture_output=True)
    text = wrapper.read_text()
    assert " -m envcheck slurm-check " in text and "--scontrol /" in text and "--no-expect-gpus" in text
    # as slurmd starts a Prolog: no PATH, no HOME, only Slurm's variables
    p = subprocess.run([str(wrapper)], env={"SLURMD_NODENAME": "node07", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd",
                                            "SLURM_JOB_ID": "42"}, capture_output=True, text=True, timeout=60, cwd="/")
    assert p.stdout.startswith("envcheck slurm-check --mode prolog on node07: "), (p.stdout, p.stderr)
    assert p.returncode == 0 and "scontrol" not in p.stdout.split("action:")[0]   # a Prolog calls no scontrol


def test_bad_options_are_one_line_with_the_fix(tmp_path):
    r = run_cli("slurm-check", "--mode", "nightly")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--mode 'nightly' is not one of healthcheck, prolog, epilog" in r.stderr and "fix:" in r.stderr
    r = run_cli("slurm-check", "--xid-since", "a day")
    assert r.returncode == 2 and "--xid-since 'a day' is not a duration" in r.stderr


def test_the_printed_wrapper_keeps_node_python_and_matrix_by_absolute_path(tmp_path):
    # a hook runs with no PATH and no ENVCHECK_MATRIX: both must be written into the wrapper, quoted
    d = tmp_path / "with space"
    d.mkdir()
    py = d / "python3"
    py.symlink_to(sys.executable)
    matrix = d / "matrix.yaml"
    matrix.write_text((REPO / "compat_matrix.yaml").read_text())
    wrapper = tmp_path / "hook"
    r = run_cli("slurm-check", "--print-config", "--wrapper", str(wrapper), "--node-python", str(py),
                "--matrix", str(matrix), "--state-dir", str(tmp_path / "state"))
    assert r.returncode == 0, r.stderr
    subprocess.run(["sh", "-e"], input=r.stdout, text=True, check=True, capture_output=True)
    text = wrapper.read_text()
    assert f"--node-python '{py}'" in text and f"--matrix '{matrix}'" in text
    r = run_cli("slurm-check", "--print-config", "--node-python", "no-such-python3")
    assert r.returncode == 2 and "--node-python: 'no-such-python3' is not an executable here" in r.stderr
