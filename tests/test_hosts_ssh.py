"""The SSH transport against real sshd processes on the simulated cluster."""
import os
import subprocess
import time

import pytest

from envcheck.errors import RemoteError
from envcheck.hostlist import parse_targets
from envcheck.hosts import SSHOptions, SSHRemote, make_remotes
from envcheck.remote import fan_out


# many hosts at once, as the commands do it (fan_out over Remotes)
def _values(group):
    assert group.failed == [], group.failed   # Remote.connect/run report, never raise
    return [o.value for o in group]


def connect_all(remotes):
    return _values(fan_out(list(remotes), lambda r: r.connect(), 32))


def run_on_all(remotes, command, **kw):
    return _values(fan_out(list(remotes), lambda r: r.run(command, **kw), 32))


def close_all(remotes):
    for r in remotes:
        r.close()


@pytest.fixture(scope="module")
def four(cluster_factory):
    c = cluster_factory(4)
    yield c
    c.close()


def _opts(c, **kw):
    kw.setdefault("connect_timeout", 3)
    kw.setdefault("timeout", 20)
    return SSHOptions(ssh_config=str(c.ssh_config), **kw)


def _fresh_known_hosts(c, tmp_path, trust=True):
    kh = tmp_path / "known_hosts"
    kh.write_text("".join(f"{h.ip} {' '.join(h.host_key_pub.split()[:2])}\n" for h in c) if trust else "")
    return kh


