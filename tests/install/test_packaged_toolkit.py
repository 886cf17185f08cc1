"""install-cudnn and env on a distribution-packaged toolkit (Debian's nvidia-cuda-toolkit: nvcc in
/usr/bin, headers in /usr/include, libraries in the multiarch directory). install-cudnn refuses,
saying why and what to do instead: those directories belong to the package manager. env handles
it: CUDA_HOME=/usr, which is also what torch's cpp_extension derives there, and no PATH or
loader-path entries (the system's own are searched already)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

from envcheck.install import envblock as eb
from envcheck.install.cudnn import install_cudnn, read_archive
from envcheck.remote import LocalRemote
from tests.node.userspace import require_userspace
from tests.provision.standins import cudnn_archive


def test_install_cudnn_refuses_the_packaged_toolkit_naming_its_package_and_writes_nothing(tmp_path):
    versions = require_userspace()
    before = sorted(glob.glob("/usr/include/cudnn*") + glob.glob("/usr/lib*/*/libcudnn*"))
    info = read_archive(str(cudnn_archive(tmp_path, "8.9.7.29", "11")))
    [out] = install_cudnn([LocalRemote()], info, "/usr", tmpdir=str(tmp_path))
    assert out.status == "refused", out
    (problem,) = out.problems
    assert problem.startswith("/usr is a distribution's CUDA toolkit (package nvidia-cuda-toolkit %s)"
                              % versions["nvidia-cuda-toolkit"])
    assert "nvidia-cudnn-cu11" in problem and "envcheck install-cuda" in problem
    assert sorted(glob.glob("/usr/include/cudnn*") + glob.glob("/usr/lib*/*/libcudnn*")) == before
    assert not os.path.exists(tmp_path / "envcheck-0")  # not even uploaded


def test_env_for_the_packaged_toolkit_sets_only_cuda_home_and_nvcc_stays_the_systems(tmp_path):
    require_userspace()
    rc = tmp_path / "bashrc"
    rc.write_text("x=1\n")
    assert eb.env_node(LocalRemote(), cuda_home="/usr", file=str(rc)).status == "changed"
    block = rc.read_text()
    assert "export CUDA_HOME=/usr\n" in block
    assert "export PATH" not in block and "export LD_LIBRARY_PATH" not in block
    shell = subprocess.run(["bash", "-c", f". {rc}; echo $CUDA_HOME; command -v nvcc; echo ${{LD_LIBRARY_PATH:-unset}}"],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert shell.stdout.split() == ["/usr", "/usr/bin/nvcc", "unset"]


def test_torch_derives_the_same_cuda_home_from_the_packaged_nvcc():
    require_userspace()
    # the function behind cpp_extension.CUDA_HOME (a CPU build of torch leaves the constant None
    # without asking it)
    code = "from torch.utils.cpp_extension import _find_cuda_home; print(_find_cuda_home())"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "/usr"


def test_profile_d_for_the_packaged_toolkit_writes_no_loader_config_and_removes_ours():
    profile = eb.FileFact(eb.PROFILE_D_FILE, False, None, "")
    ours = eb.FileFact(eb.LDCONF_FILE, True, "abc", "# managed by envcheck env\n/usr/local/cuda-12.4/lib64\n")
    plan = eb.plan_profile_d(profile, ours, "/usr")
    assert [(c.path, c.new_text is None) for c in plan.changes] == [(eb.PROFILE_D_FILE, False), (eb.LDCONF_FILE, True)]
    assert "export CUDA_HOME=/usr\n" in plan.changes[0].new_text
    none = eb.plan_profile_d(profile, eb.FileFact(eb.LDCONF_FILE, False, None, ""), "/usr")
    assert [c.path for c in none.changes] == [eb.PROFILE_D_FILE]
    assert any("no " + eb.LDCONF_FILE in n for n in none.notes)
    # a toolkit of its own still gets its lib64 on the loader path
    tree = eb.plan_profile_d(profile, eb.FileFact(eb.LDCONF_FILE, False, None, ""), "/usr/local/cuda-12.4")
    assert tree.changes[1].new_text.endswith("/usr/local/cuda-12.4/lib64\n")
