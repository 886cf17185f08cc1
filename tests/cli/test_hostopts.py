from envcheck.cli.hostopts import remotes_for
from envcheck.hosts import SSHRemote
from envcheck.remote import LocalRemote


def test_no_hosts_means_this_machine(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    rs = remotes_for([])
    assert len(rs) == 1 and isinstance(rs[0], LocalRemote)


def test_hostlists_become_one_ssh_remote_per_host_with_the_options(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("extra  # comment\n")
    rs = remotes_for(["root@n[1-2]", "n1"], hosts_file=f, user="u", forks=4, timeout=7)
    assert [r.name for r in rs] == ["root@n1", "root@n2", "n1", "extra"]
    assert all(isinstance(r, SSHRemote) for r in rs)
    assert rs[0].options.forks == 4 and rs[0].options.timeout == 7 and rs[0].options.user == "u"