def test_a_command_runs_on_every_host_with_stdin_delivered(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    remotes = make_remotes(parse_targets([four.hostlist]), _opts(four, known_hosts=str(kh)))
    try:
        res = run_on_all(remotes, "python3 -c 'import sys; print(len(sys.stdin.read()))'; hostname",
                         stdin="x" * 300_000)
    finally:
        close_all(remotes)
    assert [r.error for r in res] == [None] * 4
    assert [r.stdout.split() for r in res] == [["300000", h.name] for h in four]


def test_the_remote_command_sees_the_non_interactive_environment(four, tmp_path):
    h = four[0]
    # exports after Debian's interactive guard never reach a command run over SSH
    h.write_file("/root/.bashrc", h.read_file("/root/.bashrc") + "\nexport AFTER_GUARD=1\n")
    kh = _fresh_known_hosts(four, tmp_path)
    with SSHRemote(h.name, _opts(four, known_hosts=str(kh))) as r:
        res = r.run('echo "guard=${AFTER_GUARD:-unset} ps1=${PS1:-unset}"; echo $-', env={"E": "v w"})
    assert res.ok, res
    assert res.stdout.splitlines()[0] == "guard=unset ps1=unset"
    assert "i" not in res.stdout.splitlines()[1]


def test_a_stopped_sshd_is_reported_unreachable_and_the_others_complete(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    four[1].stop_sshd()
    try:
        remotes = make_remotes(parse_targets([four.hostlist]), _opts(four, known_hosts=str(kh)))
        res = run_on_all(remotes, "echo ok")
        close_all(remotes)
    finally:
        four[1].start_sshd()
    assert res[1].error.startswith("unreachable: connection refused")
    assert [r.stdout for i, r in enumerate(res) if i != 1] == ["ok\n"] * 3


def test_a_wrong_client_key_is_an_authentication_failure(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    res = SSHRemote(four[2].name, _opts(four, known_hosts=str(kh), identity=str(four.wrong_key))).run("true")
    assert res.error.startswith("authentication failed for root"), res.error


def test_a_changed_host_key_is_refused(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    before = kh.read_text()
    four[3].regenerate_host_key()
    res = SSHRemote(four[3].name, _opts(four, known_hosts=str(kh))).run("touch /root/should-not-exist")
    assert "has CHANGED (possible MITM)" in res.error and "ssh-keygen -R" in res.error
    assert not four[3].exists("/root/should-not-exist")
    assert kh.read_text() == before  # the old key is not replaced behind the user's back


def test_an_unknown_host_is_refused_with_strict_host_keys(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path, trust=False)
    res = SSHRemote(four[0].name, _opts(four, known_hosts=str(kh), strict_host_keys=True)).run("true")
    assert res.error.startswith("unknown host key (--strict-host-keys)")
    assert kh.read_text() == ""


def test_a_new_host_is_accepted_and_remembered(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path, trust=False)
    remotes = make_remotes(parse_targets([four.hostlist]), _opts(four, known_hosts=str(kh)))
    assert connect_all(remotes) == [None] * 4
    close_all(remotes)
    lines = sorted(kh.read_text().splitlines())
    assert lines == sorted(f"{h.ip} {' '.join(h.host_key_pub.split()[:2])}" for h in four)
    # and a second run trusts exactly those keys (strict now passes)
    res = SSHRemote(four[0].name, _opts(four, known_hosts=str(kh), strict_host_keys=True)).run("echo again")
    assert res.stdout == "again\n"


def test_a_command_past_its_timeout_is_cut_off_without_hanging(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    start = time.monotonic()
    res = SSHRemote(four[0].name, _opts(four, known_hosts=str(kh))).run("echo started; sleep 30", timeout=1.5)
    assert time.monotonic() - start < 15   # cut at 1.5 s, not the 30 s sleep (slack: a loaded CI's handshake)
    assert res.error == "command timed out after 1.5 s" and res.exit_code is None
    assert res.stdout == "started\n"


def test_a_hung_node_costs_at_most_the_connect_timeout(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    four[2].freeze_sshd()
    try:
        remotes = make_remotes(parse_targets([four.hostlist]), _opts(four, known_hosts=str(kh), connect_timeout=1.5))
        start = time.monotonic()
        res = run_on_all(remotes, "echo ok")
        took = time.monotonic() - start
        close_all(remotes)
    finally:
        four[2].thaw_sshd()
    assert res[2].error.startswith("timed out connecting after 1.5 s")
    assert [r.stdout for i, r in enumerate(res) if i != 2] == ["ok\n"] * 3
    assert took < 3 * 1.5  # under three connect timeouts: neither unbounded nor retried (CI load adds handshake time)


def test_put_uploads_a_file_atomically_with_progress(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    src = tmp_path / "payload.run"
    src.write_bytes(os.urandom(3 * 1024 * 1024))
    src.chmod(0o755)
    seen = []
    with SSHRemote(four[1].name, _opts(four, known_hosts=str(kh))) as r:
        r.put(str(src), "/tmp/payload.run", progress=lambda done, total: seen.append((done, total)))
        digest = r.run("sha256sum /tmp/payload.run; stat -c %a /tmp/payload.run; ls /tmp").stdout.split()
        with pytest.raises(RemoteError, match="no such directory"):
            r.put(str(src), "/nonexistent/dir/x")
    import hashlib
    assert digest[0] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert digest[2] == "755"
    assert not any(n.endswith(".envcheck-part") for n in digest)
    assert seen and seen[-1] == (src.stat().st_size, src.stat().st_size)


def test_one_exec_per_run_counted_by_sshd(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    before = four[0].exec_count()
    with SSHRemote(four[0].name, _opts(four, known_hosts=str(kh))) as r:
        r.run("true")
    assert four[0].exec_count() == before + 1


def test_a_timed_out_command_leaves_no_process_on_the_node(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    h = four[1]
    with SSHRemote(h.name, _opts(four, known_hosts=str(kh))) as r:
        res = r.run("sleep 31 & sleep 32; echo never", timeout=1)
    assert res.error == "command timed out after 1 s"
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and any("sleep 3" in p for p in h.processes()):
        time.sleep(0.2)
    assert not any("sleep 3" in p for p in h.processes()), h.processes()


def test_exit_codes_and_the_login_shell_are_kept_under_the_remote_timeout(four, tmp_path):
    kh = _fresh_known_hosts(four, tmp_path)
    with SSHRemote(four[0].name, _opts(four, known_hosts=str(kh))) as r:
        res = r.run('[[ -n "$BASH_VERSION" ]] && echo bash; exit 7')  # bash syntax: root's shell is bash
    assert (res.exit_code, res.stdout) == (7, "bash\n")


def test_a_connection_lost_mid_command_is_reported_at_once_not_as_a_timeout(four, tmp_path):
    import signal
    import threading
    kh = _fresh_known_hosts(four, tmp_path)
    h = four[3]

    def kill_sessions():
        time.sleep(0.8)
        for pid in subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True).stdout.split():
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            if cmd.startswith(b"sshd: root"):  # this host's session processes, by pid
                os.kill(int(pid), signal.SIGKILL)

    t = threading.Thread(target=kill_sessions)
    t.start()
    start = time.monotonic()
    with SSHRemote(h.name, _opts(four, known_hosts=str(kh))) as r:
        res = r.run("sleep 20", timeout=15)
    t.join()
    assert res.error == "lost connection to the host during the command", res
    assert time.monotonic() - start < 12   # heard as the session died, before the 15 s timeout
