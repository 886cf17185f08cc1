"""`--launcher srun` inside a real allocation (`salloc -N 3` on the Slurm of the simulated
cluster): the probe travels on srun's stdin to one task per node; nothing goes over SSH."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import envcheck_exe, run_cli

# sshd's default PATH for a non-interactive command: srun exports the caller's environment to the
# tasks, so the same PATH makes the facts comparable with an audit over SSH
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture(scope="module")
def slurm_cluster(slurm_factory):
    # SlurmdTimeout 120 (the fixture's is 30): slurmctld pings every 40 s and ends a job on a dead
    # node only after 120 s. With 30, a loaded CI machine outlasted it: node03 went DOWN mid-audit,
    # Slurm ended the job, and node02's retry step found "Job/step already completing or completed"
    s = slurm_factory(3, settings={"SlurmdTimeout": "120"})
    yield s
    s.close()


def salloc(s, *argv, nodes=3, timeout=180, extra_env=None, per_node=1, **kw):
    env = {"PATH": PATH, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", **s.env, **(extra_env or {})}
    return subprocess.run(["salloc", f"-N{nodes}", f"--ntasks-per-node={per_node}", *argv], capture_output=True,
                          text=True, timeout=timeout, env=env, **kw)


def _comparable(facts):
    facts = json.loads(json.dumps(facts))
    for k in ("probe", "env", "interfaces"):
        facts.pop(k, None)
    h = facts.get("health") or {}
    h.pop("seconds", None)
    (h.get("kernel_log") or {}).pop("uptime_s", None)
    return facts


def test_audit_through_srun_reports_every_node_with_the_same_facts_as_over_ssh(slurm_cluster):
    s = slurm_cluster
    s.cluster.trust_all_host_keys()
    r = salloc(s, envcheck_exe(), "audit", "--launcher", "srun", "--json")
    assert r.returncode in (0, 1), r.stderr[-2000:]
    doc = json.loads(r.stdout)
    ssh = json.loads(run_cli("audit", *s.names, "--ssh-config", str(s.cluster.ssh_config), "--json",
                             env={"PATH": PATH + ":" + os.path.dirname(envcheck_exe())}, timeout=180).stdout)
    assert [h["host"] for h in doc["hosts"]] == s.names
    assert all(h["error"] is None for h in doc["hosts"]), [h["error"] for h in doc["hosts"]]
    for a, b in zip(doc["hosts"], ssh["hosts"]):
        assert _comparable(a["facts"]) == _comparable(b["facts"]), a["host"]
        assert [f["code"] for f in a["findings"]] == [f["code"] for f in b["findings"]]
    assert doc["slurm"]["job_id"].isdigit() and doc["slurm"]["nodes"] == s.names
    assert len(doc["slurm"]["steps"]) == 1 and doc["slurm"]["steps"][0].startswith(doc["slurm"]["job_id"] + ".")
    assert sum(h.exec_count() for h in s) == 3            # the SSH audit's three, none from srun


def test_large_allocations_go_in_steps_of_the_size_asked(slurm_cluster):
    r = salloc(slurm_cluster, envcheck_exe(), "audit", "--launcher", "srun", "--step-size", "2", "--json")
    doc = json.loads(r.stdout)
    assert [h["host"] for h in doc["hosts"]] == slurm_cluster.names and all(h["facts"] for h in doc["hosts"])
    assert len(set(doc["slurm"]["steps"])) == 2, doc["slurm"]


def not_responding(s, node):
    """sinfo's own mark for a node that misses slurmctld's pings: a `*` after the state."""
    r = subprocess.run(["sinfo", "-h", "-N", "-n", node, "-o", "%t"], capture_output=True, text=True,
                       env={"PATH": PATH, **s.env}, timeout=30)
    return r.stdout.strip().endswith("*")


def audit_with_a_dead_slurmd(s, tmp_path, dead, *, wait_noticed):
    """`audit --launcher srun --json` as the first step of a 3-node allocation, after `dead`'s
    slurmd is killed: at once, or once slurmctld marks the node not responding."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    p = subprocess.Popen(["salloc", "-N3", "sh", "-c",
                          f'touch {ready}; while [ ! -e {go} ]; do sleep 0.2; done; exec "$0" audit --launcher srun --json',
                          envcheck_exe()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={"PATH": PATH, "HOME": "/root", **s.env})
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else "no allocation"
            time.sleep(0.2)
        s.kill_slurmd(dead)
        deadline = time.monotonic() + 90
        while wait_noticed and not not_responding(s, dead.name):
            assert time.monotonic() < deadline, "slurmctld never marked the node not responding"
            time.sleep(1)
        go.touch()
        out, err = p.communicate(timeout=150)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        s.start_slurmd(dead)
    s.wait_nodes(lambda st: st in ("idle", "mixed"), timeout=90)
    assert p.returncode == 3, (p.returncode, err[-1500:])
    doc = json.loads(out)
    assert doc["hosts"][2]["facts"] is None
    return {h["host"]: h for h in doc["hosts"]}


