"""Every finding the rules give is the one the docs promise: its code is in a docs table
(docs/check-and-matrix.md, docs/health.md), with that component and that severity, it names a
source URL and a fix. Judged over the public cases (tests/cases/real-stacks.jsonl) and the
failure tables of the rule tests, with the real compat_matrix.yaml: a misspelt code, a swapped
component or severity, or a lost source shows here whichever rule it is in."""
from __future__ import annotations

import re


from envcheck.facts.from_flags import stack_facts
from envcheck.rules import judge
from tests.conftest import REPO
from tests.rules.test_real_stacks import load_cases, stack_kwargs
from tests.rules.test_rules import FAILURES, probe_facts

DOCS = ("check-and-matrix.md", "health.md")
COMPONENTS = {"driver", "gpu", "cuda", "cudnn", "torch", "torchvision", "torchaudio", "python", "gcc", "env",
              "nccl", "health", "fabric"}


def documented():
    """code -> the table row's cells, from every docs table whose first cell names codes."""
    rows = {}
    for name in DOCS:
        for line in (REPO / "docs" / name).read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| `") and len(cells) >= 3:
                for code in re.findall(r"`([A-Za-z0-9-]+)`", cells[0]):
                    # health.md's tables have no component column: all of them are "health"
                    rows[code] = (["health"] if name == "health.md" else []) + cells[1:]
    return rows


def stacks(m):
    for case in load_cases():
        yield case["id"], stack_facts(matrix=m, **stack_kwargs(case))
    for i, (flags, *_rest) in enumerate(FAILURES):
        yield f"failures[{i}]", stack_facts(matrix=m, **flags)
    yield "probe", probe_facts()
    # the environment pointing at a toolkit that is not there, and one without nvcc on PATH
    yield "env", probe_facts(env={"CUDA_HOME": "/usr/local/cuda-11.8", "PATH": "/usr/local/cuda-12.1/bin:/usr/bin",
                                  "LD_LIBRARY_PATH": "/usr/local/cuda-9.0/lib64"})
    f = probe_facts()
    f["cuda"]["nvcc"] = {"path": None, "version": None}
    yield "no-nvcc", f
    yield "health", HEALTH


HEALTH = {"schema": 1, "origin": "probe", "driver": {"version": "550.54.15"}, "gpus": [
    {"index": 0, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:07:00.0",
     "health": {"ecc": {"volatile_uncorrected": 2}, "remapped_rows": {"pending": 1, "uncorrectable": 600},
                "retired_pages_pending": True, "throttle_reasons": 0x8, "temperature_c": 86,
                "slowdown_temperature_c": 87, "persistence_mode": 0, "mig_mode": 1, "compute_mode": 2}},
    {"index": 1, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:08:00.0",
     "health": {"ecc": {"volatile_uncorrected": 0, "aggregate_uncorrected": 3}, "remapped_rows": {"failure": 1}}}],
    "health": {"pci": [{"address": "0000:07:00.0", "vendor_id": "0x10de", "device_id": "0x2330",
                        "link": {"width": 8, "max_width": 16, "speed": "16.0 GT/s PCIe", "max_speed": "32.0 GT/s PCIe"}},
                       {"address": "0000:08:00.0", "vendor_id": "0x10de", "device_id": "0x2330",
                        "link": {"width": 16, "max_width": 16, "speed": "16.0 GT/s PCIe",
                                 "max_speed": "32.0 GT/s PCIe"}},
                       {"address": "0000:09:00.0", "vendor_id": "0x10de", "device_id": "0x2330"}],
               "kernel_log": {"source": "/dev/kmsg", "dropped": 0, "events": [
                   {"xid": 79, "pci": "0000:07:00", "count": 1, "last": "NVRM: Xid (PCI:0000:07:00): 79"},
                   {"xid": 13, "pci": "0000:08:00", "count": 2, "first": "NVRM: Xid (PCI:0000:08:00): 13"},
                   {"xid": 9999, "pci": "0000:08:00", "count": 1}]}}}


def test_every_finding_is_documented_with_its_component_and_severity_a_source_and_a_fix(m):
    rows, seen = documented(), set()
    for name, f in stacks(m):
        for x in judge(f, m, verify_fixes=False).findings:
            code = "xid-N" if re.fullmatch(r"xid-\d+", x.code) else x.code
            where = f"{name}: {x.code}"
            assert code in rows, f"{where} is in no docs table"
            cells = " ".join(rows[code]).lower()
            assert x.component in COMPONENTS and (x.component in rows[code][0] or rows[code][0] == "…"), where
            assert x.severity in cells, f"{where}: {x.severity} not in {rows[code][:2]}"
            assert x.source.startswith("https://"), f"{where}: source {x.source!r}"
            assert x.message.strip() and x.fix.strip(), where
            seen.add(x.code)
    assert len(seen) >= 30, sorted(seen)   # the corpus reaches most rules
