"""ansible and pyinfra fan-outs over the simulated cluster, for bench/audit_fanout.py.

Found next to this interpreter, on PATH, or in $ENVCHECK_BENCH_TOOLS (a venv's bin/: they are
bench-only tools, never envcheck dependencies: `python3 -m venv /opt/benchtools &&
/opt/benchtools/bin/pip install ansible-core pyinfra`).
"""
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def find_tool(name):
    for d in filter(None, [os.environ.get("ENVCHECK_BENCH_TOOLS"), "/opt/benchtools/bin"]):
        p = Path(d) / name
        if p.exists():
            return str(p)
    return shutil.which(name)


def ansible_setup(c, hosts, forks=32, wrap=()):
    """`ansible all -m setup -f 32` over the same hosts, keys and known_hosts; (wall, rc, stderr).
    wrap: argv put before it (/usr/bin/time -f ...)."""
    exe = find_tool("ansible")
    if not exe:
        return None
    d = Path(tempfile.mkdtemp(prefix="bench-ansible-"))
    inv = d / "hosts.ini"
    inv.write_text("[all]\n" + "".join(
        f"{h.name} ansible_host={h.ip} ansible_user=root ansible_python_interpreter=/usr/bin/python3\n"
        for h in c.hosts if h.name in hosts))
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_PRIVATE_KEY_FILE=str(c.client_key),
               ANSIBLE_SSH_ARGS=f"-o UserKnownHostsFile={c.known_hosts} -o ControlMaster=no",
               ANSIBLE_LOCAL_TEMP=str(d / "tmp"), ANSIBLE_HOME=str(d))
    t = time.perf_counter()
    p = subprocess.run([*wrap, exe, "all", "-i", str(inv), "-m", "setup", "-f", str(forks)],
                       capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - t
    shutil.rmtree(d, ignore_errors=True)
    return wall, p.returncode, p.stderr


def pyinfra_fact(c, hosts, wrap=()):
    """`pyinfra INVENTORY fact server.Os` (one small fact) over the same hosts; (wall, rc, stderr)."""
    exe = find_tool("pyinfra")
    if not exe:
        return None
    d = Path(tempfile.mkdtemp(prefix="bench-pyinfra-"))
    inv = d / "inventory.py"
    rows = ", ".join(
        f"({h.ip!r}, {{'ssh_user': 'root', 'ssh_key': {str(c.client_key)!r}, "
        f"'ssh_known_hosts_file': {str(c.known_hosts)!r}}})"
        for h in c.hosts if h.name in hosts)
    inv.write_text(f"hosts = [{rows}]\n")
    t = time.perf_counter()
    p = subprocess.run([*wrap, exe, "-y", str(inv), "fact", "server.Os"], capture_output=True, text=True,
                       timeout=3600, cwd=str(d))
    wall = time.perf_counter() - t
    shutil.rmtree(d, ignore_errors=True)
    return wall, p.returncode, p.stderr
