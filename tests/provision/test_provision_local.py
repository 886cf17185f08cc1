"""provision refuses a stack the rules reject before any node is touched (here: this machine,
where nothing may change)."""
from __future__ import annotations

import yaml

from envcheck.provision.playbooks import find_playbook


def test_an_incompatible_stack_is_refused_with_the_reasons_and_exit_1(tmp_path, cli):
    pb = yaml.safe_load(find_playbook("cuda10.0-cudnn7.6-torch1.1").read_text())
    pb["stack"]["python"] = ["3.7", "3.10"]        # torch 1.1.0 has no wheel for 3.10
    path = tmp_path / "old-on-new-python.yaml"
    path.write_text(yaml.safe_dump(pb))
    r = cli("provision", str(path))
    assert r.returncode == 1, r.stderr
    assert "stack cuda10.0-cudnn7.6-torch1.1 refused: [python]" in r.stderr and "3.10" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout.count("\n") <= 1   # only the header line


def test_a_real_run_without_the_runfile_is_refused_before_any_node(tmp_path, cli):
    r = cli("provision", "cuda12.4-cudnn9.1-torch2.5", "--files", str(tmp_path))
    assert r.returncode == 2
    assert "steps[0].install-cuda.runfile: cuda_12.4.1_550.54.15_linux.run not found" in r.stderr
