"""envcheck/allreduce/run.py's ranks stage (_run_ranks) over stand-in hosts: LocalRemotes that
write down every command the controller runs on them (the launcher's start, the stops) and, in
place of the launcher, run a small shell command (one that exits 0, one that exits 3), report a
lost connection, or raise. The stops run for real (kill_cmd finds no launcher and removes
nothing that exists). What is compared is whole: every command with its timeout, the payload
shipped on stdin (pairs.json's content as envcheck/allreduce/pairs.py documents it), the report's
host status, logs and failure. The module docstring's promise is what is tested: "as soon as one
host's launcher fails, the controller stops the launchers on every other host"; a lost
connection also stops that host's own launcher; a host whose thread raised is a failed host,
not a crash; every host starts at once, whatever --forks says."""
import json
import re
import shlex
import threading

import pytest

from envcheck.allreduce import run as ar
from envcheck.allreduce.pairs import BUDGET, ITERS, SLOW, STOP, pair_spec
from envcheck.allreduce.preflight import TORCH_FIX
from envcheck.ranks.failure import Failure
from envcheck.ranks.plan import RankPlan
from envcheck.ranks.start import kill_cmd, launcher_cmd, run_dir
from envcheck.remote import LocalRemote, RunResult

OPTS = dict(timeout=20.0, rendezvous_timeout=20.0, run_timeout=60.0, connect_timeout=10.0)


class Host(LocalRemote):
    """A stand-in host: `launcher` is the shell command run in place of the launcher; `lost`, a
    connection error returned instead; `raises`, an exception raised instead. Every call is
    written down as (host, "start"|"stop", command, timeout)."""

    def __init__(self, name, log, launcher="exit 0", lost=None, raises=None, barriers=None):
        super().__init__(name)
        self.log, self.launcher, self.lost, self.raises, self.barriers = log, launcher, lost, raises, barriers
        self.stdin = None

    def run(self, command, *, stdin=None, timeout=30.0, env=None, on_stdout=None):
        kind = "stop" if command.startswith('d="') else "start"
        self.log.append((self.name, kind, command, timeout))
        if self.barriers is not None:   # (start, stop): every host's call must be running at once
            try:
                self.barriers[kind == "stop"].wait()
            except threading.BrokenBarrierError:
                self.log.append((self.name, kind, "not all at once"))
        if kind == "stop":
            return super().run(command, timeout=timeout)
        self.stdin = stdin
        if self.raises:
            raise self.raises
        if self.lost:
            return RunResult(self.name, command, None, error=self.lost)
        return super().run(self.launcher, env=env, timeout=timeout, on_stdout=on_stdout)


def run_ranks(hosts, **opts):
    said = []
    options = ar.Options(node_python="/opt/py/bin/python", nproc_per_node=1, max_bytes=64, **dict(OPTS, **opts))
    names = [h.name for h in hosts]
    report = ar.Report(hosts=names, backend="gloo", world_size=len(hosts), master_addr="127.0.0.1",
                       master_port=29500)
    plan = RankPlan(names, [1] * len(hosts), None, "127.0.0.1", 29500)
    return ar._run_ranks(hosts, options, report, plan, said.append), said


def start(rid, i, timeout=90.0, extra=()):
    """Host i's launcher command, as allreduce_launcher.py's arguments are documented in run.py's
    launcher_args: the ranks, then the worker's; under the --node-python given."""
    args = ["--nproc", 1, "--rank-base", i, "--deadline", 60.0, "--run-id", rid, "--",
            "--backend", "gloo", "--min-bytes", 8, "--max-bytes", 64, "--factor", 2, "--dtype", "float32",
            "--warmup", 5, "--iters", 20, "--timeout", 20.0, "--rendezvous-timeout", 20.0, "--run-id", rid,
            *extra]
    return launcher_cmd("/opt/py/bin/python", "allreduce_launcher.py", rid, i, args), timeout


def stop(rid, i):
    """A stop: TERM, 5 s (50 tenths) for the launcher to end its ranks, then KILL; bounded by
    --connect-timeout + 15 s."""
    return kill_cmd(rid, i, 5.0), 25.0


def calls(log, kind):
    return sorted((name, cmd, t) for name, k, *rest in log if k == kind for cmd, t in [rest])


