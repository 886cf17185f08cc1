"""The sections a command asks for by name (--only) and the places it names (--path): the
toolkit at a path, what is at a path and the free space there, privilege, a free port, the
node's resources and tools. Run as the shipped script, on real files in temp dirs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.node.probe_helpers import PROBE, plant_toolkit, write_script


def probe(*args, env=None, code=0):
    r = subprocess.run([sys.executable, str(PROBE), *args], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == code, r.stderr
    return json.loads(r.stdout) if code == 0 else r.stderr


def test_only_names_the_sections_and_the_document_holds_those_alone():
    facts = probe("--only", "host,net")
    assert set(facts) == {"schema", "origin", "probe", "hostname", "machine_id", "os", "interfaces", "errors"}
    assert facts["probe"]["only"] == ["host", "net"]


def test_an_unknown_section_is_a_usage_error_naming_the_known_ones():
    err = probe("--only", "gpus,nets", code=2)
    assert "'nets'" in err and "gpus" in err and "toolkit" in err


def test_a_relative_path_is_a_usage_error():
    assert "absolute" in probe("--only", "disk", "--path", "cuda", code=2)


def test_the_toolkit_at_a_path_reads_its_version_file_and_its_nvcc(tmp_path):
    tk = plant_toolkit(tmp_path / "cuda-12.1")
    old = plant_toolkit(tmp_path / "cuda-10.0", version_json=None, version_txt="version-10.0.txt",
                        nvcc="nvcc-10.0.txt", cudnn_header=None, cudnn_lib=None)
    missing = tmp_path / "cuda-11.8"
    facts = probe("--only", "toolkit", "--path", str(tk), "--path", str(old), "--path", str(missing))
    new, ten, none = facts["toolkit"]
    assert (new["version"], new["source"], new["cudnn"]) == ("12.1", "version.json", "8.9.7")
    assert new["version_file"] == {"name": "version.json", "version": json.load(open(tk / "version.json"))["cuda"]["version"]}
    assert new["nvcc"]["release"] == "12.1"
    assert ten["version_file"] == {"name": "version.txt", "version": "10.0.130"} and ten["nvcc"]["release"] == "10.0"
    assert ten["cudnn"] is None   # no header in it
    assert none == {"path": str(missing), "exists": False, "version": None, "source": None,
                    "version_file": None, "nvcc": None, "cudnn": None}


def test_disk_says_what_is_at_each_path_and_the_free_space_where_it_would_go(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink(str(tmp_path / "d"), tmp_path / "link")
    facts = probe("--only", "disk", "--path", str(tmp_path / "link"), "--path", str(tmp_path / "no" / "such"))
    link, absent = facts["disk"]
    assert (link["kind"], link["link"], link["uid"]) == ("link", str(tmp_path / "d"), os.getuid())
    assert link["real"] == os.path.realpath(tmp_path / "d") and link["executable"] is True
    assert absent["kind"] is None and absent["writable"] is False and absent["executable"] is False
    st = os.statvfs(str(tmp_path))
    assert abs(absent["free_kb"] - st.f_bavail * st.f_frsize // 1024) < 65536  # the same filesystem


def as_nobody(path_env):
    """The probe's privilege section run as user nobody (the system python3, script on stdin:
    nobody cannot read this test's temp files or envcheck's venv)."""
    r = subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "/usr/bin/python3", "-", "--only", "privilege"], input=PROBE.read_text(),
                       capture_output=True, text=True, timeout=60, env={"PATH": path_env})
    if r.returncode != 0 and "setpriv" in r.stderr:
        pytest.skip("setpriv cannot drop to nobody here: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["privilege"]


def test_privilege_as_root_and_through_a_sudo_that_asks_or_not():
    if os.getuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root and setpriv to become another user")
    assert probe("--only", "privilege")["privilege"] == {"uid": 0, "mode": "root"}
    # a stand-in sudo first on PATH answers `sudo -n true` as a NOPASSWD rule would, or refuses
    bin_dir = Path(tempfile.mkdtemp(prefix="envcheck-sudo-", dir="/tmp"))  # nobody can reach it
    try:
        os.chmod(bin_dir, 0o755)
        for rc, mode in ((0, "sudo-nopasswd"), (1, "sudo-password")):
            write_script(bin_dir / "sudo", f'[ "$1" = -n ] && [ "$2" = true ] || exit 99\nexit {rc}\n')
            assert as_nobody(f"{bin_dir}:/usr/bin:/bin") == {"uid": 65534, "mode": mode}
        assert as_nobody("/nonexistent") == {"uid": 65534, "mode": "none"}
    finally:
        shutil.rmtree(bin_dir)


def test_port_resources_and_tools():
    facts = probe("--only", "port,resources,tools")
    assert 0 < facts["port"]["free"] < 65536
    assert facts["resources"]["cpus"] == os.cpu_count() and facts["resources"]["mem_available"] > 0
    assert set(facts["tools"]) == {"curl", "wget"}


def test_only_gpus_reads_no_per_gpu_health():
    """The health section's NVML reads ride on the driver's session only when health is asked."""
    facts = probe("--only", "gpus")
    assert "health" not in facts and all("health" not in g for g in facts["gpus"])


def test_the_login_is_the_passwd_entry_of_the_user_the_probe_runs_as():
    import pwd
    me = pwd.getpwuid(os.getuid())
    assert probe("--only", "login")["login"] == {"user": me.pw_name, "uid": os.getuid(), "home": me.pw_dir,
                                                 "shell": me.pw_shell}


def test_the_manifest_section_reads_the_file_install_cudnn_writes(tmp_path):
    from envcheck.install.cudnn import MANIFEST
    from tests.node.probe_helpers import load_probe
    assert load_probe().MANIFEST_NAME == MANIFEST   # one file name on both sides
    (tmp_path / MANIFEST).write_text("# envcheck cudnn 8.9.7\ninclude/cudnn.h\nlib64/libcudnn.so.8\n")
    ours, none = probe("--only", "manifest", "--path", str(tmp_path), "--path", str(tmp_path / "x"))["manifest"]
    assert ours["lines"] == ["# envcheck cudnn 8.9.7", "include/cudnn.h", "lib64/libcudnn.so.8"]
    assert none == {"path": str(tmp_path / "x"), "lines": None}


def test_owner_names_the_package_of_a_packaged_toolkit_and_none_for_a_tree_of_its_own(tmp_path):
    from tests.node.userspace import require_userspace
    tree = plant_toolkit(tmp_path / "cuda-12.1")
    assert probe("--only", "owner", "--path", str(tree))["owner"] == [
        {"path": str(tree), "file": None, "package": None, "version": None}]
    require_userspace()   # Debian's nvidia-cuda-toolkit: /usr/bin/nvcc is the package's
    [usr] = probe("--only", "owner", "--path", "/usr")["owner"]
    assert usr["package"] == "nvidia-cuda-toolkit" and usr["file"] == os.path.realpath("/usr/bin/nvcc")
    assert usr["version"] and usr["version"][0].isdigit()


def test_pip_cudnn_lists_the_wheel_libraries_on_the_interpreter_path(tmp_path):
    lib = tmp_path / "site" / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"")
    (lib / "libcudnn_ops.so.9").write_bytes(b"")   # another of the wheel's libraries: not the loader's name
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    assert probe("--only", "pip_cudnn", env=env)["pip_cudnn"] == [str(lib / "libcudnn.so.9")]


def _rcfile(home, *files):
    return probe("--only", "rcfile", *[a for f in files for a in ("--file", f)],
                 env=dict(os.environ, HOME=str(home)))["rcfile"]


def test_rcfile_reads_a_start_up_file_at_its_target_with_its_sha256(tmp_path):
    import hashlib
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    text = "export A=1\n# caf\u00e9\n"
    (home / "dotfiles" / "bashrc").write_text(text, encoding="utf-8")
    os.symlink(home / "dotfiles" / "bashrc", home / ".bashrc")
    [rc] = _rcfile(home, "~/.bashrc")
    assert rc == {"given": "~/.bashrc", "path": str(home / "dotfiles" / "bashrc"), "kind": "file", "link": "in",
                  "writable": True, "sha256": hashlib.sha256(text.encode()).hexdigest(), "text": text, "utf8": True}


def test_rcfile_says_what_is_never_written(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "elsewhere").write_text("x\n")
    os.symlink(tmp_path / "elsewhere", home / ".out")
    (home / ".dir").mkdir()
    (home / ".latin1").write_bytes(b"caf\xe9\n")
    out, d, latin, none = _rcfile(home, "~/.out", "~/.dir", "~/.latin1", str(home / ".none"))
    assert (out["link"], out["path"]) == ("out", str(tmp_path / "elsewhere"))
    assert d["kind"] == "other" and d["text"] is None
    assert (latin["kind"], latin["utf8"], latin["text"]) == ("file", False, None) and latin["sha256"]
    assert (none["kind"], none["sha256"], none["path"]) == ("none", None, str(home / ".none"))
    assert _rcfile("", "~/.bashrc")[0]["kind"] == "nohome"   # HOME empty: never /.bashrc


def test_a_file_neither_absolute_nor_under_the_home_is_a_usage_error():
    assert "--file" in probe("--only", "rcfile", "--file", ".bashrc", code=2)


def test_lines_print_each_value_on_its_own_line_for_a_shell_to_read(tmp_path):
    tk = plant_toolkit(tmp_path / "cuda-12.1")
    r = subprocess.run([sys.executable, str(PROBE), "--only", "toolkit", "--path", str(tk), "--lines"],
                       capture_output=True, text=True, timeout=60)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and "toolkit.0.nvcc.release=12.1" in lines and "toolkit.0.exists=true" in lines
    assert f"toolkit.0.path={tk}" in lines and "schema=1" in lines
    from tests.node.probe_helpers import load_probe
    assert load_probe().flat_lines({"a": ["x\\y\nz", None]}) == ["a.0=x\\\\y\\nz", "a.1="]
