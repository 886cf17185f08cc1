"""install-cuda end to end on private nodes (real mount namespaces, real makeself runfiles, the
stand-in installer of each generation), through the same Remote interface SSH uses."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from envcheck.install.cuda import InstallArgs, install_cuda, sha256_file
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.matrix.load import load_matrix
from tests.conftest import envcheck_exe
from tests.provision.privnode import PrivateNode, can_unshare
from tests.provision.standins import cuda_runfile, flip_byte

pytestmark = pytest.mark.skipif(can_unshare() is not None, reason=str(can_unshare()))

GCC7 = "#!/bin/sh\n# stand-in: gcc 7 (CUDA 10.0's newest) cannot be installed on this machine\necho 7.5.0\n"
# what nvidia-smi says to the probe's query on an A100 node (NVML does not answer here: no driver)
A100 = ("#!/bin/sh\ncase \"$*\" in\n"
        "  *--query-gpu=*) echo '550.54.15, NVIDIA A100-SXM4-40GB, 8.0, 40960, GPU-0, 00000000:07:00.0' ;;\n"
        "  *) echo '| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |' ;;\nesac\n")


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    d = tmp_path_factory.mktemp("cuda-assets")
    runs = {
        "10.0": cuda_runfile(d, "10.0.130"),
        "12.4.0": cuda_runfile(d, "12.4.0"),
        "12.4.1": cuda_runfile(d, "12.4.1"),
        "12.4.1-fail": cuda_runfile(d, "12.4.1", mode="fail", name="fail_12.4.1.run"),
        "12.4.1-broken0": cuda_runfile(d, "12.4.1", mode="broken0", name="broken0_12.4.1.run"),
        "12.4.1-perlflags": cuda_runfile(d, "12.4.1", generation="perl", name="perlgen_12.4.1.run"),
    }
    return d, runs


@pytest.fixture
def node(assets):
    with PrivateNode(assets[0], "node01") as n:
        n.plant("/usr/local/bin/gcc", GCC7)
        yield n


def args_for(runfile: Path, **kw) -> InstallArgs:
    sha = sha256_file(str(runfile))
    return InstallArgs(runfile=str(runfile), runfile_sha256=sha, expect_sha256=sha, **kw)


def spec(v):
    return toolkit_spec(load_matrix(), v)


def state(node) -> str:
    """Everything install-cuda may touch, to compare before/after a failure."""
    # names, types, modes and link targets, not times: a directory's mtime moves when the
    # installer's scratch entries come and go, which is no change a user can see
    return node.sh("find /usr/local /usr/local/cuda/ -maxdepth 2 -printf '%p %y %m %u %l\\n' 2>&1 | sort; "
                   "readlink /usr/local/cuda; "
                   "cat /usr/local/cuda-*/version.* 2>&1; ls /usr/local/cuda-12.4/bin 2>&1").stdout


def test_installs_10_0_with_perl_flags_and_a_second_run_is_a_noop(node, assets):
    run = assets[1]["10.0"]
    [out] = install_cuda([node.remote], spec("10.0"), args_for(run))
    assert out.status == "changed", out
    assert out.installers_run == 1 and out.bytes_uploaded == run.stat().st_size
    assert node.sh("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-10.0"
    assert node.sh("cat /usr/local/cuda-10.0/version.txt").stdout.strip() == "CUDA Version 10.0.130"
    assert "release 10.0, V10.0.130" in node.sh("/usr/local/cuda/bin/nvcc -V").stdout
    assert node.sh("stat -c %a /usr/local/cuda-10.0/bin/nvcc").stdout.strip() == "755"
    assert not node.sh("test -e /var/log/nvidia-installer.log").ok, "the driver must never be installed"
    [again] = install_cuda([node.remote], spec("10.0"), args_for(run))
    assert again.status == "unchanged" and again.installers_run == 0 and again.bytes_uploaded == 0
    assert any("already in place: CUDA 10.0.130" in line for line in again.lines)


def test_new_generation_exit0_incomplete_banner_with_a_good_tree_is_success(node, assets):
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]))
    assert out.status == "changed", out
    assert "12.4.1" in node.sh("cat /usr/local/cuda-12.4/version.json").stdout
    assert node.sh("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-12.4"


def test_exit0_incomplete_installation_with_a_broken_tree_is_a_failure_and_rolled_back(node, assets):
    install_cuda([node.remote], spec("10.0"), args_for(assets[1]["10.0"]))
    before = state(node)
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1-broken0"]))
    assert out.status == "failed"
    assert "installer exit status 0, but the result is wrong" in out.error
    assert "Incomplete installation" in out.log_tail
    assert state(node) == before
    assert node.sh("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-10.0"


def test_failing_installer_leaves_the_previous_toolkit_and_symlink(node, assets):
    assert install_cuda([node.remote], spec("12.4.0"), args_for(assets[1]["12.4.0"]))[0].status == "changed"
    before = state(node)
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1-fail"], force=True))
    assert out.status == "failed" and "Installation failed" in out.log_tail
    assert state(node) == before
    assert "12.4.0" in node.sh("cat /usr/local/cuda-12.4/version.json").stdout
    assert node.sh("ls -a /usr/local").stdout.count("envcheck") == 0


def test_flags_of_the_other_generation_are_rejected_by_the_installer_and_rolled_back(node, assets):
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1-perlflags"]))
    assert out.status == "failed"
    assert "Unknown option: --defaultroot" in out.log_tail
    assert not node.sh("test -e /usr/local/cuda-12.4 || test -L /usr/local/cuda").ok


def test_a_runfile_with_one_flipped_byte_is_refused_before_it_runs(node, assets, tmp_path):
    bad = tmp_path / "flipped.run"
    bad.write_bytes(assets[1]["12.4.1"].read_bytes())
    flip_byte(bad)
    a = args_for(bad)
    a.expect_sha256 = None  # --no-checksum: only makeself's own check stands between us and it
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "refused" and "fails its own integrity check" in out.error
    assert out.installers_run == 1 and not node.sh("test -e /usr/local/cuda-12.4").ok
    assert not node.sh("test -e /var/log/cuda-installer.log").ok, "the installer must not have started"
    a.expect_sha256 = sha256_file(str(assets[1]["12.4.1"]))  # our sha256 check refuses it too
    a.runfile_sha256 = a.expect_sha256
    node.sh(f"cp {a.runfile} /var/tmp/x.run")
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "refused" and "expected" in out.error


def test_preflight_reports_every_problem_at_once_and_changes_nothing(node, assets):
    install_cuda([node.remote], spec("12.4.0"), args_for(assets[1]["12.4.0"]))
    node.plant("/usr/local/bin/nvidia-smi", A100)
    node.sh("rm /usr/local/bin/gcc; touch /tmp/cuda-installer.log; chown 1234 /tmp/cuda-installer.log")
    before = state(node)
    [out] = install_cuda([node.remote], spec("10.0"), args_for(assets[1]["10.0"], prefix="/usr/local"))
    text = "\n".join(out.problems)
    assert out.status == "refused", out
    assert "gcc 12" in text and "newer than CUDA 10.0" in text   # the host's real gcc
    assert "A100" in text and "sm_80" in text
    assert state(node) == before and out.installers_run == 0 and out.bytes_uploaded == 0
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]))
    text = "\n".join(out.problems)
    assert "already holds CUDA 12.4.0" in text and "/tmp/cuda-installer.log" in text and "uid 1234" in text


def test_too_little_disk_is_refused(assets):
    with PrivateNode(assets[0], "small", disk="200m") as n:
        [out] = install_cuda([n.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]))
        assert out.status == "refused"
        assert any("/var/tmp has 0.2 GiB free" in p for p in out.problems)


def test_one_bad_node_stops_every_node_before_any_change(assets):
    with PrivateNode(assets[0], "good") as good, PrivateNode(assets[0], "bad") as bad:
        bad.sh("touch /tmp/cuda-installer.log; chown 4321 /tmp/cuda-installer.log")
        outs = install_cuda([good.remote, bad.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]))
        assert [o.status for o in outs] == ["refused", "refused"]
        assert "another node failed preflight" in outs[0].error
        assert not good.sh("test -e /usr/local/cuda-12.4").ok


def test_dry_run_shows_upload_and_command_and_changes_nothing(node, assets):
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]), dry_run=True)
    assert out.status == "would-change"
    plan = "\n".join(out.lines)
    assert "would upload" in plan and "--silent --toolkit --toolkitpath=/usr/local/cuda-12.4" in plan
    assert "--defaultroot=/usr/local/cuda-12.4 --no-drm --no-man-page --tmpdir=/var/tmp" in plan
    assert "--driver" not in plan and "--verbose" not in plan
    assert not node.sh("test -e /usr/local/cuda-12.4 || test -e /var/tmp/envcheck-0").ok


def test_cli_installs_then_reports_the_second_run_as_a_noop(node, assets):
    run = assets[1]["10.0"]
    sha = sha256_file(str(run))
    argv = node.cli_argv(envcheck_exe(), "install-cuda", "10.0", "--runfile", f"/mnt/assets/{run.name}", "--sha256", sha)
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    kb = f"{run.stat().st_size / 1000:.1f} kB"
    assert f"PASS: 1 host: 1 changed; {kb} uploaded; 1 installer run\n" in first.stdout, first.stdout
    assert first.stdout.splitlines()[-1] == "next: envcheck env --cuda-home /usr/local/cuda-10.0"
    second = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert "PASS: 1 host: 1 already in place\n" in second.stdout, second.stdout


def test_cli_refuses_a_runfile_whose_sha256_differs_from_the_matrix(cli, assets):
    r = cli("install-cuda", "10.0", "--runfile", str(assets[1]["10.0"]))
    assert r.returncode == 2 and "does not match the matrix's sha256 for CUDA 10.0.130" in r.stderr


def test_cli_unknown_version_names_the_nearest_known(cli):
    r = cli("install-cuda", "10.3", "--dry-run")
    assert r.returncode == 2 and "CUDA 10.3 is not in the compat matrix (nearest known: 10.1.243, 10.2.89, 11.0." in r.stderr


@pytest.fixture
def http_assets(assets):
    """A real HTTP server on loopback serving the stand-in runfiles (the nodes fetch them)."""
    import functools
    import http.server
    import threading
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(assets[0]))
    handler.log_message = lambda *a, **k: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_the_node_fetches_from_a_url_into_a_staging_dir_of_its_own_that_is_gone_afterwards(node, assets, http_assets):
    run = assets[1]["12.4.1"]
    a = InstallArgs(url=f"{http_assets}/{run.name}", expect_sha256=sha256_file(str(run)))
    [dry] = install_cuda([node.remote], spec("12.4.1"), a, dry_run=True)
    assert any(f"into /var/tmp/envcheck.HOST.XXXXXXXXXX/{run.name}" in line for line in dry.lines), dry.lines
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "changed" and out.bytes_uploaded == 0, out
    assert node.sh("ls -A /var/tmp").stdout.strip() == ""


def test_a_url_that_serves_something_else_is_refused_by_its_checksum(node, assets, http_assets):
    a = InstallArgs(url=f"{http_assets}/{assets[1]['12.4.1-fail'].name}",
                    expect_sha256=sha256_file(str(assets[1]["12.4.1"])))
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "refused" and "expected" in out.error
    assert not node.sh("test -e /usr/local/cuda-12.4").ok


def test_a_missing_url_fails_with_the_download_error(node, http_assets):
    a = InstallArgs(url=f"{http_assets}/no-such.run", expect_sha256="0" * 64)
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "failed" and "fetch failed" in out.error and "404" in out.error


def test_a_runfile_left_on_the_node_by_anyone_is_never_used_and_nothing_is_left_behind(node, assets):
    run = assets[1]["12.4.1"]
    # where older envcheck versions cached it: a predictable name another user could plant
    node.sh(f"mkdir -p /var/tmp/envcheck-0 && cp /mnt/assets/{run.name} /var/tmp/envcheck-0/")
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(run))
    assert out.status == "changed" and out.bytes_uploaded == run.stat().st_size and out.installers_run == 1
    assert node.sh("ls -A /var/tmp").stdout.split() == ["envcheck-0"]   # ours removed, theirs kept


def test_no_symlink_leaves_an_existing_link_alone_even_though_the_installer_moves_it(node, assets):
    install_cuda([node.remote], spec("10.0"), args_for(assets[1]["10.0"]))
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"], symlink=False))
    assert out.status == "changed"
    assert node.sh("readlink /usr/local/cuda").stdout.strip() == "/usr/local/cuda-10.0"


def test_without_a_sha256_nvidias_md5_is_checked_on_the_node(node, assets, http_assets):
    import hashlib
    run = assets[1]["12.4.1"]
    good = hashlib.md5(run.read_bytes()).hexdigest()
    a = InstallArgs(url=f"{http_assets}/{run.name}", expect_md5="0" * 32)
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "refused" and "NVIDIA's published md5" in out.error
    a.expect_md5 = good
    [out] = install_cuda([node.remote], spec("12.4.1"), a)
    assert out.status == "changed", out


def test_cli_checks_a_local_runfile_against_the_matrix_md5_when_no_sha256_is_known(cli, assets):
    r = cli("install-cuda", "12.9.2", "--runfile", str(assets[1]["12.4.1"]), "--dry-run")
    assert r.returncode == 2 and "does not match NVIDIA's published md5 for CUDA 12.9.2" in r.stderr


def test_a_read_only_var_log_is_refused_for_the_new_installer(node, assets):
    node.sh("mount -o remount,ro /var/log")
    [out] = install_cuda([node.remote], spec("12.4.1"), args_for(assets[1]["12.4.1"]))
    assert out.status == "refused" and any("/var/log is not writable" in p for p in out.problems)


def test_dry_run_json_carries_the_exact_node_commands(node, assets, cli):
    import json
    run = assets[1]["10.0"]
    argv = node.cli_argv(envcheck_exe(), "install-cuda", "10.0", "--runfile", f"/mnt/assets/{run.name}",
                         "--sha256", sha256_file(str(run)), "--dry-run", "--json")
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    [out] = json.loads(r.stdout)
    script = out["commands"][-1]
    assert 'sh "$F" --check' in script and "--silent --toolkit --toolkitpath=/usr/local/cuda-10.0" in script
    assert "--driver" not in script and "--no-drm" not in script  # perl generation: no new-installer flags
    assert not node.sh("test -e /usr/local/cuda-10.0").ok
