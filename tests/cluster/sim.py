"""The simulated cluster: N hosts, each a network namespace on a private bridge with its own sshd,
host key, hostname, machine-id, /usr/local, /root, /home, /tmp, /var/log and a private copy-on-write
/etc — so what one test plants on node03 (a toolkit, a driver stand-in, a user, /etc/profile.d)
exists only there, and the real machine is untouched.

How a host is built (see README.md next to this file):
  anchor  = `ip netns exec NS unshare --mount --uts --propagation private sleep infinity`
            (holds the host's mount + UTS namespaces for its whole life, so sshd can be stopped
            and started again without losing what was planted)
  mounts  = tmpfs on /usr/local /root /home /tmp /var/log, overlay on /etc, done via nsenter
  sshd    = `nsenter -t ANCHOR -m -u -n /usr/sbin/sshd -D -E LOG -f CFG` — so every SSH session
            sees the private mounts, and sshd's own log (LogLevel VERBOSE) counts execs.

Names carry a random id (ecsXXXXX) so parallel runs never collide; the subnet is a random
10.X.Y.0/24 not already routed here, chosen under a lock. Everything is removed by close(), and
sweep_stale() removes leftovers of runs whose process died.
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

BASE_ROOT = Path("/var/tmp")  # not /tmp: each host gets a private /tmp, and sshd must see its files
DIR_PREFIX = "envcheck-sim-"
NAME_RE = re.compile(r"^ecs[0-9a-f]{5}")
LOCK_FILE = "/run/envcheck-simcluster.lock"
ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PRIVATE_TMPFS = ("/usr/local", "/root", "/home", "/tmp", "/var/log")
# The distribution's NVIDIA userspace (tests/nvidia_userspace.sh installs it into the shared /usr)
# is hidden on every host unless a test shows it (standins.show_nvidia_userspace): /usr/bin and the
# multiarch library directory are seen through overlays without nvcc, nvidia-smi and the
# libnvidia-ml/libcuda links and files, as on a machine without the packages. Overlays, not empty
# mounts over the files: a link left dangling in the SHARED directory would be deleted for real by
# the next `ldconfig` run on the host. Shown again by unmounting the overlays.
NVIDIA_HIDDEN = {
    "/usr/bin": ("nvcc", "nvidia-smi"),
    # nvidia-cuda-toolkit's tree: the probe lists a distribution toolkit from its nvcc there
    "/usr/lib": ("nvidia-cuda-toolkit", "cuda"),
    "/usr/lib/x86_64-linux-gnu": ("nvidia", "libnvidia-ml.so", "libnvidia-ml.so.1", "libcuda.so",
                                  "libcuda.so.1", "libnvidia-ptxjitcompiler.so.1"),
}


def hide_nvidia_script(state_dir: str) -> str:
    """Shell text (run inside a host) that hides NVIDIA's packaged userspace; a no-op for what the
    machine does not have. `state_dir` holds the overlays' private layers."""
    out = []
    for n, (d, names) in enumerate(sorted(NVIDIA_HIDDEN.items())):
        gone = " ".join(shlex.quote(f"{d}/{x}") for x in names)
        layer = shlex.quote(f"{state_dir}/{n}")
        out.append(
            f"if ! mountpoint -q {d} && ls -d {gone} 2>/dev/null | grep -q .; then "
            f"mkdir -p {layer}; mountpoint -q {layer} || mount -t tmpfs sim {layer}; "
            f"mkdir -p {layer}/up {layer}/work; "
            f"mount -t overlay sim -o lowerdir={d},upperdir={layer}/up,workdir={layer}/work {d}; "
            f"rm -rf {gone}; fi; ")
    return "".join(out)


