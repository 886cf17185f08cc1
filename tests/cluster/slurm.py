"""Real Slurm on the simulated cluster: Debian's munged, slurmctld and one slurmd per simulated host.

  munged     one per Slurm cluster, in the root namespace, with its own key and socket
             (`AuthInfo=socket=…`), so parallel runs never share credentials or a socket
  slurmctld  in the root namespace, `SlurmctldHost=<this machine's hostname>(<bridge address>)`,
             on a port free here (chosen under a lock)
  slurmd     one per host, started with `nsenter -t ANCHOR -m -u -n` into that host's mount, UTS
             and network namespaces, so it and everything it starts (job steps, Prolog, Epilog,
             HealthCheckProgram) see the host's private files and simulated sysfs. Not `ip netns
             exec`: that remounts /sys and slurmd's cgroup set-up dies. Its slurm.conf is the
             host's own /etc/slurm/slurm.conf (the host's /etc is a private overlay), as on a real
             node, so `scontrol` run inside a host needs no SLURM_CONF.

Every file of a Slurm cluster lives in /var/tmp/envcheck-slurm-<cluster id>/ (mode 755 all the
way: munged refuses a socket whose directories are not traversable by all; /var/tmp is shared
with every host, so the socket is visible inside each one). Daemons are stopped by PID at close();
`sweep_stale()` stops those of runs whose process died (their command lines name the directory,
so a reused PID is never killed). See README.md next to this file.
"""
from __future__ import annotations

import fcntl
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from tests.cluster import sim

BASE_ROOT = Path("/var/tmp")
DIR_PREFIX = "envcheck-slurm-"
LOCK_FILE = "/run/envcheck-slurm-ports.lock"
PORTS = (17000, 29999)   # below the ephemeral range (32768+), so no client socket takes it
SLURMD_PORT = 6818       # each slurmd has its host's own network namespace: no clash
NODE_CONF = "/etc/slurm"  # inside a host: its private /etc overlay
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
CLIENTS = ("sinfo", "scontrol", "srun", "salloc", "squeue", "scancel")


def available() -> Optional[str]:
    """None when real Slurm can run here, else the reason it cannot (for pytest.skip)."""
    reason = sim.available()
    if reason:
        return reason
    for name, path in DAEMONS.items():
        if not os.path.exists(path):
            return f"real Slurm needs {path} (apt-get install --no-install-recommends slurmctld slurmd slurm-client munge; tests/run.sh does)"
    for c in CLIENTS:
        if not shutil.which(c):
            return f"real Slurm needs `{c}` (apt-get install slurm-client; tests/run.sh does)"
    return None


def _free_port(used: Sequence[int] = ()) -> int:
    for _ in range(200):
        port = random.randint(*PORTS)
        if port in used:
            continue
        with socket.socket() as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free TCP port in {PORTS} for slurmctld")


