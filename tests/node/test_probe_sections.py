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
    assert (new["version"], new["source"]) == ("12.1", "version.json")
    assert new["version_file"] == {"name": "version.json", "version": json.load(open(tk / "version.json"))["cuda"]["version"]}
    assert new["nvcc"]["release"] == "12.1"
    assert ten["version_file"] == {"name": "version.txt", "version": "10.0.130"} and ten["nvcc"]["release"] == "10.0"
    assert none == {"path": str(missing), "exists": False, "version": None, "source": None,
                    "version_file": None, "nvcc": None}


def test_disk_says_what_is_at_each_path_and_the_free_space_where_it_would_go(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink(str(tmp_path / "d"), tmp_path / "link")
    facts = probe("--only", "disk", "--path", str(tmp_path / "link"), "--path", str(tmp_path / "no" / "such"))
    link, absent = facts["disk"]
    assert (link["kind"], link["link"], link["uid"]) == ("link", str(tmp_path / "d"), os.getuid())
    assert absent["kind"] is None and absent["writable"] is False
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
