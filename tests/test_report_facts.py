"""Rendering of facts and audit results (envcheck/report.py): what a reader sees for a stack."""
from __future__ import annotations

from envcheck.model import Finding, HostResult
from envcheck.report import audit_json, render_audit, render_facts

# a saved audit of a node of the original setup (driver 410.48, CUDA 10.0, cuDNN 7.6.5,
# torch 1.1.0 cu100), one GPU of whose two cannot run torch's kernels
FACTS = {
    "schema": 1, "origin": "probe", "hostname": "gpu07",
    "os": {"name": "Ubuntu", "pretty": "Ubuntu 18.04.6 LTS", "kernel": "4.15.0-213-generic", "arch": "x86_64"},
    "python": {"version": "3.6.9", "executable": "/opt/venv/bin/python3"},
    "driver": {"version": "410.48", "source": "nvidia-smi", "cuda": None, "error": None,
               "kernel_module": "410.48"},
    "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": None, "memory_mib": 16130},
             {"index": 1, "name": "Tesla V100-SXM2-16GB", "compute_capability": None, "memory_mib": 16130}],
    "cuda": {"toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130", "source": "version.txt"},
                          {"path": "/usr/local/cuda-9.0", "version": "9.0.176", "source": "version.txt"}],
             "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-10.0"},
             "nvcc": {"path": "/usr/local/cuda-10.0/bin/nvcc", "version": "10.0.130"},
             "version": "10.0.130", "in_use": {"path": "/usr/local/cuda-10.0", "via": "PATH"}},
    "cudnn": {"version": "7.6.5", "headers": [{"path": "/usr/local/cuda-10.0/include/cudnn.h", "version": "7.6.5"}],
              "libs": [{"path": "/usr/local/cuda-10.0/lib64/libcudnn.so.7", "version": "7.6.5"}]},
    "packages": {"torch": {"version": "1.1.0", "location": "/opt/venv/lib/python3.6/site-packages",
                           "shadows": [{"version": "1.0.0", "location": "/usr/lib/python3/dist-packages"}]},
                 "torchvision": {"version": "0.3.0", "location": "/opt/venv/lib/python3.6/site-packages"},
                 "nvidia-nccl-cu12": {"version": "2.21.5", "location": "/x"}},
    "torch": {"version": "1.1.0", "local": None, "cuda": None, "cuda_source": None},
    "deep": {"torch": "1.1.0", "torch_cuda": "10.0.130", "cudnn": 7501, "nccl": "2.4.2",
             "cuda_available": True, "device_count": 2, "arch_list": None, "error": None,
             "ops": [{"device": 0, "ok": True, "error": None, "name": "Tesla V100-SXM2-16GB"},
                     {"device": 1, "ok": False, "name": "Tesla V100-SXM2-16GB",
                      "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device"}]},
    "nccl": {"version": "2.4.2", "source": "torch"},
    "gcc": {"version": "7.5.0", "path": "/usr/bin/gcc"},
    "env": {"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0", "NCCL_SOCKET_IFNAME": "eno1"},
    "interfaces": [{"name": "eno1", "addrs": ["10.1.4.17/16"], "state": "up"},
                   {"name": "ib0", "addrs": [], "state": "down"}],
    "errors": ["nvidia-smi: compute_cap unknown to this driver"],
}


def lines():
    return render_facts(FACTS).splitlines()


def row(label):
    return [l for l in lines() if l.split()[:1] == [label]][0]


def test_each_component_has_its_row_with_the_version_and_where_it_came_from():
    assert row("driver").endswith("410.48, via nvidia-smi")
    assert row("gpus").endswith("2 x Tesla V100-SXM2-16GB (16130 MiB)")
    assert row("cuda").endswith("10.0.130 in use (via PATH: /usr/local/cuda-10.0)")
    assert "  /usr/local/cuda-10.0  10.0.130 (version.txt) <- /usr/local/cuda, in use" in render_facts(FACTS)
    assert row("cudnn").endswith("7.6.5 (system)")
    assert row("nccl").endswith("2.4.2 (from torch)")
    assert row("python").endswith("3.6.9 /opt/venv/bin/python3")
    assert row("gcc").endswith("7.5.0 /usr/bin/gcc")
    assert row("interfaces").endswith("eno1 10.1.4.17/16 (up)")
    assert "               no IPv4: ib0" in render_facts(FACTS)


def test_torch_without_a_local_tag_says_pypi_decides_and_shows_the_shadowed_copy():
    r = row("torch")
    assert "1.1.0  (no local tag: PyPI's default CUDA variant)" in r
    assert "[also 1.0.0 in /usr/lib/python3/dist-packages]" in r
    assert row("torchaudio").endswith("-")
    assert row("nvidia-*").endswith("nvidia-nccl-cu12 2.21.5")


def test_env_shows_what_is_set_and_lists_what_is_not():
    text = render_facts(FACTS)
    assert "CUDA_HOME=/usr/local/cuda-10.0" in text and "NCCL_SOCKET_IFNAME=eno1" in text
    assert "unset: CUDA_PATH LD_LIBRARY_PATH CUDA_VISIBLE_DEVICES GLOO_SOCKET_IFNAME MASTER_ADDR MASTER_PORT" in text


def test_deep_results_name_the_gpu_whose_op_failed_and_the_error():
    text = render_facts(FACTS)
    assert "GPU 0 Tesla V100-SXM2-16GB: tiny op ok" in text
    assert ("GPU 1 Tesla V100-SXM2-16GB: tiny op FAILED: RuntimeError: CUDA error: no kernel image "
            "is available for execution on the device") in text
    assert row("probe").endswith("nvidia-smi: compute_cap unknown to this driver")


def test_facts_from_check_flags_with_almost_nothing_render_without_error():
    text = render_facts({"schema": 1, "origin": "flags", "cuda": {"version": "10.0"}})
    assert "10.0 in use" in text and "driver       -" in text and "interfaces   -" in text


def test_audit_document_and_text_carry_findings_and_unreachable_hosts():
    bad = Finding("error", "driver-too-old", "driver", "CUDA driver version is insufficient",
                  fix="install driver >= 410.48")
    results = [HostResult("gpu07", facts=FACTS, findings=[bad]),
               HostResult("gpu08", error="probe did not run: timed out after 60 s")]
    doc = audit_json(results)
    assert doc["ok"] is False and doc["fleet_findings"] == []
    assert [h["ok"] for h in doc["hosts"]] == [False, False]
    assert doc["hosts"][0]["findings"][0]["code"] == "driver-too-old"
    assert doc["hosts"][1]["facts"] is None and "timed out" in doc["hosts"][1]["error"]
    text = render_audit(results)
    assert "  ERROR   driver      driver-too-old: CUDA driver version is insufficient" in text
    assert "          fix: install driver >= 410.48" in text
    assert "gpu08: NOT AUDITED: probe did not run: timed out after 60 s" in text
    assert audit_json([HostResult("a", facts=FACTS)])["ok"] is True


def test_a_missing_driver_shows_the_reason_once():
    f = dict(FACTS, driver={"version": None, "error": "no NVIDIA driver found: nvidia-smi not found"})
    assert row_of(f, "driver").endswith("not found (nvidia-smi not found)")


def row_of(facts, label):
    return [l for l in render_facts(facts).splitlines() if l.split()[:1] == [label]][0]