def _kill_pid(pid: int, marker: str, grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL, a process whose command line contains `marker` (never a reused PID)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return
    if marker not in cmd:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


class SlurmCluster:
    """Slurm over a sim.Cluster. Attributes: cluster, dir, conf (the controller's slurm.conf),
    env (what a client on this machine needs: SLURM_CONF), port (slurmctld), partition."""

    partition = "debug"

    def __init__(self, cluster: sim.Cluster, settings: Optional[Mapping[str, str]] = None):
        self.cluster = cluster
        self.dir = BASE_ROOT / f"{DIR_PREFIX}{cluster.id}"
        self.conf = self.dir / "etc" / "slurm.conf"
        self.munge_socket = self.dir / "munge" / "munge.socket"
        self.env: Dict[str, str] = {"SLURM_CONF": str(self.conf)}
        self.settings: Dict[str, str] = dict(settings or {})
        self.port = 0
        self.procs: Dict[str, subprocess.Popen] = {}
        self.closed = False
        self.owned_cluster: Optional[sim.Cluster] = None   # closed by close() when set
        self.dir.mkdir(mode=0o755)
        os.chmod(self.dir, 0o755)
        (self.dir / "owner.pid").write_text(str(os.getpid()))
        for sub in ("etc", "munge", "state", "spool", "log"):
            (self.dir / sub).mkdir(mode=0o755)
        for h in cluster:
            (self.dir / "spool" / h.name).mkdir(mode=0o755)

    # ---- configuration --------------------------------------------------------------------
    def conf_text(self) -> str:
        d = self.dir
        host = socket.gethostname().split(".")[0]
        base = {
            "ClusterName": self.cluster.id,
            "SlurmctldHost": f"{host}({self.cluster.bridge_ip})",
            "SlurmctldPort": str(self.port), "SlurmdPort": str(SLURMD_PORT),
            "AuthType": "auth/munge", "CredType": "cred/munge",
            "AuthInfo": f"socket={self.munge_socket}",
            "SlurmUser": "root", "SlurmdUser": "root",
            "StateSaveLocation": f"{d}/state", "SlurmdSpoolDir": f"{d}/spool/%n",
            "SlurmctldPidFile": f"{d}/slurmctld.pid", "SlurmdPidFile": f"{d}/slurmd-%n.pid",
            "SlurmctldLogFile": f"{d}/log/slurmctld.log", "SlurmdLogFile": f"{d}/log/slurmd-%n.log",
            "SlurmctldDebug": "info", "SlurmdDebug": "info",
            "MpiDefault": "none", "ProctrackType": "proctrack/linuxproc", "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none", "AccountingStorageType": "accounting_storage/none",
            "JobCompType": "jobcomp/none", "SchedulerType": "sched/builtin",
            "SelectType": "select/cons_tres", "SelectTypeParameters": "CR_CPU",
            "SlurmdParameters": "config_overrides", "ReturnToService": "2",
            "SlurmctldTimeout": "30", "SlurmdTimeout": "30", "InactiveLimit": "0",
            "MinJobAge": "10", "KillWait": "2", "MessageTimeout": "5", "Waittime": "0",
        }
        base.update(self.settings)
        lines = [f"{k}={v}" for k, v in base.items() if v is not None]
        for h in self.cluster:
            lines.append(f"NodeName={h.name} NodeAddr={h.ip} CPUs=4 State=UNKNOWN")
        lines.append(f"PartitionName={self.partition} Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        return "\n".join(lines) + "\n"

    # slurmd's cgroup set-up runs even with proctrack/linuxproc; inside a host, mounting cgroup2
    # fails ("Hybrid mode is not supported") while cgroup/v1 with nothing mounted works
    CGROUP_CONF = "CgroupPlugin=cgroup/v1\nCgroupAutomount=no\nIgnoreSystemd=yes\n"

    def write_conf(self) -> None:
        text = self.conf_text()
        self.conf.write_text(text)
        (self.dir / "etc" / "cgroup.conf").write_text(self.CGROUP_CONF)
        # on a Slurm cluster every node resolves every node's name (MASTER_ADDR=node01 under srun)
        hosts = "127.0.0.1 localhost\n" + "".join(f"{h.ip} {h.name}\n" for h in self.cluster)
        for h in self.cluster:
            h.write_file(f"{NODE_CONF}/slurm.conf", text)
            h.write_file(f"{NODE_CONF}/cgroup.conf", self.CGROUP_CONF)
            h.write_file("/etc/hosts", hosts)

    def reconfigure(self, settings: Mapping[str, Optional[str]], timeout: float = 30) -> None:
        """Change slurm.conf settings (None removes one) everywhere and have every daemon reread
        it (`scontrol reconfigure`): e.g. a HealthCheckProgram for one test module."""
        for k, v in settings.items():
            if v is None:
                self.settings.pop(k, None)
            else:
                self.settings[k] = v
        self.write_conf()
        self.run("scontrol", "reconfigure", timeout=timeout)

    # ---- daemons --------------------------------------------------------------------------
    def start(self, timeout: float = 60) -> "SlurmCluster":
        self._start_munged()
        self._start_slurmctld()
        for h in self.cluster:
            self.start_slurmd(h)
        self.wait_nodes(lambda st: st == "idle", timeout=timeout)
        return self

    def _spawn(self, key: str, argv: List[str]) -> subprocess.Popen:
        log = open(self.dir / "log" / f"{key}.out", "ab")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, env={"PATH": sim.ROOT_PATH, "LANG": "C.UTF-8"})
        finally:
            log.close()
        self.procs[key] = p
        with open(self.dir / "daemons", "a") as f:
            f.write(f"{p.pid}\n")
        return p

    def _start_munged(self) -> None:
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        m = self.dir / "munge"
        self._spawn("munged", [DAEMONS["munged"], "-F", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={m}/munged.pid",
                               f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed"])
        self._wait(lambda: self.munge_socket.exists(), "munged", 10)

    def _start_slurmctld(self) -> None:
        # under a lock: two runs must not both find the same port free and race to bind it
        with open(LOCK_FILE, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.port = _free_port()
            self.write_conf()
            p = self._spawn("slurmctld", [DAEMONS["slurmctld"], "-D", "-i", "-f", str(self.conf)])
            self._wait(lambda: self._listening(self.cluster.bridge_ip, self.port), "slurmctld", 30, p)

    def start_slurmd(self, h: sim.Host) -> subprocess.Popen:
        """(Re)start one host's slurmd inside its namespaces."""
        p = self._spawn(f"slurmd-{h.name}", [
            "nsenter", "-t", str(h.anchor.pid), "-m", "-u", "-n", DAEMONS["slurmd"], "-D",
            "-N", h.name])
        self._wait(lambda: self._listening(h.ip, SLURMD_PORT), f"slurmd on {h.name}", 30, p)
        return p

    def kill_slurmd(self, h: sim.Host) -> None:
        """SIGKILL one host's slurmd (a node whose daemon died); slurmctld still counts it up."""
        p = self.procs.get(f"slurmd-{h.name}")
        if p and p.poll() is None:
            p.kill()
            p.wait(5)

    @staticmethod
    def _listening(ip: str, port: int) -> bool:
        try:
            with socket.create_connection((ip, port), timeout=0.5):
                return True
        except OSError:
            return False

    def _wait(self, ok, what: str, timeout: float, proc: Optional[subprocess.Popen] = None) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{what} exited {proc.returncode}: {self.log_tail(what)}")
            time.sleep(0.05)
        raise RuntimeError(f"{what} not ready within {timeout:g} s: {self.log_tail(what)}")

    def log_tail(self, what: str, lines: int = 8) -> str:
        name = what.replace("slurmd on ", "slurmd-")
        out = []
        for f in (self.dir / "log").glob(f"{name}*"):
            out += f.read_text(errors="replace").splitlines()[-lines:]
        return " | ".join(out)

    # ---- the cluster underneath ---------------------------------------------------------------
    @property
    def hosts(self) -> List[sim.Host]:
        return self.cluster.hosts

    @property
    def names(self) -> List[str]:
        return self.cluster.names

    @property
    def hostlist(self) -> str:
        return self.cluster.hostlist

    def __getitem__(self, key) -> sim.Host:
        return self.cluster[key]

    def __iter__(self):
        return iter(self.cluster)

    def __len__(self) -> int:
        return len(self.cluster)

    # ---- clients --------------------------------------------------------------------------
    def run(self, *argv: str, timeout: float = 60, check: bool = True, env: Optional[Mapping[str, str]] = None,
            input: Optional[str] = None) -> subprocess.CompletedProcess:
        """A Slurm client command on this machine (the controller side), e.g. run("sinfo", "-h")."""
        full = dict(os.environ)
        full.update(self.env)
        full.update(env or {})
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=full, input=input)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.strip()}")
        return p

    def node_states(self) -> Dict[str, str]:
        """{node: state} as sinfo prints it in long form (idle, drained, draining, down*, …)."""
        out = self.run("sinfo", "-h", "-N", "-o", "%N %T").stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def node(self, name: str) -> Dict[str, str]:
        """`scontrol show node NAME` as a dict (State, Reason, …)."""
        out = self.run("scontrol", "-o", "show", "node", name).stdout.strip()
        # Reason=free text with spaces, up to the next " Key=" of scontrol's one-line form
        fields: Dict[str, str] = {}
        for m in re.finditer(r"(\w+)=(.*?)(?= \w+=|$)", out):
            fields[m.group(1)] = m.group(2)
        return fields

    def wait_nodes(self, ok, timeout: float = 30, nodes: Optional[Sequence[str]] = None) -> Dict[str, str]:
        """Wait until ok(state) holds for every node named (default all); return the states."""
        want = list(nodes or self.cluster.names)
        deadline = time.monotonic() + timeout
        states: Dict[str, str] = {}
        while True:
            try:
                states = self.node_states()
            except RuntimeError:
                states = {}
            if all(ok(states.get(n, "")) for n in want):
                return states
            if time.monotonic() > deadline:
                raise RuntimeError(f"nodes {want} not ready within {timeout:g} s: {states}; "
                                   f"{self.log_tail('slurmctld', 4)}")
            time.sleep(0.2)

    def strays(self, h: sim.Host, wait: float = 5.0) -> List[str]:
        """What still runs on a host besides its sshd and slurmd: processes a test left behind.
        A step's slurmstepd takes a moment to exit after srun returns, so this waits up to
        `wait` seconds for the list to empty."""
        deadline = time.monotonic() + wait
        while True:
            left = [c for c in h.processes() if not c.startswith(DAEMONS["slurmd"])]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.1)

    # ---- teardown -------------------------------------------------------------------------
    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # slurmds first (they would re-register), then the controller, then munge
        names = [k for k in self.procs if k.startswith("slurmd-")] + ["slurmctld", "munged"]
        for key in names:
            p = self.procs.get(key)
            if p and p.poll() is None:
                p.terminate()
        for key in names:
            p = self.procs.get(key)
            if not p:
                continue
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.owned_cluster is not None:
            self.owned_cluster.close()


def make_slurm(cluster: sim.Cluster, settings: Optional[Mapping[str, str]] = None) -> SlurmCluster:
    """Start Slurm over a built sim.Cluster (closed again on failure while starting)."""
    s = SlurmCluster(cluster, settings)
    try:
        s.start()
    except BaseException:
        s.close()
        raise
    return s


def sweep_stale() -> List[str]:
    """Stop the daemons and remove the files of Slurm clusters whose test run died."""
    removed = []
    for d in BASE_ROOT.glob(f"{DIR_PREFIX}ecs*"):
        try:
            owner = int((d / "owner.pid").read_text())
        except (OSError, ValueError):
            owner = -1
        if owner > 0 and sim._pid_alive(owner):
            continue
        try:
            pids = [int(x) for x in (d / "daemons").read_text().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            _kill_pid(pid, str(d))
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d.name[len(DIR_PREFIX):])
    return removed
