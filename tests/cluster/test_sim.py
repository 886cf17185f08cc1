"""The simulated cluster itself: what other tests rely on must hold."""
import os
import subprocess

import pytest

from tests.cluster import sim, standins


@pytest.fixture(scope="module")
def trio(cluster_factory):
    c = cluster_factory(3)
    yield c
    c.close()


def test_each_host_has_its_own_hostname_machine_id_and_private_usr_local(trio):
    trio[0].write_file("/usr/local/bin/only-on-node01", "#!/bin/sh\necho planted\n", 0o755)
    outs = [trio.ssh(h, "hostname; cat /etc/machine-id; ls /usr/local/bin") for h in trio]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    names = [o.stdout.split()[0] for o in outs]
    ids = [o.stdout.split()[1] for o in outs]
    assert names == ["node01", "node02", "node03"]
    assert len(set(ids)) == 3
    assert "only-on-node01" in outs[0].stdout and "only-on-node01" not in outs[1].stdout
    assert not os.path.exists("/usr/local/bin/only-on-node01")  # the real machine is untouched


def test_ssh_sessions_see_files_planted_with_run_local_and_etc_is_private(trio):
    trio[1].write_file("/etc/profile.d/sim-test.sh", "export SIM=1\n")
    assert trio.ssh(trio[1], "cat /etc/profile.d/sim-test.sh").stdout == "export SIM=1\n"
    assert trio.ssh(trio[2], "test -e /etc/profile.d/sim-test.sh; echo $?").stdout.strip() == "1"
    assert not os.path.exists("/etc/profile.d/sim-test.sh")


def test_hosts_reach_each_other_over_the_bridge(trio):
    r = trio.ssh(trio[0], f"python3 -c \"import socket; s=socket.create_connection(('{trio[2].ip}', 22), 3); print(s.recv(7))\"")
    assert "SSH-2.0" in r.stdout, r.stderr


def test_sshd_log_counts_one_exec_per_command(trio):
    h = trio[2]
    before = h.exec_count()
    trio.ssh(h, "true")
    trio.ssh(h, "true")
    assert h.exec_count() == before + 2


def test_stopped_sshd_refuses_and_restart_keeps_planted_files(trio):
    h = trio[0]
    h.write_file("/root/keep.txt", "kept\n")
    h.stop_sshd()
    try:
        r = trio.ssh(h, "true")
        assert r.returncode == 255 and "refused" in r.stderr
    finally:
        h.start_sshd()
    assert trio.ssh(h, "cat /root/keep.txt").stdout == "kept\n"


def test_nvidia_smi_stand_in_prints_query_csv_and_refuses_compute_cap_on_old_drivers(trio):
    standins.set_driver(trio[0], "470.82.01", standins.gpu_list("A100", 2))
    standins.set_driver(trio[1], "535.104.05", standins.gpu_list("H100", 1))
    q = "nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader,nounits"
    old, new = trio.ssh(trio[0], q), trio.ssh(trio[1], q)
    assert old.returncode == 2 and 'Field "compute_cap" is not a valid field to query.' in old.stdout
    assert new.returncode == 0
    assert new.stdout == "0, NVIDIA H100 80GB HBM3, 535.104.05, 81559, 9.0\n"
    head = trio.ssh(trio[1], "nvidia-smi").stdout
    assert "Driver Version: 535.104.05   CUDA Version: 12.2" in head
    standins.set_driver(trio[0], None)
    assert trio.ssh(trio[0], "command -v nvidia-smi || echo absent").stdout.strip() == "absent"


def test_planted_toolkits_differ_per_host_and_nvcc_prints_real_format(trio):
    standins.plant_toolkit(trio[0], "10.0.130")
    standins.plant_toolkit(trio[1], "12.1.0")
    a = trio.ssh(trio[0], "cat /usr/local/cuda/version.txt; /usr/local/cuda/bin/nvcc -V").stdout
    b = trio.ssh(trio[1], "cat /usr/local/cuda/version.json; readlink /usr/local/cuda; /usr/local/cuda/bin/nvcc -V").stdout
    assert a.startswith("CUDA Version 10.0.130\n") and "release 10.0, V10.0.130" in a
    assert '"version": "12.1.0"' in b and "/usr/local/cuda-12.1" in b and "release 12.1, V12.1.66" in b


def test_non_root_user_with_sudo_password(trio):
    if not os.path.exists("/usr/bin/sudo"):
        pytest.skip("sudo is not installed (tests/run.sh installs it)")
    h = trio[2]
    h.add_user("alice", password="s3cret", sudo=True)
    base = ["ssh", "-F", str(trio.ssh_config), "-l", "alice", h.name]
    ok = subprocess.run(base + ["sudo -S -p '' id -u"], input="s3cret\n", capture_output=True, text=True, timeout=30)
    bad = subprocess.run(base + ["sudo -S -p '' id -u"], input="wrong\n", capture_output=True, text=True, timeout=30)
    assert ok.stdout.strip() == "0", ok.stderr
    assert bad.returncode != 0
    assert trio.ssh(trio[0], "id alice", ).returncode != 0  # the user exists on node03 only


def test_close_removes_namespaces_links_and_directory(cluster_factory):
    c = cluster_factory(2)
    ns, base, bridge = [h.ns for h in c], c.base, c.bridge
    c.close()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in listed for n in ns)
    assert not base.exists()
    assert subprocess.run(["ip", "link", "show", bridge], capture_output=True).returncode != 0


def test_sweeper_removes_leftovers_of_a_dead_run(cluster_factory):
    c = cluster_factory(1)
    (c.base / "owner.pid").write_text("999999999")  # no such process: a crashed run
    assert c.id in sim.sweep_stale()
    assert subprocess.run(["ip", "link", "show", c.bridge], capture_output=True).returncode != 0
    c.closed = True


def test_fake_libnvidia_ml_serves_the_real_nvidia_ml_py_binding_on_a_node(trio):
    pynvml = pytest.importorskip("pynvml")
    import sys
    h = trio[1]
    standins.set_nvml(h, "535.104.05", standins.gpu_list("A100", 2))
    code = ("import pynvml as n; n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(1); "
            "print(n.nvmlSystemGetDriverVersion(), n.nvmlSystemGetCudaDriverVersion(), n.nvmlDeviceGetCount(), "
            "n.nvmlDeviceGetName(h), n.nvmlDeviceGetCudaComputeCapability(h), n.nvmlDeviceGetMemoryInfo(h).total >> 20)")
    # the test interpreter (which has nvidia-ml-py) is exposed read-only on every node
    r = trio.ssh(h, f"{sys.executable} -c '{code}'")
    assert r.stdout.strip() == "535.104.05 12020 2 NVIDIA A100-SXM4-40GB (8, 0) 40960", r.stderr
    standins.set_nvml(h, "535.104.05", fail="mismatch")
    r = trio.ssh(h, f"{sys.executable} -c 'import pynvml as n; n.nvmlInit()'")
    assert "NVMLError_LibRmVersionMismatch" in r.stderr
    other = trio.ssh(trio[0], f"{sys.executable} -c 'import pynvml as n; n.nvmlInit()'")
    assert "NVML Shared Library Not Found" in other.stderr  # the library exists on node02 only


def test_without_root_the_cluster_says_why_it_cannot_run(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "needs root" in sim.available()
