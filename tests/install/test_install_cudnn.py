"""install-cudnn with real tarballs of both layouts into toolkits installed by the real runfile
stand-ins, on private nodes."""
from __future__ import annotations


import tarfile

import pytest


from envcheck.errors import UsageError
from envcheck.install.cuda import InstallArgs, install_cuda, sha256_file
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.install.cudnn import MANIFEST, inspect_archive, install_cudnn, read_archive
from envcheck.matrix.load import load_matrix
from tests.provision.privnode import PrivateNode, can_unshare
from tests.provision.standins import cuda_runfile, cudnn_archive

GCC7 = "#!/bin/sh\necho 7.5.0\n"


def test_both_archive_layouts_are_recognised_from_name_and_members():
    old = inspect_archive("cudnn-10.0-linux-x64-v7.6.5.32.tgz", ["cuda/include/cudnn.h", "cuda/lib64/libcudnn.so"])
    assert (old.layout, old.cuda, old.cuda_major, old.short_version, old.lib) == ("old", "10.0", 10, "7.6.5", "cuda/lib64")
    stem = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive"
    new = inspect_archive(stem + ".tar.xz", [f"{stem}/include/cudnn.h", f"{stem}/lib/libcudnn.so"])
    assert (new.layout, new.cuda_major, new.lib) == ("new", 12, f"{stem}/lib")
    mid = inspect_archive("cudnn-linux-x86_64-8.3.2.44_cuda11.5-archive.tar.xz",
                          ["cudnn-linux-x86_64-8.3.2.44_cuda11.5-archive/include/x.h",
                           "cudnn-linux-x86_64-8.3.2.44_cuda11.5-archive/lib/y.so"])
    assert mid.cuda == "11.5" and mid.cuda_major == 11


def test_an_archive_whose_members_do_not_match_its_name_is_refused():
    with pytest.raises(UsageError, match="has no cuda/include/"):
        inspect_archive("cudnn-10.0-linux-x64-v7.6.5.32.tgz", ["include/cudnn.h", "lib/libcudnn.so"])


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    d = tmp_path_factory.mktemp("cudnn-assets")
    return d, {"cuda10": cuda_runfile(d, "10.0.130"), "cuda12": cuda_runfile(d, "12.4.1"),
               "old": cudnn_archive(d, "7.6.5.32", "10.0"), "new": cudnn_archive(d, "8.9.7.29", "12"),
               "new9": cudnn_archive(d, "9.1.0.70", "12")}


@pytest.fixture
def node(assets):
    if can_unshare():
        pytest.skip(can_unshare())
    with PrivateNode(assets[0], "node03") as n:
        n.plant("/usr/local/bin/gcc", GCC7)
        for key, v in (("cuda10", "10.0"), ("cuda12", "12.4")):
            run = assets[1][key]
            sha = sha256_file(str(run))
            [o] = install_cuda([n.remote], toolkit_spec(load_matrix(), v),
                               InstallArgs(runfile=str(run), runfile_sha256=sha, expect_sha256=sha))
            assert o.status == "changed", o
        yield n


def test_old_layout_goes_into_lib64_with_symlinks_kept_and_a_manifest(node, assets):
    info = read_archive(str(assets[1]["old"]))
    [out] = install_cudnn([node.remote], info, "/usr/local/cuda-10.0")
    assert out.status == "changed", out
    ls = node.sh("cd /usr/local/cuda-10.0/lib64 && stat -c '%F %n %a' libcudnn*; readlink libcudnn.so libcudnn.so.7").stdout
    assert "symbolic link libcudnn.so " in ls and "regular file libcudnn.so.7.6.5 755" in ls
    assert "regular file libcudnn_static.a 644" in ls  # 600 in the tarball
    assert "libcudnn.so.7\nlibcudnn.so.7.6.5" in ls
    manifest = node.sh(f"cat /usr/local/cuda-10.0/{MANIFEST}").stdout
    assert "lib64/libcudnn.so.7.6.5" in manifest and "include/cudnn.h" in manifest
    again = install_cudnn([node.remote], info, "/usr/local/cuda-10.0")[0]
    assert again.status == "unchanged" and "already in place: cuDNN 7.6.5" in again.lines[0]


def test_new_layout_lib_dir_is_copied_to_lib64_and_verified_from_the_header(node, assets):
    [out] = install_cudnn([node.remote], read_archive(str(assets[1]["new"])), "/usr/local/cuda-12.4")
    assert out.status == "changed", out
    assert any("cuDNN 8.9.7 into /usr/local/cuda-12.4" in line for line in out.lines)
    assert node.sh("readlink /usr/local/cuda-12.4/lib64/libcudnn.so.8").stdout.strip() == "libcudnn.so.8.9.7"
    assert not node.sh("test -e /usr/local/cuda-12.4/lib").ok