def test_the_first_host_to_fail_stops_every_other_host_and_only_those(tmp_path):
    log = []
    hosts = [Host("n1", log), Host("n2", log, launcher="echo launcher died >&2; exit 3"), Host("n3", log)]
    rep, said = run_ranks(hosts, pairs=pair_spec(1 << 20))
    rid = rep.run_id
    assert rid.startswith(ar.MARKER) and len(rid) == len(ar.MARKER) + 12
    pairs = ["--pairs", "pairs.json"]
    assert calls(log, "start") == [("n1", *start(rid, 0, extra=pairs)), ("n2", *start(rid, 1, extra=pairs)),
                                   ("n3", *start(rid, 2, extra=pairs))]
    assert calls(log, "stop") == [("n1", *stop(rid, 0)), ("n3", *stop(rid, 2))]
    # the payload: the node files, and the pair rounds for three hosts of one rank each (a ring
    # of pairs: 0-1, then 1-2, then 2-0), at 1 MiB, first measured at 64 KiB
    payload = json.loads(hosts[0].stdin)
    assert all(json.loads(h.stdin) == payload for h in hosts)
    assert sorted(payload) == ["allreduce_launcher.py", "allreduce_pairs.py", "allreduce_worker.py",
                               "pairs.json", "rank_protocol.py", "rank_supervisor.py"]
    assert json.loads(payload["pairs.json"]) == {"rounds": [[[0, 1]], [[1, 2]], [[2, 0]]], "bytes": 1 << 20,
                                                 "first_bytes": 64 << 10, "budget": BUDGET, "iters": ITERS,
                                                 "stop": STOP, "retry": 1 / SLOW}
    assert rep.host_status == {"n1": "ok", "n2": "exit 3", "n3": "ok"}
    assert rep.logs == {"n1": "", "n2": "launcher died", "n3": ""}
    assert rep.failure == Failure("host", "n2: the launcher exited with code 3; ranks that never joined: "
                                  "0 (n1), 1 (n2), 2 (n3)", "n2", None, "see that host's log below")
    assert said == ["running: 3 ranks on 3 host(s), backend gloo",
                    "n2 failed: stopping the ranks on every other host"]


def test_a_lost_connection_also_stops_that_hosts_own_launcher(tmp_path):
    log = []
    lost = "ssh: Connection to n1 closed by remote host"
    hosts = [Host("n1", log, lost=lost), Host("n2", log)]
    rep, said = run_ranks(hosts, sweep=False, pairs=pair_spec(1 << 20), run_timeout=100.0)
    rid = rep.run_id
    # the ranks' deadline is --run-timeout; the controller's own bound on a launcher 30 s more
    extra = ["--pairs", "pairs.json", "--no-sweep"]
    want = [start(rid, i, 130.0, extra) for i in (0, 1)]
    want = [(n, c.replace("--deadline 60.0", "--deadline 100.0"), t) for n, (c, t) in zip(("n1", "n2"), want)]
    assert calls(log, "start") == want
    assert calls(log, "stop") == [("n1", *stop(rid, 0)), ("n2", *stop(rid, 1))]
    assert json.loads(json.loads(hosts[1].stdin)["pairs.json"])["rounds"] == []   # two hosts: no pair rounds
    assert rep.host_status == {"n1": lost, "n2": "ok"} and rep.logs == {"n1": lost, "n2": ""}
    assert rep.failure == Failure("host", f"n1: {lost}; ranks that never joined: 0 (n1), 1 (n2)", "n1", None,
                                  "see that host's log below")
    assert said == ["running: 2 ranks on 2 host(s), backend gloo",
                    "n1 failed: stopping the ranks on every other host"]


def test_a_host_whose_thread_raises_is_a_failed_host_not_a_crash(tmp_path):
    log = []
    hosts = [Host("n1", log), Host("n2", log, raises=OSError("no route to host"))]
    rep, said = run_ranks(hosts)
    rid = rep.run_id
    assert calls(log, "start") == [("n1", *start(rid, 0)), ("n2", *start(rid, 1))]
    # Remote.run never raises by contract; one that does is a failed host all the same: the
    # others are stopped at once (not left to their rendezvous timeout), then its own launcher
    assert calls(log, "stop") == [("n1", *stop(rid, 0)), ("n2", *stop(rid, 1))]
    assert json.loads(hosts[0].stdin) == {k: v for k, v in ar.node_sources().items()}   # no pairs.json
    assert rep.host_status == {"n1": "ok", "n2": "OSError: no route to host"}
    assert rep.logs == {"n1": "", "n2": "OSError: no route to host"}
    assert rep.failure == Failure("host", "n2: OSError: no route to host; ranks that never joined: 0 (n1), 1 (n2)",
                                  "n2", None, "see that host's log below")
    assert said == ["running: 2 ranks on 2 host(s), backend gloo",
                    "n2 failed: stopping the ranks on every other host"]