def _sh(cmd: Sequence[str], check: bool = True, input: Optional[str] = None,
        timeout: float = 30) -> subprocess.CompletedProcess:
    p = subprocess.run(list(cmd), capture_output=True, text=True, input=input, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def available() -> Optional[str]:
    """None when the simulated cluster can run here, else the reason it cannot (for pytest.skip)."""
    if not sys.platform.startswith("linux"):
        return "the simulated cluster needs Linux network namespaces"
    if os.geteuid() != 0:
        return "the simulated cluster needs root (ip netns, mount); CI runs as root"
    for tool in ("ip", "unshare", "nsenter", "ssh-keygen", "ssh"):
        if not shutil.which(tool):
            return f"the simulated cluster needs `{tool}` (see tests/run.sh)"
    if not os.path.exists("/usr/sbin/sshd"):
        return "the simulated cluster needs /usr/sbin/sshd (apt-get install openssh-server)"
    try:
        p = _sh(["ip", "netns", "list"], check=False, timeout=10)
    except Exception as e:  # noqa: BLE001
        return f"`ip netns` does not work here: {e}"
    if p.returncode != 0:
        return f"`ip netns` does not work here: {p.stderr.strip()}"
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class Host:
    """One simulated node. Attributes: name (node01), ip, ns (netns name), dir (its files on the
    controller side), sshd_log, host_key (private key path, .pub beside it)."""

    def __init__(self, cluster: "Cluster", index: int, name: str, ip: str, bridge: Optional[str] = None,
                 second: Optional[tuple] = None):
        self.cluster = cluster
        self.index = index
        self.name = name
        self.ip = ip
        self.bridge = bridge or cluster.bridge
        self.second = second   # (bridge, ip): a leg on another network (the bastion's inner one)
        self.ns = f"{cluster.id}-{name}"
        self.veth = f"{cluster.id}v{index:02d}"
        self.dir = cluster.base / name
        self.sshd_log = self.dir / "sshd.log"
        self.sshd_config = self.dir / "sshd_config"
        self.host_key = self.dir / "ssh_host_ed25519_key"
        self.anchor: Optional[subprocess.Popen] = None
        self.sshd: Optional[subprocess.Popen] = None

    def __repr__(self) -> str:
        return f"<Host {self.name} {self.ip}>"

    # ---- building -------------------------------------------------------------------------
    def _create(self) -> None:
        self.dir.mkdir(parents=True)
        _sh(["ip", "netns", "add", self.ns])
        _sh(["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.ns])
        _sh(["ip", "link", "set", self.veth, "master", self.bridge, "up"])
        # the cluster's bridge is a /24, or a /23 past 253 hosts; a bastion's inner one a /24
        prefixlen = self.cluster.prefixlen if self.bridge == self.cluster.bridge else 24
        _sh(["ip", "-n", self.ns, "addr", "add", f"{self.ip}/{prefixlen}", "dev", "eth0"])
        _sh(["ip", "-n", self.ns, "link", "set", "eth0", "up"])
        if self.second:
            bridge, ip = self.second
            peer = f"{self.cluster.id}w{self.index:02d}"
            _sh(["ip", "link", "add", peer, "type", "veth", "peer", "name", "eth1", "netns", self.ns])
            _sh(["ip", "link", "set", peer, "master", bridge, "up"])
            _sh(["ip", "-n", self.ns, "addr", "add", f"{ip}/24", "dev", "eth1"])
            _sh(["ip", "-n", self.ns, "link", "set", "eth1", "up"])
        _sh(["ip", "-n", self.ns, "link", "set", "lo", "up"])
        self.anchor = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "unshare", "--mount", "--uts", "--propagation", "private",
             "sleep", "infinity"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        self._wait_anchor()
        ovl = self.dir / "ovl"
        expose = "".join(
            f"mkdir -p {shlex.quote(str(self.dir / 'expose' / str(i)))}; "
            f"mount --bind {shlex.quote(p)} {shlex.quote(str(self.dir / 'expose' / str(i)))}; "
            for i, p in enumerate(self.cluster.expose))
        reexpose = "".join(
            f"mkdir -p {shlex.quote(p)}; mount --bind -o ro {shlex.quote(str(self.dir / 'expose' / str(i)))} {shlex.quote(p)}; "
            for i, p in enumerate(self.cluster.expose))
        script = (
            "set -e; "
            # bind the exposed real paths aside first: the tmpfs below hides them
            + expose
            + "".join(f"mount -t tmpfs -o mode={'1777' if d == '/tmp' else '755'} sim {d}; " for d in PRIVATE_TMPFS)
            + "chmod 700 /root; cp -a /etc/skel/. /root/; "
            + f"mkdir -p {ovl}; mount -t tmpfs sim {ovl}; mkdir {ovl}/up {ovl}/work; "
            + f"mount -t overlay sim -o lowerdir=/etc,upperdir={ovl}/up,workdir={ovl}/work /etc; "
            + reexpose
            + hide_nvidia_script(str(self.dir / "nvidia-hidden"))
            + "mkdir -p /usr/local/bin /usr/local/lib /root/.ssh; chmod 700 /root/.ssh; "
            + f"hostname {self.name}; echo {self.name} > /etc/hostname; "
            + f"echo {uuid.uuid4().hex} > /etc/machine-id; "
            + f"printf '127.0.0.1 localhost\\n{self.ip} {self.name}\\n' > /etc/hosts; "
            + f"cat {shlex.quote(str(self.cluster.client_key))}.pub > /root/.ssh/authorized_keys; "
            + "chmod 600 /root/.ssh/authorized_keys"
        )
        self.run_local(script)
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", self.name, "-f", str(self.host_key)])
        self.sshd_config.write_text("\n".join([
            "Port 22", f"ListenAddress {self.ip}", f"HostKey {self.host_key}", "PidFile none",
            "UsePAM no", "PermitRootLogin prohibit-password", "PasswordAuthentication yes",
            "KbdInteractiveAuthentication no", "StrictModes no", "UseDNS no", "PrintMotd no",
            "PrintLastLog no", "AcceptEnv LANG LC_*", "MaxStartups 100:30:200", "MaxSessions 50",
            "Subsystem sftp internal-sftp", "LogLevel VERBOSE", "",
        ]))
        self.start_sshd()

    def _wait_anchor(self) -> None:
        # unshare has exec'd sleep once the mount namespace differs from ours
        me = os.readlink("/proc/self/ns/mnt")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if os.readlink(f"/proc/{self.anchor.pid}/ns/mnt") != me and \
                        os.readlink(f"/proc/{self.anchor.pid}/exe").endswith("sleep"):
                    return
            except OSError:
                pass
            if self.anchor.poll() is not None:
                raise RuntimeError(f"{self.name}: namespace holder exited ({self.anchor.returncode})")
            time.sleep(0.005)
        raise RuntimeError(f"{self.name}: namespace holder did not start")

    # ---- sshd -----------------------------------------------------------------------------
    def start_sshd(self, wait: float = 10) -> None:
        """(Re)start this host's sshd inside its namespaces and wait until it accepts TCP."""
        os.makedirs("/run/sshd", exist_ok=True)
        self.sshd = subprocess.Popen(
            ["nsenter", "-t", str(self.anchor.pid), "-m", "-u", "-n", "/usr/sbin/sshd", "-D",
             "-E", str(self.sshd_log), "-f", str(self.sshd_config)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.sshd.poll() is not None:
                raise RuntimeError(f"{self.name}: sshd exited {self.sshd.returncode}; see {self.sshd_log}")
            if self._listening():
                return
            time.sleep(0.01)
        raise RuntimeError(f"{self.name}: sshd did not listen within {wait} s; see {self.sshd_log}")

    def _listening(self) -> bool:
        if self.bridge == self.cluster.bridge:
            try:
                with socket.create_connection((self.ip, 22), timeout=0.5):
                    return True
            except OSError:
                return False
        # behind a bastion: not reachable from here, so ask the host's own network namespace
        p = _sh(["nsenter", "-t", str(self.anchor.pid), "-n", "ss", "-Hltn", "sport = :22"], check=False)
        return bool(p.stdout.strip())

    def stop_sshd(self) -> None:
        """Stop the listener (connections then get 'connection refused'); planted files stay."""
        if self.sshd and self.sshd.poll() is None:
            self.sshd.terminate()
            try:
                self.sshd.wait(5)
            except subprocess.TimeoutExpired:
                self.sshd.kill()
                self.sshd.wait()

    def freeze_sshd(self) -> None:
        """SIGSTOP the listener: TCP still connects (kernel backlog) but no SSH banner ever comes,
        like a hung node. thaw_sshd() resumes it."""
        os.kill(self.sshd.pid, signal.SIGSTOP)

    def thaw_sshd(self) -> None:
        os.kill(self.sshd.pid, signal.SIGCONT)

    def regenerate_host_key(self) -> None:
        """A new host key (a reinstalled node, or a MITM): known_hosts entries no longer match."""
        self.stop_sshd()
        for p in (self.host_key, Path(str(self.host_key) + ".pub")):
            p.unlink()
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", self.name, "-f", str(self.host_key)])
        self.start_sshd()

    @property
    def host_key_pub(self) -> str:
        """`ssh-ed25519 AAAA… node01`: the public host key line."""
        return Path(str(self.host_key) + ".pub").read_text().strip()

    def exec_count(self) -> int:
        """Commands run over SSH on this host, counted from sshd's own VERBOSE log (sftp and
        shell sessions are not commands)."""
        try:
            text = self.sshd_log.read_text(errors="replace")
        except FileNotFoundError:
            return 0
        return len(re.findall(r"Starting session: command ", text))

    def sessions(self) -> List[str]:
        try:
            return re.findall(r"Starting session: (.*)", self.sshd_log.read_text(errors="replace"))
        except FileNotFoundError:
            return []

    # ---- the link ---------------------------------------------------------------------------
    def shape(self, rate: str, burst: str = "32kb") -> None:
        """Limit this host's link to `rate` (tc's units: 40mbit, 1gbit) both ways, with a token
        bucket (tbf) on its eth0 (what it sends) and on the bridge side of its veth (what it
        receives): a degraded cable, NIC or switch port. `burst` must hold rate/HZ bytes (512kb
        for 1gbit); keep it small beside the messages measured, or they pass at line rate."""
        q = ["tc", "qdisc", "replace", "dev"]
        tbf = ["root", "tbf", "rate", rate, "burst", burst, "latency", "100ms"]
        self.run_local(" ".join(q + ["eth0"] + tbf))
        _sh(q + [self.veth] + tbf)

    def unshape(self) -> None:
        self.run_local("tc qdisc del dev eth0 root", check=False)
        _sh(["tc", "qdisc", "del", "dev", self.veth, "root"], check=False)

    # ---- inside the host, without SSH -----------------------------------------------------
    def run_local(self, command: str, check: bool = True, input: Optional[str] = None,
                  timeout: float = 60, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
        """Run a /bin/sh command as root inside this host's namespaces (no SSH involved): for
        planting and inspecting state. Raises on non-zero exit unless check=False."""
        full_env = {"PATH": ROOT_PATH, "HOME": "/root", "LANG": "C.UTF-8", "USER": "root"}
        if env:
            full_env.update(env)
        p = subprocess.run(["nsenter", "-t", str(self.anchor.pid), "-m", "-u", "-n", "--wd=/",
                            "/bin/sh", "-c", command], capture_output=True, text=True,
                           input=input, timeout=timeout, env=full_env)
        if check and p.returncode != 0:
            raise RuntimeError(f"{self.name}: `{command}` failed ({p.returncode}): {p.stderr.strip()}")
        return p

    def write_file(self, path: str, text: str, mode: int = 0o644, owner: Optional[str] = None) -> None:
        """Create (or replace) a file on this host, parent directories included."""
        q = shlex.quote(path)
        cmd = f"mkdir -p \"$(dirname {q})\" && cat > {q} && chmod {mode:o} {q}"
        if owner:
            cmd += f" && chown {shlex.quote(owner)} {q}"
        self.run_local(cmd, input=text)

    def read_file(self, path: str) -> str:
        return self.run_local(f"cat {shlex.quote(path)}").stdout

    def exists(self, path: str) -> bool:
        return self.run_local(f"test -e {shlex.quote(path)}", check=False).returncode == 0

    def add_user(self, name: str, password: Optional[str] = None, sudo: bool = False,
                 authorized_key: bool = True) -> None:
        """A non-root user with a home, the cluster's client key authorized, and optionally a
        password and a sudoers entry that asks for it (no NOPASSWD). Private to this host."""
        self.run_local(f"useradd -m -s /bin/bash {shlex.quote(name)}")
        if password is not None:
            self.run_local("chpasswd", input=f"{name}:{password}\n")
        if sudo:
            if not shutil.which("sudo"):
                raise RuntimeError("sudo is not installed here (tests/run.sh installs it)")
            self.write_file(f"/etc/sudoers.d/{name}", f"{name} ALL=(ALL:ALL) ALL\n", 0o440)
        if authorized_key:
            home = f"/home/{name}"
            self.write_file(f"{home}/.ssh/authorized_keys",
                            Path(str(self.cluster.client_key) + ".pub").read_text(), 0o600)
            self.run_local(f"chown -R {shlex.quote(name)}: {home}/.ssh && chmod 700 {home}/.ssh")

    def processes(self) -> List[str]:
        """Command lines of every process in this host's network namespace except the holder and
        sshd listener: what a test left running there."""
        pids = _sh(["ip", "netns", "pids", self.ns], check=False).stdout.split()
        skip = {str(self.anchor.pid), str(self.sshd.pid if self.sshd else -1)}
        out = []
        for pid in pids:
            if pid in skip:
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                continue
            if cmd.startswith("sshd:") or cmd.startswith("nsenter"):
                continue
            out.append(cmd)
        return out

    def _destroy(self) -> None:
        for pid in _sh(["ip", "netns", "pids", self.ns], check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        for proc in (self.sshd, self.anchor):
            if proc:
                try:
                    proc.kill()
                    proc.wait(5)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        _sh(["ip", "netns", "del", self.ns], check=False)
        _sh(["ip", "link", "del", self.veth], check=False)


class Cluster:
    """N hosts on one bridge. Attributes: id, hosts, names, base (its directory), client_key,
    known_hosts (starts empty), ssh_config (Host nodeNN → HostName, User root, IdentityFile,
    UserKnownHostsFile), bridge_ip (the controller's address on the cluster network)."""

    def __init__(self, n: int, expose: Sequence[str] = (), prefix: str = "node", bastion: bool = False):
        self.id = "ecs" + "".join(random.choice("0123456789abcdef") for _ in range(5))
        self.base = BASE_ROOT / f"{DIR_PREFIX}{self.id}"
        self.bridge = f"{self.id}br"
        # with a bastion, the nodes sit on a bridge of their own that this machine has no address
        # on (no route: unreachable but through the bastion, whose second leg is on it)
        self.inner_bridge = f"{self.id}ib" if bastion else None
        self.bastion: Optional[Host] = None
        self.expose = [p for p in expose if os.path.exists(p)]
        self.hosts: List[Host] = []
        self.closed = False
        self.base.mkdir(mode=0o700)
        (self.base / "owner.pid").write_text(str(os.getpid()))
        self.client_key = self.base / "client_ed25519"
        self.wrong_key = self.base / "wrong_ed25519"  # a key no host authorizes
        self.known_hosts = self.base / "known_hosts"
        self.known_hosts.write_text("")
        self.ssh_config = self.base / "ssh_config"
        width = max(2, len(str(n)))
        self._prefix, self._width = prefix, width
        self._n = n

    def _build(self, per_host_setup: Optional[Callable[[Host], None]], workers: int) -> None:
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "envcheck-sim", "-f", str(self.client_key)])
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wrong", "-f", str(self.wrong_key)])
        # a /24 holds 253 hosts beside the bridge; more (bench/audit_scale.py's 256) get a /23
        self.prefixlen = 24 if self._n <= 253 else 23
        self.net = self._allocate_subnet()
        self.bridge_ip = f"{self.net}.1"
        node_net, node_bridge = self.net, None
        if self.inner_bridge:
            _sh(["ip", "link", "add", self.inner_bridge, "type", "bridge"])
            _sh(["ip", "link", "set", self.inner_bridge, "up"])
            # 10.60-99.x: a range _allocate_subnet never hands out, so no other cluster's bridge
            # gives this machine a route to it
            used = _sh(["ip", "-4", "route", "show"]).stdout
            node_net = next(n for n in (f"10.{random.randint(60, 99)}.{random.randint(0, 255)}" for _ in range(200))
                            if f"{n}." not in used)
            node_bridge = self.inner_bridge
            # and an explicit "unreachable" route: this machine's default gateway may accept any
            # TCP connect, which would make a direct connection look like it worked
            (self.base / "inner_net").write_text(node_net)
            _sh(["ip", "route", "add", "unreachable", f"{node_net}.0/24"])
            self.bastion = Host(self, 0, "bastion", f"{self.net}.254", second=(self.inner_bridge, f"{node_net}.254"))
        a, b, c = (int(x) for x in node_net.split("."))   # past 253 hosts the addresses run into the next /24
        self.hosts = [Host(self, i + 1, f"{self._prefix}{i + 1:0{self._width}d}",
                           f"{a}.{b}.{c + (i + 2) // 256}.{(i + 2) % 256}", bridge=node_bridge) for i in range(self._n)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda h: h._create(), self.hosts + ([self.bastion] if self.bastion else [])))
        self.write_ssh_config(self.ssh_config)
        if per_host_setup:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(per_host_setup, self.hosts))

    def _allocate_subnet(self) -> str:
        # under a lock: two test runs must not pick the same /24 at the same moment
        with open(LOCK_FILE, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = _sh(["ip", "-4", "addr", "show"]).stdout + _sh(["ip", "-4", "route", "show"]).stdout
            span = 1 << (24 - self.prefixlen)   # how many /24s the subnet covers
            for _ in range(200):
                x, y = random.randint(100, 250), random.randrange(0, 256, span)
                net = f"10.{x}.{y}"
                if all(f" 10.{x}.{y + k}." not in used for k in range(span)):
                    break
            else:
                raise RuntimeError("no free 10.x.y.0/%d subnet found for the simulated cluster" % self.prefixlen)
            _sh(["ip", "link", "add", self.bridge, "type", "bridge"])
            _sh(["ip", "addr", "add", f"{net}.1/{self.prefixlen}", "dev", self.bridge])
            _sh(["ip", "link", "set", self.bridge, "up"])
            (self.base / "net").write_text(net)
        return net

    # ---- what tests use -------------------------------------------------------------------
    @property
    def names(self) -> List[str]:
        return [h.name for h in self.hosts]

    @property
    def hostlist(self) -> str:
        """`node[01-08]`: all hosts as one Slurm hostlist."""
        w = self._width
        return f"{self._prefix}[{1:0{w}d}-{len(self.hosts):0{w}d}]"

    def __getitem__(self, key) -> Host:
        if isinstance(key, int):
            return self.hosts[key]
        for h in self.hosts:
            if h.name == key:
                return h
        raise KeyError(key)

    def __iter__(self):
        return iter(self.hosts)

    def __len__(self) -> int:
        return len(self.hosts)

    def write_ssh_config(self, path: Path, identity: Optional[Path] = None,
                         known_hosts: Optional[Path] = None, user: str = "root") -> Path:
        """An ssh_config naming every host (node01 → its IP) for `--ssh-config`; another
        identity or known_hosts can be swapped in for fault tests."""
        lines = []
        for h in ([self.bastion] if self.bastion else []) + self.hosts:
            lines += [f"Host {h.name}", f"  HostName {h.ip}", f"  User {user}", "  Port 22",
                      f"  IdentityFile {identity or self.client_key}", "  IdentitiesOnly yes",
                      f"  UserKnownHostsFile {known_hosts or self.known_hosts}",
                      "  StrictHostKeyChecking accept-new", "  BatchMode yes", "  ConnectTimeout 5"]
            lines += ["  ProxyJump bastion", ""] if self.bastion and h is not self.bastion else [""]
        Path(path).write_text("\n".join(lines))
        return Path(path)

    def trust_all_host_keys(self) -> None:
        """Write every host's key into known_hosts (as after a first accept-new connection)."""
        with open(self.known_hosts, "a") as f:
            for h in self.hosts + ([self.bastion] if self.bastion else []):
                key = " ".join(h.host_key_pub.split()[:2])
                f.write(f"{h.ip} {key}\n")

    def ssh(self, host: Host, command: str, input: Optional[str] = None, timeout: float = 30,
            extra: Sequence[str] = ()) -> subprocess.CompletedProcess:
        """Run a command with the real OpenSSH client through the generated ssh_config."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), *extra, host.name, command],
                              capture_output=True, text=True, input=input, timeout=timeout)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda h: h._destroy(), self.hosts + ([self.bastion] if self.bastion else [])))
        _sh(["ip", "link", "del", self.bridge], check=False)
        if self.inner_bridge:
            _sh(["ip", "link", "del", self.inner_bridge], check=False)
            _drop_inner_route(self.base)
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def make_cluster(n: int, per_host_setup: Optional[Callable[[Host], None]] = None,
                 expose: Sequence[str] = (), prefix: str = "node", workers: int = 16,
                 bastion: bool = False) -> Cluster:
    """Build a cluster of n hosts (torn down by .close(), also on failure while building). With
    `bastion`, the hosts are reachable only through c.bastion (ssh_config: ProxyJump bastion)."""
    c = Cluster(n, expose=expose, prefix=prefix, bastion=bastion)
    try:
        c._build(per_host_setup, workers)
    except BaseException:
        c.close()
        raise
    return c


def sweep_stale() -> List[str]:
    """Remove what runs that died left behind: namespaces, links and directories named ecsXXXXX
    whose owning process is gone. Returns the ids removed."""
    removed = []
    for d in BASE_ROOT.glob(f"{DIR_PREFIX}ecs*"):
        cid = d.name[len(DIR_PREFIX):]
        try:
            owner = int((d / "owner.pid").read_text())
        except (OSError, ValueError):
            owner = -1
        if owner > 0 and _pid_alive(owner):
            continue
        _remove_by_id(cid)
        _drop_inner_route(d)
        shutil.rmtree(d, ignore_errors=True)
        removed.append(cid)
    live = {d.name[len(DIR_PREFIX):] for d in BASE_ROOT.glob(f"{DIR_PREFIX}ecs*")}
    # namespaces without any directory at all (directory removed by hand)
    for line in _sh(["ip", "netns", "list"], check=False).stdout.splitlines():
        ns = line.split()[0] if line.split() else ""
        m = NAME_RE.match(ns)
        if m and m.group(0) not in live and m.group(0) not in removed:
            _remove_by_id(m.group(0))
            removed.append(m.group(0))
    return removed


def _drop_inner_route(base: Path) -> None:
    try:
        net = (base / "inner_net").read_text().strip()
    except OSError:
        return
    _sh(["ip", "route", "del", "unreachable", f"{net}.0/24"], check=False)


def _remove_by_id(cid: str) -> None:
    for line in _sh(["ip", "netns", "list"], check=False).stdout.splitlines():
        ns = line.split()[0] if line.split() else ""
        if ns.startswith(cid + "-"):
            for pid in _sh(["ip", "netns", "pids", ns], check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _sh(["ip", "netns", "del", ns], check=False)
    links = _sh(["ip", "-o", "link", "show"], check=False).stdout
    for name in re.findall(r"^\d+: ([^:@]+)", links, re.M):
        if name.startswith(cid):
            _sh(["ip", "link", "del", name], check=False)


if __name__ == "__main__":  # python3 -m tests.cluster.sim sweep
    if sys.argv[1:] == ["sweep"]:
        print(json.dumps(sweep_stale()))
    else:
        print("usage: python3 -m tests.cluster.sim sweep", file=sys.stderr)
        sys.exit(2)
