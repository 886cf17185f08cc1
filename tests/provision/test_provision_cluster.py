"""`envcheck provision` on the simulated cluster: real sshd per host, real makeself runfile and
cuDNN archive stand-ins (tests/provision/standins.py), real pip into a per-host venv."""
from __future__ import annotations

import json
import site
import sys

import pytest
import yaml

from tests.conftest import run_cli
from tests.provision.standins import cuda_runfile, cudnn_archive, sha256
from tests.install.test_pip_step import make_wheel
from envcheck.provision.playbooks import find_playbook

BASE_PY = sys.base_prefix + "/bin/python3"   # bound read-only into every host
PYVER = "%d.%d" % sys.version_info[:2]
SUITE_SITE = [p for p in site.getsitepackages() if p.startswith(sys.prefix)]
VENV = "/root/pbvenv"                         # /root is private per host


@pytest.fixture(scope="module")
def c2(cluster_factory):
    c = cluster_factory(2)
    c.trust_all_host_keys()
    for h in c:
        # gcc 7 for the CUDA 10.0 dry run (the machine's gcc is newer than 10.0 accepts); a venv
        # per host for the pip step, its site-packages private to the host
        h.write_file("/usr/local/bin/gcc", "#!/bin/sh\necho 7.5.0\n", mode=0o755)
        h.run_local(f"{BASE_PY} -m venv --without-pip {VENV}")
        # torch (and pip) from the suite's own .venv, bound read-only into every host; never the
        # base interpreter's site-packages, which has torch only where someone put it by hand
        h.write_file(f"{VENV}/lib/python{PYVER}/site-packages/suite-venv.pth", "\n".join(SUITE_SITE) + "\n")
    yield c
    c.close()


def provision(c, playbook, *extra, timeout=600):
    p = run_cli("provision", str(playbook), c.hostlist, "--ssh-config", str(c.ssh_config),
                "--node-python", f"{VENV}/bin/python", "--json", *extra, timeout=timeout)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"rc {p.returncode}: {p.stdout[-800:]} {p.stderr[-1500:]}")


def statuses(doc):
    return {h["host"]: [(s["step"], s["status"]) for s in h["steps"]] for h in doc["hosts"]}


@pytest.mark.parametrize("name", ["cuda10.0-cudnn7.6-torch1.1", "cuda12.4-cudnn9.1-torch2.5"])
def test_dry_run_of_each_shipped_playbook_prints_the_plan_and_changes_nothing(c2, name):
    before = [h.run_local("ls /usr/local; cat /root/.bashrc 2>/dev/null | md5sum").stdout for h in c2]
    p, doc = provision(c2, name, "--dry-run")
    assert p.returncode == 0, (doc, p.stderr[-1000:])
    for host, steps in statuses(doc).items():
        assert [s for s, _ in steps][:3] == ["install-cuda", "install-cudnn", "env"]
        assert all(st in ("would-change", "unchanged") for _, st in steps), steps
    lines = " ".join(line for h in doc["hosts"] for s in h["steps"] for line in s["lines"])
    assert "would" in lines and "download" in " ".join(doc["notes"]) + lines
    assert [h.run_local("ls /usr/local; cat /root/.bashrc 2>/dev/null | md5sum").stdout for h in c2] == before


def test_a_real_run_installs_every_step_and_a_second_run_changes_nothing(c2, tmp_path):
    files = c2.base / "pbfiles"          # under the cluster dir: readable by the controller
    run = cuda_runfile(files, "10.0.130", name="cuda_10.0.130_stand-in_linux.run")
    archive = cudnn_archive(files, "7.6.5.32", "10.0")
    make_wheel(files / "wheels")
    pb = yaml.safe_load(find_playbook("cuda10.0-cudnn7.6-torch1.1").read_text())
    pb["name"] = "test-stand-in"
    pb["steps"] = [
        {"install-cuda": {"version": "10.0.130", "runfile": run.name, "sha256": sha256(run), "tmpdir": "/tmp"}},
        {"install-cudnn": {"archive": archive.name, "cuda": "10.0", "tmpdir": "/tmp"}},
        {"env": {"cuda_home": "/usr/local/cuda-10.0"}},
        {"pip": {"packages": ["envcheck-demo-pkg==1.2.3"], "find_links": str(files / "wheels"), "no_index": True}},
        {"audit": {"deep": False}},
        {"nccl-test": {"backend": "gloo", "max_bytes": "64K", "timeout": 30}},
    ]
    path = tmp_path / "stand-in.yaml"
    path.write_text(yaml.safe_dump(pb, sort_keys=False))
    p, doc = provision(c2, path, "--files", str(files))
    assert p.returncode == 0, ([(h["host"], h["steps"][-1]["problems"]) for h in doc["hosts"]], p.stderr[-1500:])
    for host, steps in statuses(doc).items():
        assert steps == [("install-cuda", "changed"), ("install-cudnn", "changed"), ("env", "changed"),
                         ("pip", "changed"), ("audit", "unchanged"), ("nccl-test", "unchanged")], (host, steps)
    assert any(line.startswith("nccl-test ok: busbw") for s in doc["hosts"][0]["steps"] for line in s["lines"])
    h = c2["node01"]
    assert h.run_local("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-10.0"
    assert "CUDNN_MAJOR 7" in h.read_file("/usr/local/cuda-10.0/include/cudnn.h")
    assert "# >>> envcheck >>>" in h.read_file("/root/.bashrc")
    assert h.run_local(f"{VENV}/bin/python -c 'import envcheck_demo_pkg'", check=False).returncode == 0

    p2, doc2 = provision(c2, path, "--files", str(files))
    assert p2.returncode == 0
    for host, steps in statuses(doc2).items():
        assert all(st == "unchanged" for _, st in steps), (host, steps)
    assert sum(s["bytes_uploaded"] + s["installers_run"] for h in doc2["hosts"] for s in h["steps"]) == 0


def test_an_unknown_step_key_is_refused_with_file_and_key_path(tmp_path, cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: 1\nname: x\nstack: {cuda: '12.4.1'}\nsteps:\n  - env: {cuda_hom: /usr/local/cuda-12.4}\n")
    p = cli("provision", str(bad), "--dry-run")
    assert p.returncode == 2
    assert "bad.yaml: steps[0].env.cuda_hom: unknown key" in p.stderr and "Traceback" not in p.stderr


def test_a_host_stops_at_its_first_failed_step_while_the_others_go_on(c2, tmp_path):
    files = c2.base / "pbfiles2"
    make_wheel(files / "wheels")
    pb = {"schema": 1, "name": "pip-then-audit", "stack": {"python": ["3.11"]},
          "steps": [{"pip": {"packages": ["envcheck-demo-pkg==1.2.3"], "find_links": str(files / "wheels"),
                             "no_index": True}},
                    {"audit": {"deep": False}}]}
    path = tmp_path / "pip.yaml"
    path.write_text(yaml.safe_dump(pb))
    c2["node02"].run_local(f"mv {VENV} {VENV}.off")     # node02's interpreter is gone
    try:
        p, doc = provision(c2, path)
    finally:
        c2["node02"].run_local(f"mv {VENV}.off {VENV}")
    assert p.returncode == 1
    runs = {h["host"]: h for h in doc["hosts"]}
    assert runs["node02"]["stopped"].startswith("steps[0].pip: pip facts under /root/pbvenv/bin/python")
    assert [s["step"] for s in runs["node02"]["steps"]] == ["pip"]
    assert runs["node01"]["ok"] and [s["step"] for s in runs["node01"]["steps"]] == ["pip", "audit"]
