"""Staging directories over real SSH on the simulated cluster: every run on every host stages in
a directory of its own, so runs at once on one host, and hosts sharing one --tmpdir (an NFS
scratch: here /var/tmp, which the simulated hosts share with this machine), install together."""
from __future__ import annotations

import json
import subprocess

import pytest

from envcheck.install.cuda import sha256_file
from tests.conftest import envcheck_exe
from tests.cluster.standins import gpu_list, set_driver
from tests.provision.standins import cuda_runfile, cudnn_archive

GCC7 = "#!/bin/sh\n# stand-in: gcc 7 (CUDA 10.0's newest) cannot be installed here\necho 7.5.0\n"


def _setup(h):
    h.write_file("/usr/local/bin/gcc", GCC7, 0o755)
    set_driver(h, "550.54.15", gpu_list("V100", 2))


@pytest.fixture(scope="module")
def c3(cluster_factory):
    c = cluster_factory(3, per_host_setup=_setup)
    c.trust_all_host_keys()
    yield c
    c.close()


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    d = tmp_path_factory.mktemp("staging-assets")
    return {"10.0": cuda_runfile(d, "10.0.130"), "12.4": cuda_runfile(d, "12.4.1"),
            "cudnn": cudnn_archive(d, "7.6.5.32", "10.0")}


def _shared(c3, name):
    d = c3.base / name           # under /var/tmp: the same directory on every simulated host
    d.mkdir(mode=0o1777)
    d.chmod(0o1777)               # world-writable and sticky, like a shared scratch
    return d


def _staged_dirs(outcomes) -> set:
    return {line.split(" to ", 1)[1].rsplit("/", 1)[0]
            for o in outcomes for line in o["lines"] if line.startswith("uploaded ")}


def test_three_hosts_sharing_one_staging_directory_install_cuda_and_cudnn_together(c3, assets, cli):
    shared = _shared(c3, "scratch-3hosts")
    run = assets["10.0"]
    common = [c3.hostlist, "--ssh-config", str(c3.ssh_config), "--tmpdir", str(shared), "--json"]
    r = cli("install-cuda", "10.0", "--runfile", str(run), "--sha256", sha256_file(str(run)), *common,
            timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    outs = json.loads(r.stdout)
    assert [o["status"] for o in outs] == ["changed"] * 3
    dirs = _staged_dirs(outs)
    assert len(dirs) == 3 and all(d.startswith(f"{shared}/envcheck.") for d in dirs), dirs
    for h in c3:
        assert "CUDA Version 10.0.130" in h.read_file("/usr/local/cuda-10.0/version.txt")
    r = cli("install-cudnn", str(assets["cudnn"]), "--cuda", "10.0", *common, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    outs = json.loads(r.stdout)
    assert [o["status"] for o in outs] == ["changed"] * 3 and len(_staged_dirs(outs)) == 3
    assert list(shared.iterdir()) == []          # each run removed its own directory, and only it


def test_two_runs_at_once_on_one_host_each_stage_in_their_own_directory(c3, assets):
    shared = _shared(c3, "scratch-2runs")
    host = c3[0].name
    c3[0].run_local("rm -rf /usr/local/cuda-10.0 /usr/local/cuda-12.4")
    procs = []
    for version in ("10.0", "12.4"):
        run = assets[version]
        argv = [envcheck_exe(), "install-cuda", version, host, "--runfile", str(run), "--sha256",
                sha256_file(str(run)), "--no-symlink", "--ssh-config", str(c3.ssh_config),
                "--tmpdir", str(shared), "--json"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, out[-1500:] + err
    dirs = [_staged_dirs(json.loads(out)) for out, _ in results]
    assert len(dirs[0] | dirs[1]) == 2, dirs
    assert "CUDA Version 10.0.130" in c3[0].read_file("/usr/local/cuda-10.0/version.txt")
    assert c3[0].exists("/usr/local/cuda-12.4/version.json")
    assert list(shared.iterdir()) == []
