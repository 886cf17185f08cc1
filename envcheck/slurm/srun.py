"""Reaching the nodes of a Slurm allocation through srun instead of SSH (`--launcher srun`).

One command on many nodes is one job step: one task per node, the command's stdin broadcast by
srun to every task (the probe travels so, nothing is copied to the nodes). Each task runs the
command under the node's `timeout`, then prints its stdout and stderr base64-encoded in short
tagged lines (`@ENVCHECK node o …`), and last `@ENVCHECK node rc N step JOB.STEP`: srun
interleaves the output of many tasks, and short lines are never split. A node that printed no
`rc` line is "not audited" with srun's own words about it (`Task launch for StepId=… failed on
node node03: Communication connection failure`).

srun aborts a whole step when the launch fails on one node (the other tasks are killed before
they print), so a step with launch failures runs once more without those nodes. Large
allocations are split into steps of at most `step_size` nodes, a few at a time. Nodes that
slurmctld marks not responding are left out, and the steps then wait only briefly for their
resources: Slurm holds a job's first step, silently, while any node of the job is not responding. A step that runs
over its time is cancelled as a user would (two SIGINTs within a second), then killed.
"""
from __future__ import annotations

import base64
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

from envcheck.errors import UsageError
from envcheck.audit.fleet import audit_batch
from envcheck.audit.probe import ProbeError, parse_probe_result, probe_command, shipped_source
from envcheck.facts import views
from envcheck.hostlist import expand_hostlist
from envcheck.remote import RunResult, kill_group
from envcheck.slurm.nodes import Scontrol

TAG = "@ENVCHECK"
STEP_SIZE = 64          # nodes per job step
PARALLEL_STEPS = 4      # steps running at once
HELD_WAIT = 10          # seconds a step waits for its resources while a node of the job is not responding
_LAUNCH_FAILED = re.compile(r"Task launch for StepId=\S+ failed on node (\S+?): (.*)")

# $1: the command line, $2: its timeout on the node. The tags carry the node's own name.
TASK = r'''
node=${SLURMD_NODENAME:-$(hostname -s)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/envcheck-task.XXXXXX") || { echo "@ENVCHECK $node rc 125 step ${SLURM_JOB_ID:-?}.${SLURM_STEP_ID:-?}"; exit 0; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' HUP INT TERM
if command -v timeout >/dev/null 2>&1; then timeout -k 5 "$2" sh -c "$1" >"$tmp/o" 2>"$tmp/e"; else sh -c "$1" >"$tmp/o" 2>"$tmp/e"; fi
rc=$?
base64 <"$tmp/o" | sed "s/^/@ENVCHECK $node o /"
tail -c 4000 "$tmp/e" | base64 | sed "s/^/@ENVCHECK $node e /"
echo "@ENVCHECK $node rc $rc step ${SLURM_JOB_ID:-?}.${SLURM_STEP_ID:-?}"
'''


@dataclass
class Allocation:
    job_id: str
    nodes: List[str]


def allocation(env: Mapping[str, str] = os.environ) -> Optional[Allocation]:
    """The allocation this process runs in (salloc, sbatch), or None."""
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    if not nodelist or not job:
        return None
    return Allocation(job, expand_hostlist(nodelist))


def require_allocation(hosts: Sequence[str], env: Mapping[str, str] = os.environ) -> Allocation:
    """The allocation, checked to hold `hosts` (all its nodes when none are named)."""
    alloc = allocation(env)
    if alloc is None:
        raise UsageError("--launcher srun: not inside a Slurm allocation (no SLURM_JOB_ID / SLURM_JOB_NODELIST)",
                         "run it inside salloc or an sbatch script, or use --launcher ssh")
    outside = [h for h in hosts if h not in alloc.nodes]
    if outside:
        raise UsageError(f"--launcher srun: {', '.join(outside)} not in job {alloc.job_id}'s nodes "
                         f"({','.join(alloc.nodes)})", "name only nodes of the allocation, or none")
    return Allocation(alloc.job_id, list(hosts) or alloc.nodes)


@dataclass
class Step:
    """One srun run: its nodes, the step id the tasks reported, srun's exit code, its time."""
    nodes: List[str]
    step_id: str = ""
    rc: Optional[int] = None
    seconds: float = 0.0
    launch_failed: Dict[str, str] = field(default_factory=dict)


