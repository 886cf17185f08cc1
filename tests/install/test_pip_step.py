"""The playbook pip step: the fact script run by real Pythons, plans from its output, and a real
pip run against a local wheel (offline) that is a no-op the second time."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envcheck.install.pip_step import FACT_SCRIPT, fact_command, plan_pip, variant_of
from envcheck.remote import LocalRemote

OLD_PIP = {"packages": ["torch==1.1.0", "torchvision==0.3.0"], "no_index": True, "no_deps": True,
           "find_links": "https://download.pytorch.org/whl/cu100/torch_stable.html"}


def test_variant_is_read_from_the_index_or_find_links():
    assert variant_of(OLD_PIP) == "cu100"
    assert variant_of({"index_url": "https://download.pytorch.org/whl/cu124"}) == "cu124"
    assert variant_of({"index_url": "https://download.pytorch.org/whl/nightly/cu126/"}) == "cu126"
    assert variant_of({"packages": ["six"]}) is None


def test_torch_of_the_wrong_variant_but_same_version_is_force_reinstalled():
    installed = {"torch": {"version": "1.1.0", "cuda": "9.0.176"}, "torchvision": {"version": "0.3.0"}}
    plan = plan_pip(installed, OLD_PIP, "python3")
    assert plan.reasons == ["torch 1.1.0 is built for CUDA 9.0.176, not 10.0 (cu100)"]
    assert "--force-reinstall" in plan.command and plan.command.endswith("torch==1.1.0 torchvision==0.3.0")
    assert "--no-index" in plan.command and "--find-links https://download.pytorch.org/whl/cu100/torch_stable.html" in plan.command


def test_everything_satisfied_plans_nothing():
    installed = {"torch": {"version": "1.1.0", "cuda": "10.0.130"}, "torchvision": {"version": "0.3.0"}}
    assert plan_pip(installed, OLD_PIP, "python3").command is None
    installed = {"torch": {"version": "2.5.1+cu124", "cuda": "12.4"}, "torchvision": {"version": "0.20.1+cu124"}}
    args = {"packages": ["torch==2.5.1", "torchvision==0.20.1"], "index_url": "https://download.pytorch.org/whl/cu124"}
    assert plan_pip(installed, args, "python3").command is None


def test_missing_and_out_of_range_packages_are_installed():
    plan = plan_pip({"numpy": {"version": "1.24.0"}, "six": None, "pillow": {"version": "6.2.2"}},
                    {"packages": ["numpy<1.20", "six", "pillow>=4.1.1,<7"]}, "python3")
    assert plan.reasons == ["numpy 1.24.0 does not satisfy <1.20", "six not installed"]
    assert plan.satisfied == ["pillow 6.2.2"] and "--force-reinstall" not in plan.command


@pytest.mark.parametrize("python", sorted({sys.executable, "/usr/bin/python3"}))
def test_fact_script_reads_versions_without_importing(python, tmp_path):
    if not __import__("os").path.exists(python):
        pytest.skip(f"{python} not present")
    res = LocalRemote().run(fact_command(python, ["pip", "no-such-package-xyz"]), stdin=FACT_SCRIPT, timeout=30)
    assert res.ok, res.stderr
    doc = json.loads(res.stdout)
    assert doc["no-such-package-xyz"] is None and doc["pip"]["version"]


def make_wheel(folder, name="envcheck_demo_pkg", version="1.2.3"):
    """A minimal valid wheel, written by hand (no build backend needed, works offline)."""
    import base64
    import hashlib
    import zipfile
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    di = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "",
        f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
        f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: envcheck-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    with zipfile.ZipFile(path, "w") as z:
        for arc, text in files.items():
            data = text.encode()
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={digest},{len(data)}")
        record.append(f"{di}/RECORD,,")
        z.writestr(f"{di}/RECORD", "\n".join(record) + "\n")
    return path


def test_a_real_pip_install_from_a_local_wheel_is_idempotent(tmp_path):
    wheels = tmp_path / "wheels"
    make_wheel(wheels)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    args = {"packages": ["envcheck-demo-pkg==1.2.3"], "find_links": str(wheels), "no_index": True}
    remote = LocalRemote()

    def plan():
        res = remote.run(fact_command(py, args["packages"]), stdin=FACT_SCRIPT, timeout=60)
        assert res.ok, res.stderr
        return plan_pip(json.loads(res.stdout), args, py)

    first = plan()
    assert first.reasons == ["envcheck-demo-pkg not installed"]
    done = remote.run(first.command, timeout=300)
    assert done.ok, done.tail()
    assert plan().command is None
