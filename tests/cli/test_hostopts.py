from envcheck.cli.hostopts import HostSelection
from envcheck.hosts import SSHRemote
from envcheck.remote import LocalRemote


def test_no_hosts_means_this_machine(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    rs = HostSelection().remotes()
    assert len(rs) == 1 and isinstance(rs[0], LocalRemote)


def test_hostlists_become_one_ssh_remote_per_host_with_the_options(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("extra  # comment\n")
    rs = HostSelection(hosts=("root@n[1-2]", "n1"), hosts_file=f, user="u", forks=4, timeout=7).remotes()
    assert [r.name for r in rs] == ["root@n1", "root@n2", "n1", "extra"]
    assert all(isinstance(r, SSHRemote) for r in rs)
    assert rs[0].options.forks == 4 and rs[0].options.timeout == 7 and rs[0].options.user == "u"


def test_a_selection_is_built_from_a_commands_parsed_parameters_by_name():
    params = {"hosts": ["n[1-2]"], "user": "u", "forks": 8, "timeout": None, "deep": True,
              "connect_timeout": 3.0, "strict_host_keys": True}
    sel = HostSelection.from_params(params, timeout=45.0)
    assert sel == HostSelection(hosts=("n[1-2]",), user="u", forks=8, timeout=45.0,
                                connect_timeout=3.0, strict_host_keys=True)
    # an option the user left unset keeps the default; the command's own default wins over it
    assert HostSelection.from_params({"timeout": None}).timeout == 120.0