class SrunRunner:
    """Run one shell command (stdin broadcast) on many nodes through job steps."""

    def __init__(self, srun: str = "srun", step_size: int = STEP_SIZE, job_name: str = "envcheck",
                 parallel: int = PARALLEL_STEPS):
        if step_size < 1:
            raise UsageError(f"--step-size {step_size} is below 1", "give a number of nodes per step, e.g. 64")
        self.srun = srun
        self.scontrol = os.path.join(os.path.dirname(srun), "scontrol") if os.sep in srun else "scontrol"
        self.step_size = step_size
        self.job_name = job_name
        self.parallel = parallel
        self.steps: List[Step] = []
        self.silent: Dict[str, str] = {}    # nodes of the job not responding: {name: State}
        self._lock = threading.Lock()

    def run_all(self, nodes: Sequence[str], command: str, stdin: str, timeout: float) -> Dict[str, RunResult]:
        self.silent = not_responding(nodes, self.scontrol)
        out: Dict[str, RunResult] = {
            n: RunResult(n, command, None, error=f"slurm: {n} is not responding (State={self.silent[n]}): its "
                                                 f"slurmd does not answer; check slurmd on {n} (systemctl status slurmd)")
            for n in nodes if n in self.silent}
        todo = [n for n in nodes if n not in out]
        chunks = [todo[i:i + self.step_size] for i in range(0, len(todo), self.step_size)]
        with ThreadPoolExecutor(max_workers=max(1, min(self.parallel, len(chunks)))) as pool:
            for part in pool.map(lambda c: self._chunk(c, command, stdin, timeout), chunks):
                out.update(part)
        return {n: out[n] for n in nodes}

    def step_ids(self) -> List[str]:
        return [s.step_id for s in self.steps if s.step_id]

    def _chunk(self, nodes: List[str], command: str, stdin: str, timeout: float) -> Dict[str, RunResult]:
        results: Dict[str, RunResult] = {}
        todo = list(nodes)
        for _attempt in range(2):    # once more without the nodes the launch failed on
            step, got, why = self._step(todo, command, stdin, timeout)
            results.update(got)
            for n, reason in step.launch_failed.items():
                results.setdefault(n, RunResult(n, command, None, error=f"srun: {reason}"))
            todo = [n for n in todo if n not in results]
            if not todo or not step.launch_failed:
                break
        for n in todo:
            results[n] = RunResult(n, command, None, error=why or "srun: no result from this node")
        return results

    def argv(self, nodes: Sequence[str], command: str, timeout: float) -> List[str]:
        minutes = max(1, int(timeout // 60) + 2)
        return [self.srun, f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}", "--ntasks-per-node=1",
                f"--nodelist={','.join(nodes)}", "--input=all", "--kill-on-bad-exit=0", f"--time={minutes}",
                f"--job-name={self.job_name}", *self.immediate(), "sh", "-c", TASK, "envcheck-task", command,
                f"{timeout:g}"]

    def immediate(self) -> List[str]:
        """While a node of the job is not responding, slurmctld holds the job's first step without
        a word until the node answers or SlurmdTimeout ends the job (Slurm 22.05): the step may
        wait a few seconds for its resources, then srun gives up, saying "Requested nodes are busy"."""
        return [f"--immediate={HELD_WAIT}"] if self.silent else []

    def held_note(self) -> str:
        which = ",".join(self.silent)
        return (f" (Slurm holds a job's first step while a node of the job, here {which}, is not responding; "
                f"run again in an allocation without it: salloc --exclude={which} …)")

    def _step(self, nodes: List[str], command: str, stdin: str, timeout: float):
        step = Step(list(nodes))
        with self._lock:
            self.steps.append(step)
        t0 = time.monotonic()
        out, err, rc, killed = run_srun(self.argv(nodes, command, timeout), stdin, timeout + 30)
        step.rc, step.seconds = rc, time.monotonic() - t0
        got = parse_tagged(out, command, set(nodes))
        for t in got.values():
            step.step_id = step.step_id or t.step
            t.duration = step.seconds
        for line in err.splitlines():
            m = _LAUNCH_FAILED.search(line)
            if m and m.group(1) in nodes:
                step.launch_failed[m.group(1)] = line.split("error: ", 1)[-1].strip()
        why = (f"srun did not finish within {timeout + 30:g} s" if killed
               else _srun_reason(err, rc)) if set(nodes) - set(got) else ""
        if why and self.silent and "Requested nodes are busy" in err:
            why += self.held_note()
        return step, {n: r.result for n, r in got.items()}, why


def not_responding(nodes: Sequence[str], scontrol: str = "scontrol",
                   env: Mapping[str, str] = os.environ) -> Dict[str, str]:
    """{node: State} for the nodes of `nodes` and of the job that slurmctld marks not responding
    (their slurmd misses its pings); {} when scontrol gives no answer."""
    alloc = allocation(env)
    ask = list(dict.fromkeys([*nodes, *(alloc.nodes if alloc else [])]))
    if not ask:
        return {}
    states, _call = Scontrol(scontrol, timeout=10.0).show(ask)
    return {n: st.state for n, st in states.items()
            if n in ask and (st.base.endswith("*") or "NOT_RESPONDING" in st.flags)}


class _Tagged:
    def __init__(self, node: str, command: str):
        self.node, self.command = node, command
        self.o: List[str] = []
        self.e: List[str] = []
        self.rc: Optional[int] = None
        self.step = ""
        self.duration = 0.0

    @property
    def result(self) -> RunResult:
        dec = lambda chunks: base64.b64decode("".join(chunks)).decode("utf-8", "replace")  # noqa: E731
        r = RunResult(self.node, self.command, self.rc, dec(self.o), dec(self.e), duration=self.duration)
        if self.rc == 124:
            r.exit_code, r.error = None, "timed out on the node"
        return r


def parse_tagged(stdout: str, command: str, nodes) -> Dict[str, _Tagged]:
    """The nodes whose task finished (printed its rc line), with their output."""
    seen: Dict[str, _Tagged] = {}
    for line in stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 3 or parts[0] != TAG or parts[1] not in nodes:
            continue
        t = seen.setdefault(parts[1], _Tagged(parts[1], command))
        if parts[2] == "o" and len(parts) == 4:
            t.o.append(parts[3].strip())
        elif parts[2] == "e" and len(parts) == 4:
            t.e.append(parts[3].strip())
        elif parts[2] == "rc" and len(parts) == 4:
            rc, _, rest = parts[3].partition(" ")
            t.rc = int(rc) if rc.lstrip("-").isdigit() else None
            t.step = rest.replace("step", "", 1).strip()
    return {n: t for n, t in seen.items() if t.step or t.rc is not None}


def _srun_reason(err: str, rc: Optional[int]) -> str:
    lines = [l.strip() for l in err.splitlines() if "error" in l.lower() or "srun:" in l]
    tail = lines[-1] if lines else " ".join(err.strip().splitlines()[-1:])
    return f"srun exited {rc}: {tail}" if tail else f"srun exited {rc} and printed nothing for this node"


def run_srun(argv: List[str], stdin: str, timeout: float):
    """(stdout, stderr, exit code, killed): srun run to its end or, past `timeout`, cancelled."""
    try:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    except OSError as e:
        raise UsageError(f"--launcher srun: cannot run {argv[0]}: {e.strerror}",
                         "run inside a Slurm allocation where srun is on PATH, or use --launcher ssh") from e
    try:
        out, err = p.communicate(stdin.encode(), timeout=timeout)
        return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), p.returncode, False
    except subprocess.TimeoutExpired:
        cancel(p)
        out, err = p.communicate()
        return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), p.returncode, True


