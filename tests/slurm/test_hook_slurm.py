"""`envcheck slurm-check` as Slurm runs it: the wrapper from `--print-config` installed on every
node of the real Slurm of the simulated cluster (tests/cluster/slurm.py) as HealthCheckProgram
(every 4 s), Prolog and Epilog. slurmd starts it inside the node's namespaces with only
SLURMD_NODENAME in its environment; the probe, the rules and scontrol are the real ones. Faults:
NVIDIA GPUs on a node's simulated PCI bus with no driver, and a GPU process left by a job (the
stand-in nvidia-smi lists processes marked ENVCHECK_SIM_GPU)."""
from __future__ import annotations

import shutil
import time

import pytest

from tests.cluster import standins
from tests.cluster.pci import nvidia_gpu, set_pci_devices
from tests.conftest import run_cli

HOOK = "/usr/local/sbin/envcheck-slurm-hook"
STATE = "/tmp/envcheck-state"       # the host's private /tmp (the sim shares /var/lib with this machine)
INTERVAL = 4
HEALTH = {"HealthCheckProgram": HOOK, "HealthCheckInterval": str(INTERVAL), "HealthCheckNodeState": "ANY"}
GPU = [nvidia_gpu("0000:3b:00.0", "0x2330")]   # an H100 on the bus, no driver installed


@pytest.fixture(scope="module")
def sl(slurm_factory):
    # the probe runs under a python3 without torch (the one tests/run.sh puts first on PATH): the
    # faults here are the GPU ones, and a CPU torch on a node given GPUs would be a fault of its own
    bare = shutil.which("python3")
    r = run_cli("slurm-check", "--print-config", "--state-dir", STATE, "--deadline", "30", "--xid-since", "1h",
                "--node-python", bare)
    assert r.returncode == 0, r.stderr
    s = slurm_factory(3, settings=HEALTH, per_host_setup=lambda h: h.run_local(r.stdout))
    yield s
    s.close()


def wait_node(s, name, pred, timeout=3 * INTERVAL + 20):
    """Poll `scontrol show node` until pred(fields) holds; the fields, or fail naming the last ones."""
    deadline = time.monotonic() + timeout
    while True:
        n = s.node(name)
        if pred(n):
            return n
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} after {timeout} s: State={n.get('State')} Reason={n.get('Reason')!r}; "
                                 f"slurmd log: {s.log_tail('slurmd-' + name, 12)}")
        time.sleep(0.5)


def no_health_check(s, timeout=40):
    """After HealthCheckInterval=0: wait until no health check is running on any node (one may
    have started before, or with, the reconfigure) and none starts for two seconds."""
    deadline, calm = time.monotonic() + timeout, 0
    while calm < 4:
        busy = [h.name for h in s if any("slurm-check --mode healthcheck" in p for p in h.processes())]
        calm = 0 if busy else calm + 1
        assert time.monotonic() < deadline, f"health checks still running on {busy}"
        time.sleep(0.5)


def drained(n):
    return "DRAIN" in n.get("State", "")


def reason(n):
    return (n.get("Reason") or "").rsplit(" [", 1)[0]


def hook_runs(s, name):
    """Health checks that failed (rc 1) on a node so far: slurmd logs their output."""
    return (s.dir / "log" / f"slurmd-{name}.log").read_text(errors="replace").count("health_check failed: rc:1")


def test_a_node_with_gpus_and_no_driver_is_drained_then_resumed_and_a_healthy_one_stays_idle(sl):
    set_pci_devices(sl["node02"], GPU)
    t0 = time.monotonic()
    n = wait_node(sl, "node02", drained)
    assert time.monotonic() - t0 < 2 * INTERVAL + 15          # within two intervals (plus the hook's own run)
    assert reason(n).startswith("envcheck: driver-not-found: "), n
    sl["node02"].run_local("umount /sys/bus/pci/devices")      # the fault is gone
    wait_node(sl, "node02", lambda n: not drained(n) and not n.get("Reason"))
    assert sl.node_states()["node01"] == "idle" and not sl.node("node01").get("Reason")