def test_every_host_starts_and_is_stopped_at_once_beyond_the_default_forks(tmp_path):
    """34 hosts, more than fan_out's default 32 at once: all 34 launchers must be running
    together (ranks of a host not yet started would leave the others waiting in the rendezvous),
    and the 33 stops too."""
    log, n = [], 34
    barriers = (threading.Barrier(n, timeout=5), threading.Barrier(n - 1, timeout=5))
    hosts = [Host(f"n{i}", log, launcher="exit 3" if i == 0 else "exit 0", barriers=barriers) for i in range(n)]
    rep, _ = run_ranks(hosts, forks=2)
    assert [x for x in log if x[2] == "not all at once"] == []
    assert sorted(x[0] for x in log if x[1] == "stop") == sorted(f"n{i}" for i in range(1, n))
    assert rep.host_status == dict({f"n{i}": "ok" for i in range(1, n)}, n0="exit 3")


class Stoppable(Host):
    """A stand-in launcher that a real stop reaches: it writes its pid where kill_cmd looks
    (launcher.pid in the run's directory on the host), and `launcher` may name {dir} (its own
    run directory) and {dir0} (host 0's)."""

    def __init__(self, name, log, index, launcher):
        super().__init__(name, log, launcher)
        self.index, self.template = index, launcher

    def run(self, command, **kw):
        if not command.startswith('d="'):
            rid = re.search(ar.MARKER + "[0-9a-f]{12}", command).group(0)
            self.launcher = (self.template.replace("{dir}", run_dir(rid, self.index))
                             .replace("{dir0}", run_dir(rid, 0)))
        return super().run(command, **kw)


def record(**rec):
    return shlex.quote(json.dumps(rec))


def test_the_host_that_failed_first_is_the_cause_not_the_first_in_the_list(tmp_path):
    """n2's rank dies; the controller stops n1, whose rank then also dies (as a rank whose peer
    vanished would): the cause is n2's, the host that failed first, though n1 comes first. n2
    fails once n1's launcher is up (its pid written), so that the stop finds it."""
    log = []
    joined = [record(type="rank", rank=k, local_rank=0, world_size=3) for k in range(3)]
    n1 = (f"stopped() {{ echo {record(type='exit', rank=0, local_rank=0, code=1)}; exit 3; }}; trap stopped TERM; "
          f'echo {joined[0]}; d="{{dir}}"; mkdir -p "$d"; echo $$ > "$d/launcher.pid"; sleep 10 & wait')
    n2 = ('i=0; while [ ! -e "{dir0}/launcher.pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; '
          f"echo {joined[1]}; echo {record(type='exit', rank=1, local_rank=0, code=1)}; exit 3")
    hosts = [Stoppable("n1", log, 0, n1), Stoppable("n2", log, 1, n2), Host("n3", log, launcher=f"echo {joined[2]}")]
    rep, said = run_ranks(hosts)
    rid = rep.run_id
    assert calls(log, "stop") == [("n1", *stop(rid, 0)), ("n3", *stop(rid, 2))]
    assert rep.host_status == {"n1": "exit 3", "n2": "exit 3", "n3": "ok"}
    assert [(r["rank"], r["node"]) for r in rep.ranks] == [(0, "n1"), (1, "n2"), (2, "n3")]
    assert rep.failure == Failure("rank_lost", "rank 1 on n2 exited with code 1 mid-run; every other rank was "
                                  "stopped", "n2", 1, "see that host's log below (out of memory? killed?)")
    assert said == ["running: 3 ranks on 3 host(s), backend gloo",
                    "n2 failed: stopping the ranks on every other host"]


class Probed(LocalRemote):
    """This machine under a host name, writing down each command's timeout and how many of the
    controller's commands were running on any host at the time (the real probe runs)."""

    def __init__(self, name, log, running):
        super().__init__(name)
        self.log, self.running = log, running

    def run(self, command, **kw):
        with self.running["lock"]:
            self.running["now"] += 1
            self.running["most"] = max(self.running["most"], self.running["now"])
        try:
            return super().run(command, **kw)
        finally:
            self.log.append((self.name, kw.get("timeout")))
            with self.running["lock"]:
                self.running["now"] -= 1


def test_the_node_facts_are_read_under_the_connect_timeout_plus_the_torch_import_and_forks_hosts_at_once(tmp_path):
    """The probe's bound: --connect-timeout + 30 s, + the 60 s the probe gives `import torch`
    (preflight.TORCH_TIMEOUT); at most --forks hosts probed at once. A node_python whose torch
    does not import ends the run after the facts: nothing else runs."""
    from tests.allreduce.test_run_local import node_python
    py = node_python(tmp_path, "raise ImportError('no torch here')\n")
    log, running = [], {"lock": threading.Lock(), "now": 0, "most": 0}
    rep = ar.run_allreduce([Probed("n1", log, running), Probed("n2", log, running)],
                           ar.Options(node_python=py, max_bytes=64, **dict(OPTS, connect_timeout=7.0), forks=1))
    assert sorted(log) == [("n1", 97.0), ("n2", 97.0)]
    assert running["most"] == 1
    assert [e["host"] for e in rep.preflight_errors] == ["n1", "n2"] and rep.failure.kind == "preflight"


