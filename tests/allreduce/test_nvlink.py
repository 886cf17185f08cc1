"""What NVLink allows inside a node (envcheck/allreduce/nvlink.py, nvlink.yaml): the probe's nvlink
section read through the stand-in libnvidia-ml.so.1 (tests/cluster/fake_nvml.c answers the link
calls; no GPU exists here), the figure made of it, and where it is shown (nccl-test's header and
summary, the JSON). The expected figures are NVIDIA's published totals (both directions of all
links, e.g. "900 GB/s" for H100) halved here, not read back from the table under test."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.allreduce import run as ar
from envcheck.allreduce.bandwidth import plateau
from envcheck.allreduce.linkrate import Allowed, allowed
from envcheck.allreduce.nvlink import NvLink, node_nvlink, table
from envcheck.allreduce.render import render_text
from envcheck.audit.probe import shipped_source
from envcheck.facts import views
from envcheck.facts.validate import errors as facts_schema_errors
from envcheck.ranks.preflight import PROBE_SECTIONS
from envcheck.remote import Remote, RunResult
from tests.node.probe_helpers import PROBE

FAKE_NVML = Path(__file__).resolve().parent.parent / "cluster" / "fake_nvml.c"
# NVIDIA's figure per GPU, both directions of every link (the NVLink page's generations table,
# the Pascal, DGX-1 V100 and GA102 whitepapers): busbw compares with half of it
NVIDIA_TOTAL_GBPS = {"6.0": 160, "7.0": 300, "8.0": 600, "8.6": 112.5, "9.0": 900, "10.0": 1800}
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def nvml(tmp_path_factory):
    d = tmp_path_factory.mktemp("nvml")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-Wno-format-truncation", "-o", str(d / "libnvidia-ml.so.1"),
                    str(FAKE_NVML)], check=True, capture_output=True, timeout=120)
    (d / "nvml.conf").write_text(
        "driver=550.127.05\ncuda=12040\n"
        f"gpu={H100}|81559|9.0|GPU-a|00000000:07:00.0\n"
        f"gpu={H100}|81559|9.0|GPU-b|00000000:17:00.0\n"
        "health=0|nvlinks=18,nvlink_version=6\n"
        "health=1|nvlinks=18,nvlink_down=0x5,nvlink_version=6\n")   # links 0 and 2 down
    return d


def _probe(lib: Path, *args: str, use_pynvml: bool = False, script: Path = PROBE) -> dict:
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(lib), "ENVCHECK_SIM_NVML": str(lib / "nvml.conf")}
    cmd = [sys.executable, str(script), *args]
    if use_pynvml:
        pytest.importorskip("pynvml")
    else:   # a node's system python3: no nvidia-ml-py, so ctypes
        env["PYTHONNOUSERSITE"] = "1"
        cmd.insert(1, "-S")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("use_pynvml", [True, False], ids=["pynvml", "ctypes"])
def test_the_probe_reads_each_gpus_links_up_and_nvmls_version_as_the_preflight_asks(nvml, use_pynvml, tmp_path):
    script = tmp_path / "probe.py"   # only the parts the preflight ships
    script.write_text(shipped_source(PROBE_SECTIONS))
    doc = _probe(nvml, "--only", ",".join(PROBE_SECTIONS), use_pynvml=use_pynvml, script=script)
    assert [g["nvlink"] for g in doc["gpus"]] == [{"links": 18, "up": 18, "nvml_version": 6},
                                                  {"links": 18, "up": 16, "nvml_version": 6}]
    assert doc["nvlink"] == {"read": True, "error": None} and doc["errors"] == []
    assert facts_schema_errors(doc) == [] and facts_schema_errors(dict(doc, nvlink={"read": "yes"})) != []
    assert [g["nvlink"] for g in _probe(nvml, "--only", "nvlink")["gpus"]][0]["up"] == 18   # pulls in gpus
    assert "nvlink" not in _probe(nvml)["gpus"][0]   # the audit's document does not pay for it


def test_a_gpu_without_nvlink_or_a_driver_without_the_version_call(tmp_path, nvml):
    (tmp_path / "libnvidia-ml.so.1").symlink_to(nvml / "libnvidia-ml.so.1")
    (tmp_path / "nvml.conf").write_text(
        "driver=470.82.01\ncuda=11040\ngpu=Tesla V100-SXM2-16GB|16160|7.0|GPU-a|00000000:07:00.0\n"
        "gpu=NVIDIA L40S|46068|8.9|GPU-b|00000000:17:00.0\nhealth=0|nvlinks=6\n")
    doc = _probe(tmp_path, "--only", "nvlink")
    assert [g["nvlink"] for g in doc["gpus"]] == [{"links": 6, "up": 6, "nvml_version": None}, None]


def test_the_node_figure_from_the_probe_is_the_gpu_with_the_fewest_links_up(nvml):
    nv = node_nvlink(views.node(_probe(nvml, "--only", "nvlink")).gpu_links)
    assert (nv.gpu, nv.gpus, nv.generation, nv.links, nv.links_max) == (H100, 2, 4, 16, 18)
    assert nv.gbps == pytest.approx(16 / 18 * NVIDIA_TOTAL_GBPS["9.0"] / 2)    # 400 of H100's 450
    assert nv.label == "NVLink 4 \u00d7 16" and nv.nvml_version == 6 and nv.source.startswith("https://www.nvidia.com/")


@pytest.mark.parametrize("cc", sorted(NVIDIA_TOTAL_GBPS))
def test_every_architecture_with_all_links_up_allows_half_nvidias_total(cc):
    entry = next(e for e in table() if cc in e["cc"])
    gpu = {"name": "GPU", "compute_capability": cc, "nvlink": {"links": entry["links"], "up": entry["links"]}}
    assert node_nvlink([gpu, gpu]).gbps == pytest.approx(NVIDIA_TOTAL_GBPS[cc] / 2)
    assert entry["source"].startswith("https://")


def gpu(cc="9.0", up=18, name=H100):
    return {"name": name, "compute_capability": cc, "nvlink": None if up is None else {"links": 18, "up": up}}


@pytest.mark.parametrize("gpus", [[], [gpu(), gpu(up=None)], [gpu(), gpu(name="NVIDIA H200")], [gpu(cc="7.5")],
                                  [gpu(up=0)], [{"name": H100, "compute_capability": "9.0"}]],
                         ids=["no-gpu", "one-without-nvlink", "mixed-models", "arch-not-listed", "no-link-up",
                              "not-read-through-nvml"])
def test_an_nvlink_figure_that_cannot_be_known_is_none_never_a_guess(gpus):
    assert node_nvlink(gpus) is None


NV = {"n1": node_nvlink([gpu()] * 8).to_dict(), "n2": node_nvlink([gpu(up=2)] * 8).to_dict()}
LINKS = {"n1": {"gbps": 50.0, "source": "4 InfiniBand port(s), 100 Gb/s each"},
         "n2": {"gbps": 50.0, "source": "4 InfiniBand port(s), 100 Gb/s each"}}


def ranks(*hosts):
    return [{"rank": i, "node": h} for i, h in enumerate(hosts)]


def test_one_node_is_judged_against_nvlink_and_several_against_the_slower_of_network_and_nvlink():
    assert allowed(LINKS, NV, ranks("n1", "n1"), "nccl") == Allowed(450.0, "NVLink 4 \u00d7 18")
    assert allowed(LINKS, NV, ranks("n1", "n1"), "gloo") is None         # gloo never uses NVLink; no NIC crossed
    assert allowed(LINKS, {}, ranks("n1", "n1"), "nccl") is None
    both = allowed(LINKS, NV, ranks("n1", "n1", "n2", "n2"), "nccl")
    assert both == Allowed(25.0, "4 InfiniBand port(s), 100 Gb/s each")  # 50 GB/s shared by 2 ranks
    slow_nv = dict(NV, n2=node_nvlink([gpu(cc="8.6", up=1)] * 8).to_dict())     # 14.06 GB/s
    assert allowed(LINKS, slow_nv, ranks("n1", "n1", "n2", "n2"), "nccl") == Allowed(14.0625, "NVLink 3 \u00d7 1")


def rows(*busbw):
    return [{"bytes": 1 << (20 + i), "busbw": b} for i, b in enumerate(busbw)]


def test_the_plateau_is_where_busbw_stays_within_10_percent_of_its_best():
    assert plateau(rows(1, 10, 60, 95, 100, 98)) == {"plateau_bytes": 8 << 20, "still_rising": False}
    assert plateau(rows(1, 10, 60, 80)) == {"plateau_bytes": 8 << 20, "still_rising": True}
    assert plateau(rows(5)) == {"plateau_bytes": None, "still_rising": None}


class Named(Remote):
    def __init__(self, name):
        self.name = name


def test_nccl_test_shows_each_nodes_nvlink_and_the_share_of_it_at_the_size_measured():
    rep = ar.Report(hosts=["n1"], world_size=2, backend="nccl", nvlinks={"n1": NV["n1"]}, links={"n1": None})
    recs = [{"type": "rank", "rank": 0}, {"type": "rank", "rank": 1}] + [
        {"type": "result", "bytes": b, "time_us": t, "wrong": 0} for b, t in ((1 << 20, 100.0), (1 << 30, 4000.0))]
    out = "\n".join(json.dumps(r) for r in recs) + "\n"
    rep = ar._analyse(rep, [Named("n1")], [RunResult("n1", "", 0, out)], [2], [])
    s = rep.summary   # 1 GiB in 4 ms on 2 ranks: busbw = algbw = 268 GB/s, 60% of 450
    assert (s["allowed_gbps"], s["allowed_by"]) == (450.0, "NVLink 4 \u00d7 18")
    assert s["percent_of_allowed"] == pytest.approx(100 * (1 << 30) / 4e-3 / 1e9 / 450)
    text = render_text(rep)
    assert "# nvlink: n1: 8x NVIDIA H100 80GB HBM3, NVLink 4, 18 of 18 links up: 450 GB/s per GPU and direction" in text
    assert "# That is 60% of the 450 GB/s that NVLink 4 \u00d7 18 allows one rank, at 1GB" in text
    assert "# busbw is still rising at 1GB" in text
    doc = json.loads(json.dumps(rep.to_dict()))
    assert doc["nvlinks"]["n1"]["gbps"] == 450.0 and doc["nvlinks"]["n1"]["generation"] == 4


def test_a_gpu_without_a_name_is_called_gpu_and_the_dict_carries_the_figure_and_its_label():
    # the name comes from NVML; a record without one still gets a figure, shown as "GPU"
    nameless = {"name": None, "compute_capability": "9.0", "nvlink": {"links": 18, "up": 18, "nvml_version": 6}}
    nv = node_nvlink([nameless, nameless])
    assert nv == NvLink("GPU", 2, 4, 18, 18, nv.per_link_gbps, nv.source, 6)
    assert nv.to_dict() == {"gpu": "GPU", "gpus": 2, "generation": 4, "links": 18, "links_max": 18,
                            "per_link_gbps": nv.per_link_gbps, "source": nv.source, "nvml_version": 6,
                            "gbps": 18 * nv.per_link_gbps, "label": "NVLink 4 \u00d7 18"}
