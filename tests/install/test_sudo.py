"""A non-root login with a sudo password: env and install-cuda through `sudo -S`, the password on
stdin only (never in a command line, an outcome, or the JSON a user might paste)."""
from __future__ import annotations

from pathlib import Path

import pytest


from envcheck.install import envblock as eb
from envcheck.install.cuda import InstallArgs, install_cuda, sha256_file
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.matrix.load import load_matrix
from tests.provision.privnode import PrivateNode, can_unshare
from tests.provision.standins import cuda_runfile

pytestmark = pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))
PW = "Tr0ub4dor&3-sudo"
UBUNTU_GUARD = "# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\nalias ll='ls -alF'\n"


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    d = tmp_path_factory.mktemp("sudo-assets")
    return d, cuda_runfile(d, "12.4.1")


@pytest.fixture
def node(assets):
    with PrivateNode(assets[0], "node02") as n:
        n.user = n.add_user("ecalice", PW)
        yield n


def _args(run: Path, **kw) -> InstallArgs:
    sha = sha256_file(str(run))
    return InstallArgs(runfile=str(run), runfile_sha256=sha, expect_sha256=sha, use_sudo=True, **kw)


def test_install_as_a_sudo_user_with_a_password(node, assets):
    asked = []
    spec = toolkit_spec(load_matrix(), "12.4")
    [out] = install_cuda([node.user], spec, _args(assets[1]), password=lambda: asked.append(1) or PW)
    assert out.status == "changed", out
    assert asked, "the password source was used"
    assert node.sh("stat -c %U /usr/local/cuda-12.4/bin/nvcc").stdout.strip() == "root"
    assert node.sh("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-12.4"
    assert PW not in repr(out.__dict__)
    # the runfile was staged in a fresh directory of the login user's, removed (as root, since
    # the installer wrote scratch there) when the run ended
    [up] = [line for line in out.lines if line.startswith("uploaded")]
    assert up.startswith("uploaded") and "/var/tmp/envcheck.ecalice_node02." in up
    assert node.sh("ls -A /var/tmp").stdout.strip() == ""


def test_the_staging_directory_is_private_to_the_login_user_and_randomly_named(node):
    from envcheck.install import staging
    r = node.user.run(staging.open_command("/var/tmp", "node02"), timeout=30)
    a = staging.parse_open(r.stdout, "/var/tmp")
    b = staging.parse_open(node.user.run(staging.open_command("/var/tmp", "node02"), timeout=30).stdout, "/var/tmp")
    assert a and b and a != b, (r.stdout, r.stderr)
    assert node.sh(f"stat -c '%U %a' {a}").stdout.strip() == "ecalice 700"
    # a name planted by another user in advance is never used: mktemp picks a fresh one
    assert a.startswith("/var/tmp/envcheck.node02.") and len(a) == len("/var/tmp/envcheck.node02.") + 10


def test_a_wrong_sudo_password_fails_cleanly_and_changes_nothing(node, assets):
    spec = toolkit_spec(load_matrix(), "12.4")
    [out] = install_cuda([node.user], spec, _args(assets[1]), password=lambda: "not-it")
    assert out.status == "failed" and "sudo refused" in out.error
    assert not node.sh("test -e /usr/local/cuda-12.4 || test -L /usr/local/cuda").ok


def test_without_sudo_a_non_root_login_is_refused_in_preflight(node, assets):
    spec = toolkit_spec(load_matrix(), "12.4")
    a = _args(assets[1])
    a.use_sudo = False
    [out] = install_cuda([node.user], spec, a)
    assert out.status == "refused" and any("not root" in p for p in out.problems)
    assert out.bytes_uploaded == 0


def test_user_bashrc_needs_no_sudo_and_a_noninteractive_ssh_shell_sees_it(node):
    node.sh("printf %s " + eb.shlex.quote(UBUNTU_GUARD) + " > /mnt/home/ecalice/.bashrc; chown ecalice /mnt/home/ecalice/.bashrc")
    out = eb.env_node(node.user, cuda_home="/usr/local/cuda-12.4")
    assert out.status == "changed", out
    # what sshd does for `ssh node CMD`: the login shell (bash) with -c and SSH_CLIENT set
    seen = node.user.run("env -u SHLVL SSH_CLIENT='10.0.0.9 5555 22' bash -c 'echo \"$CUDA_HOME|$LD_LIBRARY_PATH\"'").stdout.strip()
    assert seen == "/usr/local/cuda-12.4|/usr/local/cuda-12.4/lib64"
    assert node.sh("stat -c %U /mnt/home/ecalice/.bashrc").stdout.strip() == "ecalice"


def test_profile_d_needs_root_and_feeds_the_loader(node, assets):
    spec = toolkit_spec(load_matrix(), "12.4")
    install_cuda([node.user], spec, _args(assets[1]), password=lambda: PW)
    refused = eb.env_node(node.user, cuda_home="/usr/local/cuda-12.4", profile_d=True)
    assert refused.status == "refused" and "needs root" in refused.error
    out = eb.env_node(node.user, cuda_home="/usr/local/cuda-12.4", profile_d=True, use_sudo=True, password=lambda: PW)
    assert out.status == "changed", out
    assert "/usr/local/cuda-12.4/lib64/libcudart.so.12" in node.sh("ldconfig -p").stdout
    assert "CUDA_HOME=/usr/local/cuda-12.4" in node.sh("cat /etc/profile.d/envcheck-cuda.sh").stdout
    again = eb.env_node(node.user, cuda_home="/usr/local/cuda-12.4", profile_d=True, use_sudo=True, password=lambda: PW)
    assert again.status == "unchanged"
    gone = eb.env_node(node.user, cuda_home=None, profile_d=True, remove=True, use_sudo=True, password=lambda: PW)
    assert gone.status == "changed"
    assert not node.sh("test -e /etc/profile.d/envcheck-cuda.sh || test -e /etc/ld.so.conf.d/envcheck-cuda.conf").ok
    assert "libcudart.so.12" not in node.sh("ldconfig -p").stdout


def test_a_login_shell_that_does_not_read_bashrc_draws_a_warning(node):
    node.sh("useradd -m -d /mnt/home/eczed -s /bin/sh eczed")
    from tests.provision.privnode import NsRemote
    zed = NsRemote(node.proc.pid, "eczed@node02", user="eczed")
    out = eb.env_node(zed, cuda_home="/usr/local/cuda-12.4")
    assert out.status == "changed"
    assert any("login shell is /bin/sh" in line for line in out.lines)
    assert not any("login shell" in line for line in eb.env_node(node.user, cuda_home="/usr/local/cuda-12.4").lines)
