#!/usr/bin/env python3
"""What the probe's health part adds to one node's probe: the probe as shipped against the same
probe without its health part, on a simulated node with 8 GPUs (fake NVML with per-GPU health,
a PCI bus of 8 GPUs among 200 other functions, a 1 MiB kernel log with Xid lines), plus the
health section's own timer and one pass over this machine's real /dev/kmsg (record per read).

    python3 bench/probe_health.py        (root: it builds a simulated node)

The target (issue: "well under 100 ms on a node with 8 GPUs") is about wall time per probe.
"""
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envcheck.audit.probe import probe_parts, probe_source  # noqa: E402
from tests.cluster import sim, standins  # noqa: E402

RUNS = 15


def setup(h):
    gpus = standins.gpu_list("A100", 8)
    gpus[3]["health"] = {"ecc_vol_unc": 2, "remap_pending": 1, "throttle": "0x48"}
    standins.plant_driver(h, "535.104.05", gpus)
    bus = [standins.pci_gpu(g["pci_bus_id"][4:].lower()) for g in gpus]
    bus += [{"address": "0000:%02x:%02x.%d" % (0x80 + i // 32, i % 32, i % 8), "vendor": "0x8086",
             "device": "0x2020", "class": "0x060400"} for i in range(200)]
    standins.plant_pci_bus(h, bus)
    lines = []
    seq = 0
    while sum(len(x) for x in lines) < 1 << 20:
        seq += 1
        text = ("NVRM: Xid (PCI:0000:37:00): 13, pid=%d, Graphics Exception" % seq if seq % 500 == 0
                else "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE, event %d" % seq)
        lines.append("6,%d,%d,-;%s\n" % (seq, seq * 1000, text))
    standins.plant_kernel_log(h, "".join(lines))


def without_health() -> str:
    """The shipped probe minus its health part (and the hook that calls it)."""
    text = probe_source()
    start = text.index("# ---- part health ")
    end = text.index("# ---- part ", start + 10)
    return text[:start] + text[end:]


def wall_ms(h, script, runs=RUNS):
    h.write_file("/tmp/bench-probe.py", script)
    got = []
    for _ in range(runs):
        t = time.perf_counter()
        h.run_local("python3 - < /tmp/bench-probe.py >/dev/null")
        got.append((time.perf_counter() - t) * 1000)
    return statistics.median(got)


def main():
    if os.geteuid() != 0:
        sys.exit("bench/probe_health.py: needs root (it builds a simulated node)")
    assert any(p.stem == "health" for p in probe_parts()), "no health part in the probe"
    c = sim.make_cluster(1, per_host_setup=setup)
    try:
        h = c[0]
        full, bare = probe_source(), without_health()
        facts = json.loads(h.run_local("python3 - < /dev/stdin", input=full).stdout)
        assert len(facts["gpus"]) == 8 and len(facts["health"]["pci"]) == 8, facts["health"]
        sections = []
        h.write_file("/tmp/bench-probe.py", full)
        for _ in range(RUNS):
            doc = json.loads(h.run_local("python3 - < /tmp/bench-probe.py").stdout)
            sections.append(doc["health"]["seconds"] * 1000)
        a, b = wall_ms(h, bare), wall_ms(h, full)
        for _ in range(2):  # interleave once more: a shared machine's load drifts
            a, b = min(a, wall_ms(h, bare)), min(b, wall_ms(h, full))
        print("simulated node: 8 GPUs (fake NVML), 208 PCI functions, 1 MiB kernel log, %d Xid events"
              % sum(e["count"] for e in facts["health"]["kernel_log"]["events"]))
        print("probe without health part: %7.1f ms wall (median of %d)" % (a, RUNS))
        print("probe with health part:    %7.1f ms wall (median of %d)" % (b, RUNS))
        print("added by health:           %7.1f ms wall" % (b - a))
        print("health section's own timer (sysfs + kernel log): %.1f ms median" % statistics.median(sections))
    finally:
        c.close()
    # the real ring buffer is read one record per syscall, unlike the planted file
    ns = {}
    exec(compile(probe_source().replace('if __name__ == "__main__":', "if False:"), "probe", "exec"), ns)
    t = time.perf_counter()
    text = ns["kmsg_text"]()
    if text is None:
        print("this machine's /dev/kmsg: not readable")
    else:
        print("this machine's /dev/kmsg: %d KiB, %d records read in %.1f ms"
              % (len(text) >> 10, text.count("\n"), (time.perf_counter() - t) * 1000))


if __name__ == "__main__":
    main()
