"""The probe reads the numpy that torch's interpreter imports from its package metadata, never by
importing it (a numpy 2 under a torch 1.x is exactly the case where importing goes wrong)."""
from __future__ import annotations

from tests.node.probe_helpers import plant_dist, poison
from tests.node.test_probe_subprocess import run_probe, sandbox_env


def test_numpy_is_read_from_metadata_without_importing_it(tmp_path):
    site = tmp_path / "site"
    plant_dist(site, "numpy-2.0.1.dist-info", "numpy", "2.0.1")
    poison(site, "numpy")
    plant_dist(site, "torch-1.13.1.dist-info", "torch", "1.13.1")
    facts = run_probe(env=sandbox_env(tmp_path, PYTHONPATH=str(site)))
    assert facts["numpy"] == {"version": "2.0.1", "location": str(site)}
    assert facts["packages"]["numpy"]["version"] == "2.0.1"
    assert not [e for e in facts["errors"] if "numpy" in e]


def test_a_distribution_packaged_numpy_egg_info_is_found_too(tmp_path):
    site = tmp_path / "dist-packages"
    egg = site / "numpy-1.24.2.egg-info"  # Debian's python3-numpy ships an egg-info directory
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.24.2\n")
    facts = run_probe(env=sandbox_env(tmp_path, PYTHONPATH=str(site)))
    assert facts["numpy"]["version"] == "1.24.2"