def test_a_cuda_major_mismatch_is_refused(node, assets):
    [out] = install_cudnn([node.remote], read_archive(str(assets[1]["new"])), "/usr/local/cuda-10.0")
    assert out.status == "refused"
    assert "built for CUDA 12, but /usr/local/cuda-10.0 is CUDA 10.0.130" in out.problems[0]
    assert not node.sh("ls /usr/local/cuda-10.0/lib64/ | grep -q cudnn").ok


def test_remove_undoes_exactly_and_restores_a_hand_installed_cudnn(node, assets):
    ch = "/usr/local/cuda-12.4"
    node.sh(f"echo '#define CUDNN_MAJOR 8' > {ch}/include/cudnn_version.h; echo '#define CUDNN_MINOR 2' >> {ch}/include/cudnn_version.h;"
            f"echo '#define CUDNN_PATCHLEVEL 0' >> {ch}/include/cudnn_version.h")
    before = node.sh(f"cd {ch} && find . | sort && cat include/cudnn_version.h").stdout
    info = read_archive(str(assets[1]["new9"]))
    [refused] = install_cudnn([node.remote], info, ch)
    assert refused.status == "refused" and "not installed by envcheck" in refused.problems[0]
    [out] = install_cudnn([node.remote], info, ch, force=True)
    assert out.status == "changed", out
    assert "CUDNN_MAJOR 9" in node.sh(f"cat {ch}/include/cudnn_version.h").stdout
    [gone] = install_cudnn([node.remote], None, ch, remove=True)
    assert gone.status == "changed", gone
    assert node.sh(f"cd {ch} && find . | sort && cat include/cudnn_version.h").stdout == before


def test_a_pip_cudnn_on_the_node_draws_a_shadowing_warning(node, assets):
    user_site = node.sh("python3 -m site --user-site").stdout.strip()
    node.sh(f"mkdir -p {user_site}/nvidia/cudnn/lib && touch {user_site}/nvidia/cudnn/lib/libcudnn.so.9")
    [out] = install_cudnn([node.remote], read_archive(str(assets[1]["new"])), "/usr/local/cuda-12.4", dry_run=True)
    assert out.status == "would-change"
    assert any("pip cuDNN is installed" in line and "shadows it" in line for line in out.lines)


def _evil_archive(tmp_path, member: str, link: str = None):
    """A real cuDNN-named archive with the normal layout plus one hostile member."""
    import io
    name = tmp_path / "cudnn-10.0-linux-x64-v7.6.5.32.tgz"
    with tarfile.open(name, "w:gz") as tar:
        for d in ("cuda/include/cudnn.h", "cuda/lib64/libcudnn.so.7.6.5"):
            data = b"#define CUDNN_MAJOR 7\n"
            ti = tarfile.TarInfo(d)
            ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data))
        ti = tarfile.TarInfo(member)
        if link is not None:
            ti.type, ti.linkname = tarfile.SYMTYPE, link
            tar.addfile(ti)
        else:
            ti.size = 1
            tar.addfile(ti, io.BytesIO(b"x"))
    return name


@pytest.mark.parametrize("member,link,named", [
    ("cuda/lib64/libcudnn.so", "/etc/passwd", "symlink to '/etc/passwd'"),
    ("cuda/lib64/libcudnn.so", "../../../../etc/shadow", "symlink to '../../../../etc/shadow'"),
    ("cuda/lib64/../../../../tmp/x", None, "absolute or '..' path"),
    ("/etc/cron.d/x", None, "absolute or '..' path"),
])
def test_an_archive_with_members_escaping_the_toolkit_is_refused_even_in_a_dry_run(tmp_path, member, link, named, cli):
    evil = _evil_archive(tmp_path, member, link)
    for extra in (["--dry-run"], []):
        r = cli("install-cudnn", str(evil), "--cuda", "10.0", *extra)
        assert r.returncode == 2, r.stdout + r.stderr
        assert named in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stdout == ""


def test_remove_never_follows_a_manifest_line_outside_the_toolkit(node, assets):
    ch = "/usr/local/cuda-10.0"
    [out] = install_cudnn([node.remote], read_archive(str(assets[1]["old"])), ch)
    assert out.status == "changed", out
    node.sh("echo precious > /var/tmp/victim")
    node.sh(f"printf '../../../var/tmp/victim\\nlib64/../../../../var/tmp/victim\\n/var/tmp/victim\\n' >> {ch}/{MANIFEST}")
    [gone] = install_cudnn([node.remote], None, ch, remove=True)
    assert gone.status == "changed", gone
    assert node.sh("cat /var/tmp/victim").stdout.strip() == "precious"
    assert sum("left alone" in line for line in gone.lines) == 3, gone.lines
    assert not node.sh(f"ls {ch}/lib64 | grep -q cudnn").ok        # the real files did go
