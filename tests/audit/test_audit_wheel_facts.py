"""`envcheck audit` on this machine with the metadata of real PyPI wheels planted on the probe's
sys.path (PYTHONPATH): torch 1.13.1 from PyPI (cu117, NCCL linked statically, cuDNN from the
nvidia-cudnn-cu11 wheel it depends on) beside the numpy 2.0.1 that `pip install torch==1.13.1`
brings today. The facts and findings a user needs come out of the real probe and controller."""
from __future__ import annotations

import json

from tests.conftest import run_cli


def dist(site, name, version, meta_name=None):
    d = site / f"{(meta_name or name).replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_audit_of_torch_1_13_1_with_numpy_2_shows_numpy_pip_cudnn_and_static_nccl(tmp_path):
    site = tmp_path / "site"
    dist(site, "torch", "1.13.1")
    dist(site, "torchvision", "0.14.1")
    dist(site, "nvidia-cudnn-cu11", "8.5.0.96")
    dist(site, "numpy", "2.0.1")
    proc = run_cli("audit", "--json", env={"PYTHONPATH": str(site), "LD_LIBRARY_PATH": ""})
    (host,) = json.loads(proc.stdout)["hosts"]
    facts = host["facts"]
    assert facts["numpy"]["version"] == "2.0.1"
    assert facts["cudnn"]["torch_loads"] == {"version": "8.5.0.96", "how": "pip",
                                             "from": "pip package nvidia-cudnn-cu11"}
    # plain torch==1.13.1 is PyPI's cu117 build, whose NCCL (2.14.3) is linked in statically
    assert (facts["nccl"]["version"], facts["nccl"]["source"]) == ("2.14.3", "matrix")
    numpy = [f for f in host["findings"] if f["code"] == "torch-numpy2"]
    assert numpy and numpy[0]["severity"] == "error" and 'pip install "numpy<2"' in numpy[0]["fix"]
    assert proc.returncode == 1
    table = run_cli("audit", env={"PYTHONPATH": str(site), "LD_LIBRARY_PATH": ""}).stdout
    assert "torch loads 8.5.0.96: pip package nvidia-cudnn-cu11" in table
    assert "pip    nvidia-cudnn-cu11 8.5.0.96" in table
    assert "2.14.3 (from matrix); linked statically into torch 1.13.1" in table