def launched_and_failed(hosts):
    """Slurm still counted node03 up: srun tried it and said why it failed; the others answered."""
    e = hosts["node03"]["error"]
    return ("Task launch for StepId=" in e and "failed on node node03" in e
            and bool(hosts["node01"]["facts"] and hosts["node02"]["facts"]))


def left_out_and_held(hosts):
    """slurmctld marked node03 not responding: it is left out, and the step on the others, the
    job's first, was held and given up after a few seconds, saying why and what to do."""
    others = [hosts[n]["error"] or "" for n in ("node01", "node02")]
    return ("slurm: node03 is not responding (State=" in hosts["node03"]["error"]
            and all("Requested nodes are busy" in e and "salloc --exclude=node03" in e for e in others))


def test_a_node_whose_slurmd_died_is_not_audited_with_sruns_reason_and_exit_3(slurm_cluster, tmp_path):
    hosts = audit_with_a_dead_slurmd(slurm_cluster, tmp_path, slurm_cluster["node03"], wait_noticed=False)
    # before slurmctld's next ping srun tries the node; a CI machine slow enough to let the ping
    # come first gets the next test's answer, as a user would
    assert launched_and_failed(hosts) or left_out_and_held(hosts), {h: v["error"] for h, v in hosts.items()}


def test_a_node_slurm_marks_not_responding_is_left_out_and_the_held_step_given_up(slurm_cluster, tmp_path):
    # such a step used to wait, without a word, until the audit's own srun timeout (150 s), and
    # every node's answer was lost
    hosts = audit_with_a_dead_slurmd(slurm_cluster, tmp_path, slurm_cluster["node03"], wait_noticed=True)
    assert left_out_and_held(hosts), {h: v["error"] for h, v in hosts.items()}


def doctor(s, tmp_path, *extra, extra_env=None):
    junit, prom = tmp_path / "d.xml", tmp_path / "d.prom"
    r = salloc(s, envcheck_exe(), "doctor", "--launcher", "srun", "--backend", "gloo", "--no-deep",
               "--no-expect-gpus", "--node-python", sys.executable, "--max-bytes", "1M",
               "--collective-timeout", "60", "--json", "--junit", str(junit), "--prometheus", str(prom), *extra,
               timeout=400, extra_env=extra_env)
    return r, json.loads(r.stdout or "{}"), junit, prom


def test_doctor_through_srun_runs_the_allreduce_across_the_allocation(slurm_cluster, tmp_path):
    import junitparser
    from prometheus_client.parser import text_string_to_metric_families
    r, doc, junit, prom = doctor(slurm_cluster, tmp_path)
    assert r.returncode == 0, (doc.get("nodes"), r.stderr[-2000:])
    ar = [c for c in doc["checks"] if c["check"] == "allreduce"]
    assert [(c["host"], c["status"]) for c in ar] == [(h, "PASS") for h in slurm_cluster.names]
    assert [m["name"] for m in doc["measurements"] if m["name"] == "allreduce_busbw_gbps"]
    job, steps = doc["slurm"]["job_id"], doc["slurm"]["steps"]
    # the probe, torch's import (--no-deep: the audit did not import it), the free port, the ranks
    assert len(steps) == 4 and all(st.startswith(job + ".") for st in steps), steps
    props = {p.name: p.value for suite in junitparser.JUnitXml.fromfile(str(junit)) for p in suite.properties()}
    assert props == {"slurm_job_id": job, "slurm_steps": ",".join(steps)}
    fam = {f.name: f for f in text_string_to_metric_families(prom.read_text())}
    assert fam["envcheck_doctor_slurm_job"].samples[0].labels == {"job_id": job, "steps": ",".join(steps)}


