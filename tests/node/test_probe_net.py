"""The probe's interfaces and IPv4 addresses come from the kernel's rtnetlink dumps, the ones
`ip -o -4 addr show` reads, without starting ip: in a network namespace of its own with real veth
pairs (a primary, a secondary, a labelled and a peer address), the probe's answer is what the
real `ip` prints there, parsed as before; where rtnetlink cannot be asked, ip's output is read."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.node.probe_helpers import FIXTURES, PROBE, load_probe, write_script

IP = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin")
SETUP = """set -e
ip link set lo up
ip link add v0 type veth peer name v1
ip link add w0 type veth peer name w1
ip link set v0 up
ip addr add 10.1.0.1/24 dev v0
ip addr add 10.1.0.2/24 dev v0
ip addr add 10.3.0.1/16 dev v0 label v0:x
ip addr add 10.2.0.1 peer 10.2.0.2/32 dev w0
ip addr add 10.4.0.1/8 dev w0
ip addr add 10.4.0.9/8 dev w1
"""


@pytest.mark.skipif(os.geteuid() != 0 or not IP or not shutil.which("unshare"),
                    reason="needs root, ip and unshare for a network namespace")
def test_the_addresses_are_what_ip_prints_and_ip_is_not_started(tmp_path):
    # an `ip` first on PATH that leaves a mark: the probe must not need it
    mark = tmp_path / "ip-ran"
    write_script(tmp_path / "bin" / "ip", f'touch "{mark}"; exec "{IP}" "$@"\n')
    (tmp_path / "probe.py").write_bytes(PROBE.read_bytes())
    script = SETUP + (f'"{IP}" -o -4 addr show > "{tmp_path}/ip.txt"\n'
                      f'PATH="{tmp_path}/bin:$PATH" "{sys.executable}" - --only net < "{tmp_path}/probe.py" '
                      f'> "{tmp_path}/facts.json"\n')
    proc = subprocess.run(["unshare", "--net", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "unshare" in proc.stderr and not (tmp_path / "ip.txt").exists():
        pytest.skip(f"no network namespace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    facts = json.loads((tmp_path / "facts.json").read_text())
    got = {i["name"]: i["addrs"] for i in facts["interfaces"] if i["addrs"]}
    want = load_probe().parse_ip_addr((tmp_path / "ip.txt").read_text())
    assert got == want
    assert got["v0"] == ["10.1.0.1/24", "10.3.0.1/16", "10.1.0.2/24"] and got["w0"] == ["10.4.0.1/8"]
    assert not mark.exists() and facts["errors"] == []


def test_without_rtnetlink_the_addresses_are_ips(tmp_path, monkeypatch):
    probe = load_probe()
    monkeypatch.setattr(probe, "ipv4_by_netlink", lambda: None)
    write_script(tmp_path / "ip", f'cat "{FIXTURES / "misc" / "ip-o-4-addr.txt"}"\n')
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    got = {i["name"]: i["addrs"] for i in probe.collect_interfaces() if i["addrs"]}
    assert got == probe.parse_ip_addr((FIXTURES / "misc" / "ip-o-4-addr.txt").read_text())
    assert Path(probe.which("ip")) == tmp_path / "ip"