def test_an_operators_drain_keeps_its_reason_whether_the_node_is_healthy_or_failing(sl):
    sl.run("scontrol", "update", "nodename=node03", "state=drain", "reason=maintenance: fan")
    try:
        time.sleep(3 * INTERVAL)                                # healthy: three chances to resume it wrongly
        assert reason(sl.node("node03")) == "maintenance: fan"
        before = hook_runs(sl, "node03")
        set_pci_devices(sl["node03"], GPU)                      # failing: a chance to overwrite it
        deadline = time.monotonic() + 3 * INTERVAL + 20
        while hook_runs(sl, "node03") == before and time.monotonic() < deadline:
            time.sleep(0.5)
        assert hook_runs(sl, "node03") > before, "the health check never ran on node03"
        n = sl.node("node03")
        assert drained(n) and reason(n) == "maintenance: fan"
        assert "already has a reason envcheck did not write, kept: 'maintenance: fan'" in sl.log_tail("slurmd-node03", 30)
    finally:
        sl["node03"].run_local("umount /sys/bus/pci/devices", check=False)
        sl.run("scontrol", "update", "nodename=node03", "state=resume")


def test_a_failing_prolog_drains_and_the_next_health_check_gives_envchecks_reason_then_resumes(sl):
    sl.reconfigure({"HealthCheckInterval": "0", "Prolog": HOOK})   # no health check in between
    try:
        no_health_check(sl)
        set_pci_devices(sl["node01"], GPU)
        r = sl.run("srun", "-w", "node01", "true", check=False, timeout=90)
        assert r.returncode != 0 and "prolog" in r.stderr.lower(), r.stderr
        n = wait_node(sl, "node01", drained, timeout=20)
        assert reason(n) == "Prolog error"
        rec = sl["node01"].read_file(f"{STATE}/slurm-hook.json")
        assert '"mode": "prolog"' in rec and "envcheck: driver-not-found" in rec
        sl.reconfigure({"HealthCheckInterval": str(INTERVAL), "Prolog": None})
        n = wait_node(sl, "node01", lambda n: reason(n).startswith("envcheck: driver-not-found"))
        assert drained(n)
        sl["node01"].run_local("umount /sys/bus/pci/devices")
        wait_node(sl, "node01", lambda n: not drained(n))
        assert not sl["node01"].exists(f"{STATE}/slurm-hook.json")
    finally:
        sl["node01"].run_local("umount /sys/bus/pci/devices", check=False)
        sl.reconfigure(dict(HEALTH, Prolog=None))


def test_the_epilog_drains_a_node_whose_job_left_a_gpu_process_until_it_is_gone(sl):
    h = sl["node02"]
    wait_node(sl, "node02", lambda n: not drained(n))
    standins.set_driver(h, "535.104.05", standins.gpu_list("A100", 1))
    sl.reconfigure({"HealthCheckInterval": "0", "Epilog": HOOK})
    try:
        no_health_check(sl)
        # the job starts a process that escapes it (its own session) and holds the GPU
        r = sl.run("srun", "-w", "node02", "sh", "-c", "ENVCHECK_SIM_GPU=00000000:07:00.0 "
                   "setsid sleep 300 </dev/null >/dev/null 2>&1 &", timeout=90)
        n = wait_node(sl, "node02", drained, timeout=40)
        assert reason(n).startswith("envcheck: gpu-processes-left: 1 GPU process(es) of job "), n
        assert "/usr/bin/sleep" in reason(n)
        sl.reconfigure({"HealthCheckInterval": str(INTERVAL), "Epilog": None})
        before = hook_runs(sl, "node02")
        deadline = time.monotonic() + 3 * INTERVAL + 20
        while hook_runs(sl, "node02") == before and time.monotonic() < deadline:
            time.sleep(0.5)
        assert drained(sl.node("node02"))                       # the health check sees the leftover too
        h.run_local("pkill -f '^sleep 300$'")
        wait_node(sl, "node02", lambda n: not drained(n))
    finally:
        h.run_local("pkill -f '^sleep 300$'", check=False)
        standins.set_driver(h, None)
        sl.reconfigure(dict(HEALTH, Epilog=None))
    assert r.returncode == 0


def test_no_hook_or_job_process_is_left_on_any_node(sl):
    sl.reconfigure({"HealthCheckInterval": "0"})
    try:
        no_health_check(sl)
        assert {h.name: sl.strays(h, wait=35) for h in sl} == {h.name: [] for h in sl}
    finally:
        sl.reconfigure(HEALTH)
