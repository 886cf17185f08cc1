"""The issue's "done when", over real SSH on the simulated cluster: install-cuda 10.0 on
node[01-04] from a makeself stand-in, a no-op second run, env and cuDNN, a sudo user, and
`envcheck audit` flagging the missing env first and clean for CUDA, cuDNN and env afterwards."""
from __future__ import annotations

import json

import pytest


from envcheck.cli.hostopts import HostSelection
from envcheck.audit.fleet import audit_fleet
from envcheck.install.cuda import sha256_file
from envcheck.matrix.load import load_matrix
from tests.provision.standins import cuda_runfile, cudnn_archive
from tests.cluster.standins import gpu_list, set_driver

GCC7 = "#!/bin/sh\n# stand-in: gcc 7 (CUDA 10.0's newest) cannot be installed here\necho 7.5.0\n"
PW = "c0rrect-h0rse-sudo"


def _setup(h):
    h.write_file("/usr/local/bin/gcc", GCC7, 0o755)
    set_driver(h, "410.79", gpu_list("V100", 2))   # too old for compute_cap: names are looked up


@pytest.fixture(scope="module")
def cl(cluster_factory):
    c = cluster_factory(4, per_host_setup=_setup)
    c.trust_all_host_keys()
    yield c
    c.close()


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    d = tmp_path_factory.mktemp("cluster-assets")
    return {"cuda": cuda_runfile(d, "10.0.130"), "cudnn": cudnn_archive(d, "7.6.5.32", "10.0")}


def _findings(audit_json: str, components) -> list:
    data = json.loads(audit_json)
    found = [f for h in data["hosts"] for f in h.get("findings", [])] + list(data["fleet_findings"])
    return [(f.get("host"), f["component"], f["code"]) for f in found
            if f["component"] in components and f["severity"] in ("error", "warning")]


def test_install_cuda_on_four_nodes_then_a_noop_then_env_cudnn_and_a_clean_audit(cl, assets, cli):
    run = assets["cuda"]
    common = ["--ssh-config", str(cl.ssh_config), "--tmpdir", "/tmp"]
    argv = ["install-cuda", "10.0", cl.hostlist, "--runfile", str(run), "--sha256", sha256_file(str(run)), *common]
    dry = cli(*argv, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    # four identical plans print once, under their hostlist (clush -b), the summary line last
    assert dry.stdout.count("would upload") == 1 and f"{cl.hostlist}: would-change" in dry.stdout, dry.stdout
    assert dry.stdout.splitlines()[-2] == "PASS: 4 hosts: 4 would change; dry run"
    assert dry.stdout.splitlines()[-1].startswith(f"next: envcheck env '{cl.hostlist}' --ssh-config ")
    first = cli(*argv)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "PASS: 4 hosts: 4 changed; " in first.stdout and "uploaded; 4 installers run" in first.stdout
    for h in cl:
        assert h.run_local("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-10.0"
    second = cli(*argv)
    assert second.returncode == 0 and "PASS: 4 hosts: 4 already in place\n" in second.stdout, second.stdout

    pre = cli("audit", cl.hostlist, "--ssh-config", str(cl.ssh_config), "--json")
    # the toolkit is installed, but a non-interactive SSH command (torchrun's) does not find it yet
    assert [code for _, _, code in _findings(pre.stdout, ("env",))] == ["env-nvcc-not-on-path"] * 4

    # env: a fresh non-interactive SSH command (real OpenSSH client, real sshd, the node's own
    # Debian .bashrc with its interactive guard) sees the toolkit
    before = cl.ssh(cl[0], "echo \"[$CUDA_HOME]\"; command -v nvcc || echo no-nvcc")
    assert "[]" in before.stdout and "no-nvcc" in before.stdout
    assert "*) return;;" in cl[0].read_file("/root/.bashrc")
    env = cli("env", cl.hostlist, "--cuda-home", "/usr/local/cuda-10.0", *common[:2])
    assert env.returncode == 0 and "PASS: 4 hosts: 4 changed" in env.stdout, env.stdout + env.stderr
    for h in cl:
        seen = cl.ssh(h, "echo \"[$CUDA_HOME] $LD_LIBRARY_PATH\"; nvcc -V | tail -n1")
        assert "[/usr/local/cuda-10.0] /usr/local/cuda-10.0/lib64" in seen.stdout
        assert "release 10.0, V10.0.130" in seen.stdout

    cudnn = cli("install-cudnn", str(assets["cudnn"]), cl.hostlist, "--cuda", "10.0", *common)
    assert cudnn.returncode == 0 and "PASS: 4 hosts: 4 changed" in cudnn.stdout, cudnn.stdout + cudnn.stderr

    audit = cli("audit", cl.hostlist, "--ssh-config", str(cl.ssh_config), "--json")
    assert audit.returncode == 0, audit.stdout[-2000:] + audit.stderr
    assert not _findings(audit.stdout, ("cuda", "cudnn", "env"))
    remotes = HostSelection(hosts=(cl.hostlist,), ssh_config=cl.ssh_config).remotes()
    fleet = audit_fleet(remotes, load_matrix())
    assert not fleet.unreachable, [r.error for r in fleet.unreachable]
    for r in fleet.results:  # what the probe (non-interactive SSH, like torchrun's) now sees
        f = r.facts
        assert f["cuda"]["version"] == "10.0.130" and f["cuda"]["nvcc"]["release"] == "10.0"
        assert f["cuda"]["symlink"]["target"] == "/usr/local/cuda-10.0"
        assert f["cuda"]["in_use"] == {"path": "/usr/local/cuda-10.0", "via": "PATH"}
        assert f["env"]["CUDA_HOME"] == "/usr/local/cuda-10.0"
        assert f["cudnn"]["version"] == "7.6.5"
        assert {lib["path"] for lib in f["cudnn"]["libs"]} == {"/usr/local/cuda-10.0/lib64/libcudnn.so"}


def test_a_sudo_user_installs_over_ssh_with_the_password_never_shown(cl, assets, cli):
    h = cl[3]
    h.add_user("ecbob", password=PW, sudo=True)
    h.run_local("rm -rf /usr/local/cuda-10.0 /usr/local/cuda")
    run = assets["cuda"]
    r = cli("install-cuda", "10.0", h.name, "--runfile", str(run), "--sha256", sha256_file(str(run)),
            "--ssh-config", str(cl.ssh_config), "--user", "ecbob", "--tmpdir", "/tmp", "--sudo", "--json",
            env={"ENVCHECK_SUDO_PASSWORD": PW})
    assert r.returncode == 0, r.stdout + r.stderr
    assert PW not in r.stdout + r.stderr
    [out] = json.loads(r.stdout)
    assert out["status"] == "changed" and out["installers_run"] == 1
    assert h.run_local("stat -c %U /usr/local/cuda-10.0/bin/nvcc").stdout.strip() == "root"
    assert PW not in h.read_file(str(h.sshd_log)) if hasattr(h, "sshd_log") else True