def cancel(p: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop an srun as a user at the terminal would: two SIGINTs within a second make srun
    cancel its step on every node; SIGKILL to its group if it is still there after `grace`."""
    for _ in range(2):
        try:
            p.send_signal(signal.SIGINT)
        except ProcessLookupError:
            return
        time.sleep(0.3)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        kill_group(p.pid)


def describe(argv: Sequence[str]) -> str:
    """An srun command line as a user could paste it, the task script elided."""
    return " ".join("<task>" if a == TASK else shlex.quote(a) for a in argv)


_STEP_LINE = re.compile(r"^@ENVCHECK step (\S+)$", re.M)


def rank_step(runner: SrunRunner, nodes: Sequence[str], argv: List[str], timeout: float):
    """Run the ranks' step (argv from envcheck/doctor/srun.py: srun_argv): (stdout, stderr,
    exit code, killed), recorded among the runner's steps with the id its first task printed."""
    step = Step(list(nodes))
    t0 = time.monotonic()
    out, err, rc, killed = run_srun(argv, "", timeout)
    m = _STEP_LINE.search(out)
    step.step_id, step.rc, step.seconds = (m.group(1) if m else ""), rc, time.monotonic() - t0
    runner.steps.append(step)
    return out, err, rc, killed


def free_port(runner: SrunRunner, node: str, python: str) -> Optional[int]:
    """A TCP port free on `node` right now: the probe's port section through a one-task step
    (None: no answer)."""
    r = runner.run_all([node], probe_command(node_python=python, only=["port"]), shipped_source(["port"]), 30.0)[node]
    try:
        return views.node(parse_probe_result(node, r, python)).free_port
    except ProbeError:
        return None


def audit(hosts: Sequence[str], matrix, *, step_size: int = STEP_SIZE, deep: bool = False,
          node_python: Optional[str] = None, timeout: Optional[float] = None,
          gpus_per_node: Optional[int] = None, srun: str = "srun"):
    """The fleet audit of the allocation's nodes (or of `hosts`, which must be in it) through
    srun: (FleetAudit, {"job_id", "steps", "nodes"})."""
    alloc = require_allocation(hosts)
    runner = SrunRunner(srun, step_size, "envcheck-audit")
    fleet = audit_batch(alloc.nodes, runner.run_all, matrix, deep=deep, node_python=node_python,
                        timeout=timeout, gpus_per_node=gpus_per_node)
    return fleet, slurm_meta(alloc, runner)


def slurm_meta(alloc: Allocation, runner: SrunRunner) -> Dict[str, object]:
    """What JSON, JUnit and Prometheus output carry about the run: the job and its steps."""
    return {"job_id": alloc.job_id, "steps": runner.step_ids(), "nodes": list(alloc.nodes)}
