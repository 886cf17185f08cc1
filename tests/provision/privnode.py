"""A private test node on this machine: a real mount namespace (unshare) with its own tmpfs
/usr/local, /var/log, /var/tmp, /tmp, /root-less home and a private copy of /etc, so an installer
can run as root without touching the host. NsRemote implements envcheck's Remote on it, so the
provisioning code runs unchanged; the simulated cluster (tests/cluster) replaces it with SSH.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping, Optional, Union

import pytest

from envcheck.remote import DEFAULT_TIMEOUT, LocalRemote, Remote, RunResult

NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

SETUP = r"""
set -e
mount --make-rprivate /
mount -t tmpfs -o size=256m envcheck-mnt /mnt
mkdir -p /mnt/assets /mnt/etc /mnt/home
mount --bind "$ASSETS" /mnt/assets
cp -a /etc/. /mnt/etc/
mount --bind /mnt/etc /etc
i=0; for p in $EXPOSE; do i=$((i+1)); mkdir -p /mnt/expose/$i; mount --bind "$p" /mnt/expose/$i; done
mount -t tmpfs -o size=$DISK envcheck-usrlocal /usr/local
mount -t tmpfs -o size=$DISK envcheck-vartmp /var/tmp
mount -t tmpfs -o size=64m envcheck-varlog /var/log
mount -t tmpfs -o size=$DISK envcheck-tmp /tmp
mount -t tmpfs -o size=16m envcheck-home /mnt/home
i=0; for p in $EXPOSE; do i=$((i+1)); mkdir -p "$p"; mount --bind -o ro /mnt/expose/$i "$p"; done
echo ready
exec sleep 100000
"""


def _exposed() -> str:
    """The test's interpreter and checkout when they live under a directory the node hides behind
    its own tmpfs (a clone under /tmp: tests/run.sh puts .venv inside it), so cli_argv can still
    run the installed console script. Space-separated for the setup script; no path inside another."""
    import sys
    hidden = ("/tmp/", "/usr/local/", "/var/tmp/", "/var/log/")
    repo = str(Path(__file__).resolve().parents[2])
    paths = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, repo) if p.startswith(hidden)})
    keep = [p for p in paths if not any(p.startswith(q + "/") for q in paths if q != p)]
    assert all(" " not in p for p in keep), keep  # the setup script splits on spaces
    return " ".join(keep)


def can_unshare() -> Optional[str]:
    if os.geteuid() != 0:
        return "needs root (mount namespaces)"
    if not shutil.which("unshare") or not shutil.which("nsenter"):
        return "needs util-linux unshare/nsenter"
    r = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
    if r.returncode != 0:
        return f"unshare --mount not permitted here: {r.stderr.decode().strip()}"
    return None


class PrivateNode:
    """`with PrivateNode(assets_dir) as node:` node.remote is a Remote; node.sh(cmd) for checks."""

    def __init__(self, assets: Path, name: str = "privnode", disk: str = "20g"):
        self.assets, self.name, self.disk = Path(assets), name, disk
        self.proc: Optional[subprocess.Popen] = None

    def __enter__(self) -> "PrivateNode":
        why = can_unshare()
        if why:
            pytest.skip(why)
        env = dict(os.environ, ASSETS=str(self.assets), DISK=self.disk, EXPOSE=_exposed())
        self.proc = subprocess.Popen(["unshare", "--mount", "--", "sh", "-c", SETUP], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        line = self.proc.stdout.readline().decode().strip()
        if line != "ready":
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
            self.__exit__()
            raise RuntimeError(f"private node did not start: {line!r} {err}")
        self.remote = NsRemote(self.proc.pid, self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def sh(self, command: str, timeout: float = 60) -> RunResult:
        return self.remote.run(command, timeout=timeout)

    def plant(self, path: str, text: str, mode: int = 0o755) -> None:
        """Write a file on the node (a stand-in gcc, nvidia-smi …)."""
        import shlex
        r = self.remote.run(f"mkdir -p $(dirname {shlex.quote(path)}) && cat > {shlex.quote(path)} && chmod {mode:o} {shlex.quote(path)}",
                            stdin=text)
        assert r.ok, r

    def add_user(self, name: str, password: str, sudo: bool = True) -> "NsRemote":
        """A non-root login on this node (in its private /etc), with a sudo rule that asks for the
        password; returns a Remote that runs as that user."""
        import shlex
        cmds = [f"useradd -m -d /mnt/home/{name} -s /bin/bash {name}",
                f"echo {shlex.quote(name + ':' + password)} | chpasswd"]
        if sudo:
            cmds.append(f"echo '{name} ALL=(ALL) ALL' > /etc/sudoers.d/{name} && chmod 440 /etc/sudoers.d/{name}")
        r = self.sh(" && ".join(cmds))
        assert r.ok, r
        return NsRemote(self.proc.pid, f"{name}@{self.name}", user=name)

    def cli_argv(self, *args: str) -> list:
        """Run a command (e.g. the envcheck console script) inside this node's namespace."""
        return ["nsenter", "-t", str(self.proc.pid), "-m", "--", "env", "HOME=/mnt/home", f"PATH={NODE_PATH}", *args]


class NsRemote(Remote):
    """Remote for a PrivateNode: /bin/sh inside the namespace via nsenter (root, HOME=/mnt/home)."""

    def __init__(self, pid: int, name: str, user: Optional[str] = None):
        self.pid, self.name, self.user = pid, name, user
        self._local = LocalRemote(name)

    def run(self, command: str, *, stdin: Union[str, bytes, None] = None,
            timeout: float = DEFAULT_TIMEOUT, env: Optional[Mapping[str, str]] = None) -> RunResult:
        import shlex
        if self.user:  # a login of that user, as sshd would start it
            wrapped = (f"nsenter -t {self.pid} -m -- su -s /bin/sh {self.user} -c "
                       + shlex.quote(f"PATH={NODE_PATH}; export PATH; {command}"))
        else:
            wrapped = f"nsenter -t {self.pid} -m -- env HOME=/mnt/home PATH={NODE_PATH} /bin/sh -c {shlex.quote(command)}"
        res = self._local.run(wrapped, stdin=stdin, timeout=timeout, env=env)
        res.command = command
        return res

    def put(self, local_path: str, remote_path: str,
            progress: Optional[Callable[[int, int], None]] = None) -> None:
        import shlex
        size = os.path.getsize(local_path)
        tmp = remote_path + ".envcheck-part"
        with open(local_path, "rb") as f:
            inner = f"cat > {shlex.quote(tmp)} && mv -f {shlex.quote(tmp)} {shlex.quote(remote_path)}"
            argv = ["nsenter", "-t", str(self.pid), "-m", "--"] + (
                ["su", "-s", "/bin/sh", self.user, "-c", inner] if self.user else ["sh", "-c", inner])
            r = subprocess.run(argv, stdin=f, capture_output=True, timeout=300)
        if r.returncode != 0:
            from envcheck.errors import RemoteError
            raise RemoteError(f"{self.name}: cannot copy to {remote_path}: {r.stderr.decode().strip()}")
        if progress:
            progress(size, size)
