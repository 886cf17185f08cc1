"""The matrix loader: the real compat_matrix.yaml loads, its queries answer from it, and a broken
copy fails with the key path of the problem (never a traceback)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from envcheck.errors import MatrixError
from envcheck.matrix.load import default_matrix_path, load_matrix
from tests.conftest import REPO, run_cli

TOP = REPO / "compat_matrix.yaml"


@pytest.fixture(scope="module")
def m():
    return load_matrix(TOP)


def test_default_path_is_the_packaged_or_top_level_file():
    p = default_matrix_path()
    assert p.name == "compat_matrix.yaml" and p.exists()
    assert p.read_text() == TOP.read_text()


def test_every_entry_has_a_source_url():
    text = yaml.safe_load(TOP.read_text())
    missing = []

    def walk(node, path):
        if isinstance(node, list):
            for i, x in enumerate(node):
                if isinstance(x, dict):
                    if "source" not in x:
                        missing.append(f"{path}[{i}]")
                    walk(x, f"{path}[{i}]")
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}")

    walk({k: v for k, v in text.items() if k != "sources"}, "")
    assert missing == []


def test_toolkit_versions_resolve_to_the_newest_update_or_exactly(m):
    assert m.resolve_cuda("10.0")["version"] == "10.0.130"
    assert m.resolve_cuda("12.4")["version"] == "12.4.1"
    assert m.resolve_cuda("12.4.0")["version"] == "12.4.0"
    assert m.resolve_cuda("12.4.0")["runfile"] == "cuda_12.4.0_550.54.14_linux.run"


def test_unknown_toolkit_names_the_nearest_known(m):
    with pytest.raises(MatrixError) as e:
        m.resolve_cuda("12.7")
    assert "12.6.3" in e.value.message and "12.8.0" in e.value.message


def test_toolkit_record_has_what_provisioning_needs(m):
    t = m.toolkit("10.0")
    assert t["url"].endswith("/cuda_10.0.130_410.48_linux")
    assert len(t["sha256"]) == 64
    assert t["installer"] == "perl" and "--toolkitpath={prefix}" in t["installer_info"]["toolkit_only"]
    assert t["gcc_max"] == 7 and t["disk_gb"]["prefix"] >= 4
    assert m.toolkit("10.1")["installer"] == "new"


def test_driver_minimum_per_release_and_family(m):
    n = m.driver_need("10.0.130")
    assert n.release_min == "410.48" and n.family_min is None and not n.minor_version_compat
    n = m.driver_need("12.2.2")
    # NVIDIA's tables give >= 525 (current) and >= 525.60.13 (earlier editions): the lower counts
    assert n.release_min == "535.104.05" and n.family_min == "525"
    # only X.Y known: the lowest of its updates, so nobody is told wrongly that the driver is too old
    assert m.driver_need("12.4").release_min == "550.54.14"
    n = m.driver_need("13.5")
    assert n.release_min is None and n.family_min == "580"


def test_gcc_limits(m):
    assert m.gcc_max("10.0.130") == 7
    assert m.gcc_max("11.4.0") == 10 and m.gcc_max("11.4.4") == 11
    assert m.gcc_max("12.4") == 13 and m.gcc_max("13.4") == 16


def test_cudnn_builds_and_archives(m):
    r = m.cudnn("7.6.5")
    assert r["version"] == "7.6.5.32"
    assert m.cudnn_has_build(r, "10.0") and not m.cudnn_has_build(r, "11.0")
    a = m.cudnn_archive("7.6.5", "10.0")
    assert a["name"] == "cudnn-10.0-linux-x64-v7.6.5.32.tgz" and a["lib"] == "cuda/lib64"
    assert a["header"] == "cudnn.h"
    a = m.cudnn_archive("9.1.0.70", "12.4")
    assert a["name"] == "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
    assert a["lib"].endswith("-archive/lib") and a["header"] == "cudnn_version.h"
    assert m.cudnn_has_build(m.cudnn("8.9.7"), "11.3")


def test_torch_variants_and_pypi_default(m):
    assert m.pypi_variant("1.1.0") == "cu90"
    assert m.pypi_variant("1.12.1") == "cu102"
    assert m.pypi_variant("2.4.0") == "cu121"
    v = m.torch_variant("1.1.0", "cu100")
    assert v["cuda"] == "10.0" and "sm_70" in v["arch"]
    assert m.torch("1.1.0")["torchvision"] == ["0.3.0"]
    assert "3.7" in m.torch("1.1.0")["python"]
    assert m.torch_variant("2.4.0", "cu117") is None


@pytest.mark.parametrize("name,cc", [
    ("NVIDIA A100-SXM4-80GB", (8, 0)), ("A100", (8, 0)), ("Tesla V100-PCIE-16GB", (7, 0)),
    ("GeForce RTX 3090", (8, 6)), ("NVIDIA GeForce GTX 1080 Ti", (6, 1)), ("NVIDIA H100 80GB HBM3", (9, 0)),
    ("Quadro RTX 6000", (7, 5)), ("NVIDIA RTX 6000 Ada Generation", (8, 9)), ("A10", (8, 6)),
    ("Tesla K80", (3, 7)), ("NVIDIA L4", (8, 9)), ("NVIDIA RTX 4000 Ada Generation", (8, 9)),
    ("Quadro RTX 4000", (7, 5)), ("NVIDIA RTX A4000", (8, 6)), ("Tesla V100S-PCIE-32GB", (7, 0)),
])
def test_gpu_names_match_tolerantly(m, name, cc):
    assert m.gpu_cc(name) == cc


def test_unknown_gpu_is_none(m):
    assert m.gpu_cc("Radeon RX 7900") is None


def test_arch_cuda_range(m):
    a = m.arch((7, 0))
    assert a["first_cuda"] == "9.0" and a["last_cuda"] == "12.9"
    assert m.arch((9, 0))["last_cuda"] is None


# ---------------------------------------------------------------- broken copies
def _broken(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    text = TOP.read_text()
    assert old in text, old
    p = tmp_path / "broken.yaml"
    p.write_text(text.replace(old, new, count))
    return p


def _error(path: Path) -> str:
    with pytest.raises(MatrixError) as e:
        load_matrix(path)
    return e.value.message


def test_missing_source_names_the_entry(tmp_path):
    text = TOP.read_text()
    # the first CUDA release's `source:` line removed
    i = text.index('    - version: "9.0.176"')
    j = text.index("      source: ", i)
    k = text.index("\n", j) + 1
    p = tmp_path / "m.yaml"
    p.write_text(text[:j] + text[k:])
    assert _error(p).endswith("cuda.releases[0].source: missing")


def test_unquoted_version_is_refused(tmp_path):
    msg = _error(_broken(tmp_path, 'min_driver: "410.48"', "min_driver: 410.48"))
    assert "cuda.releases[4].min_driver" in msg and "quoted" in msg


def test_bad_version_string(tmp_path):
    msg = _error(_broken(tmp_path, 'min_driver: "410.48"', 'min_driver: "410.4x"'))
    assert "cuda.releases[4].min_driver: bad version string" in msg


def test_checksum_of_wrong_length(tmp_path):
    msg = _error(_broken(tmp_path, '92351f0e4346694d0fcb4ea1539856c9eb82060c25654463bfd8574ec35ee39a"',
                         '92351f0e4346694d0fcb4ea1539856c9eb82060c25654463bfd8574ec35ee39a0"'))
    assert "cuda.releases[4].sha256: sha256 must be 64" in msg and "got 65" in msg


def test_duplicate_release(tmp_path):
    msg = _error(_broken(tmp_path, 'version: "10.1.105"', 'version: "10.0.130"'))
    assert "cuda.releases[5].version: duplicate release 10.0.130" in msg


def test_unknown_key(tmp_path):
    msg = _error(_broken(tmp_path, "      gcc_max: 7\n", "      gcc_max: 7\n      gcc_maxx: 8\n"))
    assert "gcc_maxx: unknown key" in msg


def test_torch_naming_an_unknown_cuda_variant(tmp_path):
    msg = _error(_broken(tmp_path, "        cu100: {arch: cu100-1.0, cudnn: \"7.4.1\"",
                         "        cu80: {arch: cu100-1.0, cudnn: \"7.4.1\""))
    assert "torch.releases[1].variants.cu80: names CUDA 8.0, which is not in cuda.releases" in msg


def test_torch_naming_an_unknown_torchvision(tmp_path):
    msg = _error(_broken(tmp_path, 'torchvision: ["0.3.0"]', 'torchvision: ["0.3.9"]'))
    assert "torch.releases[3].torchvision[0]: torchvision '0.3.9' is not in torchvision.versions" in msg


def test_installer_generation_must_fit_the_version(tmp_path):
    text = TOP.read_text()
    i = text.index('    - version: "10.1.105"')
    j = text.index("installer: new", i)
    p = tmp_path / "m.yaml"
    p.write_text(text[:j] + "installer: perl" + text[j + len("installer: new"):])
    assert "cuda.releases[5].installer: CUDA 10.1.105 is outside the perl installer's range" in _error(p)


def test_not_yaml_and_missing_file(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("schema: [1\n")
    assert "(file): not valid YAML" in _error(p)
    assert "cannot read" in _error(tmp_path / "none.yaml")


def test_cli_validate_ok_and_broken(tmp_path):
    r = run_cli("matrix", "validate")
    assert r.returncode == 0 and "ok" in r.stdout and "CUDA releases" in r.stdout
    bad = _broken(tmp_path, 'torchvision: ["0.3.0"]', 'torchvision: ["0.3.9"]')
    r = run_cli("matrix", "validate", str(bad))
    assert r.returncode == 2
    assert r.stderr.strip() == (f"envcheck: {bad}: torch.releases[3].torchvision[0]: "
                                "torchvision '0.3.9' is not in torchvision.versions")
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_cli_validate_takes_the_matrix_option(tmp_path):
    bad = _broken(tmp_path, "schema: 1", "schema: 2")
    r = run_cli("matrix", "validate", "--matrix", str(bad))
    assert r.returncode == 2 and "schema: unsupported schema 2" in r.stderr


def test_a_torch_variant_must_bundle_a_known_cudnn_built_for_its_cuda(tmp_path):
    msg = _error(_broken(tmp_path, 'cu100: {arch: cu100-1.0, cudnn: "7.4.1"', 'cu100: {arch: cu100-1.0, cudnn: "7.0.5"'))
    assert "torch.releases[1].variants.cu100.cudnn: cuDNN 7.0.5.15 has no build for CUDA 10.0" in msg
    msg = _error(_broken(tmp_path, 'cu100: {arch: cu100-1.0, cudnn: "7.4.1"', 'cu100: {arch: cu100-1.0, cudnn: "7.9.1"'))
    assert "cuDNN 7.9.1 is not in cudnn.releases" in msg


def test_a_broken_gcc_above_the_limit_is_refused(tmp_path):
    msg = _error(_broken(tmp_path, "gcc_broken: [{gcc: 11,", "gcc_broken: [{gcc: 12,"))
    assert re.search(r"cuda\.releases\[\d+\]\.gcc_broken\[0\]\.gcc: gcc 12 is above gcc_max 11", msg)


def test_cli_show_prints_one_resolved_record_as_json():
    import json
    r = run_cli("matrix", "show", "cuda", "10.0")
    assert r.returncode == 0
    t = json.loads(r.stdout)
    assert t["version"] == "10.0.130" and t["installer_info"]["toolkit_only"][0] == "--silent"
    g = json.loads(run_cli("matrix", "show", "gpu", "Tesla V100-PCIE-16GB").stdout)
    assert g["cc"] == "7.0" and g["arch"]["last_cuda"] == "12.9"
    c = json.loads(run_cli("matrix", "show", "cudnn", "7.6.5").stdout)
    assert "cudnn-10.0-linux-x64-v7.6.5.32.tgz" in [a["name"] for a in c["archives"]]
    t = json.loads(run_cli("matrix", "show", "torch", "1.1.0").stdout)
    assert t["pypi"] == "cu90" and "sm_75" in t["variants"]["cu100"]["arch"]


def test_cli_show_unknown_is_one_line_exit_2():
    r = run_cli("matrix", "show", "cuda", "10.3")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("envcheck: cuda.releases: no CUDA 10.3 in the matrix; nearest known: 10.2.89, "
                                "11.0.1 (fix: pick one of those, or add the release to compat_matrix.yaml)")


def test_a_numpy_api_build_is_of_a_listed_release_or_one_older_than_the_matrix(tmp_path):
    # 0.2.0 predates torch.releases (0.4.1 on) and is listed for its numpy alone; 1.5.2 never existed
    assert "torch 1.5.2 is not in torch.releases" in _error(_broken(tmp_path, '- {torch: "0.2.0", api: "0xb"',
                                                                   '- {torch: "1.5.2", api: "0xb"'))
    assert "0xq" in _error(_broken(tmp_path, '- {torch: "0.2.0", api: "0xb"', '- {torch: "0.2.0", api: "0xq"'))


def test_a_release_index_must_name_the_variant(tmp_path):
    # 1.8.2 (LTS) is served only by its own index per variant: without {tag} every build would be
    # told the same index
    msg = _error(_broken(tmp_path, 'index: "https://download.pytorch.org/whl/lts/1.8/{tag}"',
                         'index: "https://download.pytorch.org/whl/lts/1.8/cu111"'))
    assert msg.endswith("must hold {tag} (the variant, e.g. cu111)") and ".index: " in msg, msg
    msg = _error(_broken(tmp_path, 'index: "https://download.pytorch.org/whl/lts/1.8/{tag}"', 'index: "lts/{tag}"'))
    assert ".index" in msg, msg
