"""SSH option resolution and known_hosts handling without a network."""
import threading

import paramiko
import pytest

from envcheck.errors import UsageError
from envcheck.hostlist import Target
from envcheck.hosts import KnownHosts, SSHOptions, resolve
from envcheck.hosts.ssh import _with_env


def _cfg(tmp_path, text):
    p = tmp_path / "ssh_config"
    p.write_text(text)
    return str(p)


def test_ssh_config_supplies_hostname_user_port_identity_and_known_hosts(tmp_path):
    key = tmp_path / "id"
    key.write_text("x")
    cfg = _cfg(tmp_path, f"Host node01\n  HostName 10.1.2.3\n  User alice\n  Port 2222\n"
                         f"  IdentityFile {key}\n  UserKnownHostsFile {tmp_path}/kh {tmp_path}/kh2\n")
    r = resolve(Target("node01"), SSHOptions(ssh_config=cfg))
    assert (r.hostname, r.user, r.port) == ("10.1.2.3", "alice", 2222)
    assert r.identities == [str(key)]
    assert r.known_hosts == (f"{tmp_path}/kh", f"{tmp_path}/kh2")


def test_flags_override_ssh_config_and_user_at_host_overrides_flags(tmp_path):
    cfg = _cfg(tmp_path, "Host n\n  User alice\n  Port 2222\n")
    r = resolve(Target("n"), SSHOptions(ssh_config=cfg, user="bob", port=22, identity="/k"))
    assert (r.user, r.port, r.identities, r.identities_only) == ("bob", 22, ["/k"], True)
    r = resolve(Target("n", user="carol", port=2200), SSHOptions(ssh_config=cfg, user="bob", port=22))
    assert (r.user, r.port) == ("carol", 2200)


def test_missing_ssh_config_named_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        resolve(Target("n"), SSHOptions(ssh_config=str(tmp_path / "nope")))


def test_strict_host_key_checking_yes_in_ssh_config_means_strict(tmp_path):
    cfg = _cfg(tmp_path, "Host n\n  StrictHostKeyChecking yes\n")
    assert resolve(Target("n"), SSHOptions(ssh_config=cfg)).strict


def test_env_values_are_quoted_and_bad_names_refused():
    assert _with_env("cmd", {"A": "x y; rm -rf /"}) == "export A='x y; rm -rf /'; cmd"
    with pytest.raises(UsageError):
        _with_env("cmd", {"A-B": "1"})


def test_new_host_keys_are_appended_without_clobbering_the_file(tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("# my notes\n@cert-authority *.corp ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKhNq4acwtUPLTSHVcaiIBRPtCrVlHeuzeEYJifxjlRP")
    known = KnownHosts((str(kh),))
    keys = [paramiko.Ed25519Key.from_private_key_file(_gen(tmp_path, i)) for i in range(16)]
    threads = [threading.Thread(target=known.remember, args=(f"10.0.0.{i}", k)) for i, k in enumerate(keys)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    lines = kh.read_text().splitlines()
    assert lines[0] == "# my notes" and lines[1].startswith("@cert-authority")
    assert sorted(lines[2:]) == sorted(f"10.0.0.{i} ssh-ed25519 {k.get_base64()}" for i, k in enumerate(keys))
    reread = KnownHosts((str(kh),))
    assert reread.lookup("10.0.0.3", "ssh-ed25519") == [keys[3]]


def _gen(tmp_path, i):
    import subprocess
    p = tmp_path / f"k{i}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(p)], check=True)
    return str(p)


def test_a_missing_identity_or_broken_ssh_config_is_refused_before_any_connection(tmp_path):
    from envcheck.hosts import make_remotes
    with pytest.raises(UsageError, match="identity file .* does not exist"):
        make_remotes([Target("n")], SSHOptions(identity=str(tmp_path / "nokey")))
    with pytest.raises(UsageError, match="ssh config .* does not exist"):
        make_remotes([Target("n")], SSHOptions(ssh_config=str(tmp_path / "nocfg")))


def test_an_ansible_inventory_given_to_dash_i_is_named_as_one(tmp_path):
    from envcheck.hosts import make_remotes
    inv = tmp_path / "inventory.ini"
    inv.write_text("[gpus]\nnode01 ansible_user=root\n")
    with pytest.raises(UsageError, match="looks like an Ansible inventory") as e:
        make_remotes([Target("n")], SSHOptions(identity=str(inv)))
    assert "--hosts-file" in e.value.fix
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(UsageError, match="is not an SSH private key"):
        make_remotes([Target("n")], SSHOptions(identity=str(other)))
