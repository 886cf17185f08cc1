"""Nodes reachable only through a bastion, reached as the user's `ssh` reaches them: ProxyJump
and ProxyCommand from ssh_config, against real sshd processes (tests/cluster: the nodes sit on a
bridge this machine has no address on; the bastion has a leg on both)."""
import json
import re
import socket

import pytest

from envcheck.hostlist import parse_target
from envcheck.hosts import SSHOptions, SSHRemote, make_remotes
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def behind(cluster_factory):
    c = cluster_factory(2, bastion=True)
    yield c
    c.close()


def _fresh_config(c, tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    return c.write_ssh_config(tmp_path / "ssh_config", known_hosts=kh), kh


def _accepted(sshd_log) -> int:
    return len(re.findall(r"Accepted publickey", sshd_log.read_text(errors="replace")))


def test_the_nodes_cannot_be_reached_but_through_the_bastion(behind):
    with pytest.raises(OSError):
        socket.create_connection((behind[0].ip, 22), timeout=2).close()
    p = behind.ssh(behind[0], "hostname")   # OpenSSH with the same config: ProxyJump bastion
    assert p.returncode == 0 and p.stdout.strip() == behind[0].name, p.stderr


def test_audit_through_proxyjump_shares_one_bastion_connection_and_says_which_keys_it_added(behind, tmp_path):
    cfg, kh = _fresh_config(behind, tmp_path)
    before = _accepted(behind.bastion.sshd_log)
    proc = run_cli("audit", "node[01-02]", "--ssh-config", str(cfg), "--json", timeout=120)
    doc = json.loads(proc.stdout)
    assert [h["error"] for h in doc["hosts"]] == [None, None], proc.stderr
    assert [h["facts"]["hostname"] for h in doc["hosts"]] == ["node01", "node02"]
    assert _accepted(behind.bastion.sshd_log) - before == 1     # one connection, two channels
    # OpenSSH's words for accept-new, once for the three keys (bastion and both nodes)
    (line,) = [l for l in proc.stderr.splitlines() if "Permanently added" in l]
    assert line.endswith(f"(ED25519) to the list of known hosts ({kh}).")
    assert behind.bastion.ip in line and behind[0].ip.rsplit(".", 1)[0] in line
    assert len(kh.read_text().splitlines()) == 3
    again = run_cli("audit", "node01", "--ssh-config", str(cfg), "--json", timeout=120)
    assert again.returncode in (0, 1) and "Permanently added" not in again.stderr


def test_proxycommand_runs_the_users_command_as_the_socket(behind, tmp_path):
    cfg, kh = _fresh_config(behind, tmp_path)
    # the real OpenSSH client as the proxy, as `ProxyCommand ssh -W %h:%p bastion` is written
    text = cfg.read_text().replace("  ProxyJump bastion", f"  ProxyCommand ssh -F {cfg} -W %h:%p bastion")
    cfg.write_text(text)
    r = SSHRemote(parse_target("node02"), SSHOptions(ssh_config=str(cfg), connect_timeout=10))
    try:
        res = r.run("hostname", timeout=20)
    finally:
        r.close()
    assert res.ok and res.stdout.strip() == "node02", (res.error, res.stderr)


def test_a_node_down_behind_the_bastion_is_named_with_the_jump_host(behind, tmp_path):
    cfg, kh = _fresh_config(behind, tmp_path)
    behind[1].stop_sshd()
    try:
        remotes = make_remotes([parse_target("node01"), parse_target("node02")],
                               SSHOptions(ssh_config=str(cfg), connect_timeout=5))
        try:
            up, down = [r.run("true", timeout=10) for r in remotes]
        finally:
            for r in remotes:
                r.close()
    finally:
        behind[1].start_sshd()
    assert up.ok, up.error
    assert down.error.startswith(f"jump host bastion could not connect to {behind[1].ip}:22"), down.error


def test_an_unreachable_bastion_fails_every_node_behind_it_once_each_with_its_reason(behind, tmp_path):
    cfg, kh = _fresh_config(behind, tmp_path)
    behind.bastion.stop_sshd()
    try:
        proc = run_cli("audit", "node[01-02]", "--ssh-config", str(cfg), "--json", "--connect-timeout", "3",
                       timeout=60)
    finally:
        behind.bastion.start_sshd()
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3
    assert all("jump host bastion: unreachable: connection refused" in h["error"] for h in doc["hosts"]), \
        [h["error"] for h in doc["hosts"]]


def test_the_direct_path_keeps_tcp_nodelay(behind, tmp_path):
    cfg, kh = _fresh_config(behind, tmp_path)
    r = SSHRemote(parse_target("bastion"), SSHOptions(ssh_config=str(cfg)))
    try:
        assert r.connect() is None
        sock = r._client.get_transport().sock
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        r.close()