H100 = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "memory_total_mib": 81559}


class Amended(LocalRemote):
    """This machine under a host name, its probe's answer amended with what a GPU node has and
    this machine lacks (GPUs, their NVLinks, InfiniBand ports, an interface's speed): the rest
    of the answer, and every other command, is this machine's own."""

    def __init__(self, name, **facts):
        super().__init__(name)
        self.facts = facts

    def run(self, command, **kw):
        res = super().run(command, **kw)
        if "# ---- probe " in command and res.ok:
            doc = json.loads(res.stdout)
            for k, v in self.facts.items():
                if k == "speeds":
                    doc["interfaces"] = [dict(i, speed=v.get(i["name"], i.get("speed"))) for i in doc["interfaces"]]
                else:
                    doc[k] = v
            res.stdout = json.dumps(doc) + "\n"
        return res


def test_each_nodes_link_and_nvlink_are_read_on_the_path_its_ranks_use(tmp_path):
    """linkrate.node_link: NCCL's InfiniBand ports when a node has active ones, else the
    interface the ranks were told to use (--ifname lo here) at its speed; nvlink.node_nvlink: the
    node's GPUs' NVLink figure (H100: NVLink 4, 18 links of 25 GB/s; 16 of them up here), None for GPUs without."""
    from tests.allreduce.test_run_local import node_python
    py = node_python(tmp_path, "__version__ = '2.4.0'\n")
    nv = dict(H100, nvlink={"links": 18, "up": 16, "nvml_version": 4})
    hosts = [Amended("n1", gpus=[nv], ib_ports=[{"name": "mlx5_0", "port": 1, "rate_gbps": 400.0}],
                     speeds={"lo": 100000}),
             Amended("n2", gpus=[dict(H100, nvlink=None)], speeds={"lo": 25000})]
    rep = ar.run_allreduce(hosts, ar.Options(node_python=py, nproc_per_node=1, max_bytes=64, ifname="lo",
                                             master_addr="127.0.0.1", **OPTS))
    assert (rep.backend, rep.preflight_errors) == ("nccl", [])
    assert rep.links == {"n1": {"gbps": 50.0, "source": "1 InfiniBand port(s), 400 Gb/s each"},
                         "n2": {"gbps": 3.125, "source": "lo 25 Gb/s"}}
    assert rep.nvlinks == {"n1": {"gpu": "NVIDIA H100 80GB HBM3", "gpus": 1, "generation": 4, "links": 16,
                                  "links_max": 18, "per_link_gbps": 25.0, "nvml_version": 4, "gbps": 400.0,
                                  "source": "https://www.nvidia.com/en-us/data-center/nvlink/",
                                  "label": "NVLink 4 × 16"},
                           "n2": None}


def test_a_node_whose_interpreter_cannot_name_itself_is_refused_under_the_node_python_given(tmp_path):
    """sys.executable may be empty (Python cannot always find its own path): the refusal then
    names the interpreter the user gave, --node-python."""
    from tests.allreduce.test_run_local import node_python
    py = node_python(tmp_path, "__version__ = '2.4.0'\n")
    no_torch = {"version": None, "error": "ModuleNotFoundError: No module named 'torch'", "executable": ""}
    rep = ar.run_allreduce([Amended("n1", torch_import=no_torch)],
                           ar.Options(node_python=py, max_bytes=64, **OPTS))
    assert rep.failure == Failure("preflight", f"n1: torch does not import under {py}: "
                                  "ModuleNotFoundError: No module named 'torch'", "n1", None, TORCH_FIX)


class Recording(Amended):
    """Amended, keeping every command it was given."""

    def __init__(self, name, **facts):
        super().__init__(name, **facts)
        self.commands = []

    def run(self, command, **kw):
        self.commands.append(command)
        return super().run(command, **kw)


@pytest.mark.parametrize("verified", [False, True])
def test_a_caller_that_has_seen_torch_import_is_not_made_to_import_it_again(tmp_path, verified):
    """doctor checks that torch imports on every node before its all-reduce, and runs one for the
    fleet, one per pair of nodes and per bisection step: with torch_verified the preflight of each
    asks the probe for the node's facts only, not for another `import torch` (seconds of CPU per
    node, minutes on a venv over NFS); nccl-test on its own still asks."""
    from tests.allreduce.test_run_local import node_python
    py = node_python(tmp_path, "__version__ = '2.4.0'\n")
    n1 = Recording("n1")
    ar.run_allreduce([n1], ar.Options(node_python=py, max_bytes=64, torch_verified=verified, **OPTS))
    probes = [c for c in n1.commands if "# ---- probe " in c]
    assert probes and all("--only host,gpus,net,port,resources" in c for c in probes)
    assert any("torch_import" in c for c in probes) is (not verified)