SCRIPTS = Path(__file__).resolve().parent.parent / "launch" / "scripts"


def test_nccl_test_through_srun_sweeps_sizes_across_the_allocation(slurm_cluster):
    r = salloc(slurm_cluster, envcheck_exe(), "nccl-test", "--launcher", "srun", "--backend", "gloo",
               "--node-python", sys.executable, "--min-bytes", "1K", "--max-bytes", "64K", "--factor", "8",
               "--warmup", "1", "--iters", "2", "--json", timeout=300)
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    doc = json.loads(r.stdout)
    assert [row["bytes"] for row in doc["rows"]] == [1024, 8192, 65536] and doc["summary"]["wrong"] == 0
    assert doc["world_size"] == 3 and doc["slurm"]["nodes"] == slurm_cluster.names
    assert len(doc["slurm"]["steps"]) == 2          # the free port, the ranks


def rank_lines(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("[node"):
            where, _, rest = line[1:].partition("] ")
            host, rank = where.split(":")
            out.setdefault((host, int(rank)), []).append(rest)
    return out


def test_launch_through_srun_trains_as_over_ssh(slurm_cluster):
    ref = subprocess.run([sys.executable, str(SCRIPTS / "ddp_tiny.py"), "--single", "--world", "4"],
                         capture_output=True, text=True, timeout=120)
    want = [json.loads(x[len("PARAMS "):]) for x in ref.stdout.splitlines() if x.startswith("PARAMS ")][0]
    r = salloc(slurm_cluster, envcheck_exe(), "launch", "--launcher", "srun", "--node-python", sys.executable,
               "--nproc-per-node", "2", "--chdir", str(SCRIPTS), "--json", "--", "ddp_tiny.py", timeout=300,
               nodes=2, per_node=2)
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-2500:]
    d = json.loads(r.stdout)
    assert d["failure"] is None and d["world_size"] == 4 and d["master_addr"] == "node01"
    lines = rank_lines(r.stderr)
    assert sorted(lines) == [("node01", 0), ("node01", 1), ("node02", 2), ("node02", 3)]
    for (host, rank), got in lines.items():
        assert f"env MASTER_ADDR=node01 LOCAL_RANK={rank % 2} LOCAL_WORLD_SIZE=2 WORLD_SIZE=4" in got
        (p,) = [json.loads(x[len("PARAMS "):]) for x in got if x.startswith("PARAMS ")]
        flat = lambda ps: [v for row in ps for v in row]   # noqa: E731
        assert flat(p) == pytest.approx(flat(want), abs=1e-5)


def test_launch_through_srun_names_the_first_failing_rank_and_stops_the_others(slurm_cluster):
    t0 = time.monotonic()
    r = salloc(slurm_cluster, envcheck_exe(), "launch", "--launcher", "srun", "--node-python", sys.executable,
               "--nproc-per-node", "1", "--chdir", str(SCRIPTS), "--no-audit", "--json", "--",
               "ddp_tiny.py", "--raise-rank", "1", timeout=300)
    assert r.returncode == 1, r.stdout[-1500:] + r.stderr[-2500:]
    f = json.loads(r.stdout)["failure"]
    # exit code 1 where srun heard rank 1 exit; None where a gloo peer aborted first and srun
    # terminated rank 1 while it was still tearing down (tests/slurm/test_srun_culprit.py)
    assert (f["kind"], f["host"], f["rank"], f["exit_code"] in (1, None)) == ("rank_failed", "node02", 1, True), f
    assert "boom from rank 1" in "\n".join(rank_lines(r.stderr)[("node02", 1)])
    assert time.monotonic() - t0 < 120


def test_nothing_is_left_running_on_any_node(slurm_cluster):
    assert {h.name: slurm_cluster.strays(h) for h in slurm_cluster} == {h.name: [] for h in slurm_cluster}
