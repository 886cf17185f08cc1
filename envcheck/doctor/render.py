"""Rendering of a doctor report (envcheck/doctor/health.py): the table, JUnit XML for CI, and the
Prometheus node_exporter textfile format. Rendering only (the files are written by envcheck/paths.py: write_output)."""
from __future__ import annotations

import math
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict
from typing import Dict, List, Optional

from envcheck.doctor.checks import BUSBW
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, WARN, DoctorReport, outcome
from envcheck.hostlist import compress_hostlist
from envcheck.render import fold_blocks, plural, styled, summary_line

_VERDICT_VALUE = {PASS: 0, WARN: 1, FAIL: 2, UNKNOWN: 3}


# ---------------------------------------------------------------- table
MEASURED = {BUSBW: ("all-reduce bus bandwidth", "GB/s (nccl-tests' busbw at the largest size)"),
            "allreduce_pair_median_busbw_gbps": ("pair rounds' median bus bandwidth", "GB/s")}


def _fixes(report: DoctorReport, host: str, verdict: str) -> List[str]:
    """The fixes of the checks that gave the node its verdict, each once."""
    return list(dict.fromkeys(c.fix for c in report.checks if c.host == host and c.status == verdict and c.fix))


def render_table(report: DoctorReport, color: bool = False, strict: bool = False) -> str:
    """Nodes with the same verdict, reasons and fixes on one row under their folded hostlist
    (clush -b), each non-PASS row with its fix; the network figures in words; the summary line."""
    def paint(text: str, style: str) -> str:
        return styled(text, style, color)

    groups = fold_blocks((n.host, [n.verdict] + [f"  {r}" for r in n.reasons]
                          + ([f"  fix: {f}" for f in _fixes(report, n.host, n.verdict)] if n.verdict != PASS else []))
                         for n in report.nodes)
    width = max([len(where) for where, _ in groups] + [5])
    lines = [f"{'HOSTS':<{width}}  VERDICT  REASON"]
    for where, (verdict, *rest) in groups:
        first = rest[0].strip() if rest else ""
        lines.append(f"{where:<{width}}  {paint(f'{verdict:<7}', verdict)}  {first}".rstrip())
        lines.extend(f"{'':<{width}}           {r.strip()}" for r in rest[1:])
    for m in report.measurements:
        if "host" in m.labels:  # per-node/GPU gauges are for dashboards; the verdicts name the faults
            continue
        what, unit = MEASURED.get(m.name, (m.name.replace("_", " "), ""))
        lines.append(f"{what}: {_num(m.value)} {unit}".rstrip())
    if report.suspects:
        lines.append("suspect node(s): " + compress_hostlist(report.suspects))
    lines.extend(report.notes)
    by = [n.verdict for n in report.nodes]
    lines.append(summary_line(outcome(report).verdict(strict), plural(len(report.hosts), "host"),
                              [(by.count(v), v) for v in (FAIL, UNKNOWN, WARN, PASS)],
                              f"{report.duration:.1f} s", paint=paint))
    return "\n".join(lines) + "\n"


def _num(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") if math.isfinite(v) else str(v)


# ---------------------------------------------------------------- JUnit
def render_junit(report: DoctorReport, strict: bool = False) -> str:
    """One <testsuite> per host, one <testcase> per check. FAIL -> <failure>, UNKNOWN -> <error>
    (the check could not run), SKIP -> <skipped>, WARN -> passes with the message in
    <system-out> (a <failure> with --strict)."""
    root = ET.Element("testsuites", name="envcheck doctor")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    by_host: "OrderedDict[str, list]" = OrderedDict((h, []) for h in report.hosts)
    for c in report.checks:
        by_host.setdefault(c.host, []).append(c)
    for host, checks in by_host.items():
        suite = ET.SubElement(root, "testsuite", name=host)
        if report.slurm:   # which job and steps ran the checks (--launcher srun)
            props = ET.SubElement(suite, "properties")
            ET.SubElement(props, "property", name="slurm_job_id", value=str(report.slurm.get("job_id", "")))
            ET.SubElement(props, "property", name="slurm_steps", value=",".join(report.slurm.get("steps") or []))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        t_sum = 0.0
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=f"envcheck.{host}", name=c.check,
                                 time=f"{c.duration:.3f}")
            counts["tests"] += 1
            t_sum += c.duration
            detail = "\n".join(x for x in (c.message, f"fix: {c.fix}" if c.fix else "") if x)
            if c.status == FAIL or (c.status == WARN and strict):
                el = ET.SubElement(case, "failure", message=_one_line(c.message), type=c.code or c.status)
                el.text = detail
                counts["failures"] += 1
            elif c.status == UNKNOWN:
                el = ET.SubElement(case, "error", message=_one_line(c.message), type="unreachable")
                el.text = detail
                counts["errors"] += 1
            elif c.status == SKIP:
                ET.SubElement(case, "skipped", message=_one_line(c.message))
                counts["skipped"] += 1
            elif c.status == WARN:
                ET.SubElement(case, "system-out").text = f"WARN: {detail}"
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("time", f"{t_sum:.3f}")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{report.duration:.3f}")
    if hasattr(ET, "indent"):  # 3.9+; only cosmetic
        ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _one_line(s: str) -> str:
    return " ".join((s or "").split())[:500]


# ---------------------------------------------------------------- Prometheus
def escape_label(value: str) -> str:
    """Label values: backslash, double quote and line feed escaped (exposition format 0.0.4)."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("\n", "\\n")


def _labels(d: Dict[str, str]) -> str:
    if not d:
        return ""
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in d.items()) + "}"


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


def render_prometheus(report: DoctorReport, now: Optional[float] = None) -> str:
    """node_exporter textfile collector format: HELP/TYPE once per family, then its samples."""
    families: "OrderedDict[str, tuple]" = OrderedDict()

    def add(name: str, help_: str, labels: Dict[str, str], value: float) -> None:
        families.setdefault(name, (help_, []))[1].append((labels, value))

    for c in report.checks:
        add("envcheck_check_ok", "1 if the check passed (or only warned) on the host, 0 if not.",
            {"host": c.host, "check": c.check}, 0.0 if c.status in (FAIL, UNKNOWN) else 1.0)
    for n in report.nodes:
        add("envcheck_node_verdict", "Doctor verdict per node: 0 PASS, 1 WARN, 2 FAIL, 3 UNKNOWN.",
            {"host": n.host}, float(_VERDICT_VALUE[n.verdict]))
    for m in report.measurements:
        add(f"envcheck_{m.name}", m.help or m.name, m.labels, m.value)
    add("envcheck_doctor_verdict", "Doctor verdict for the whole run: 0 PASS, 1 WARN, 2 FAIL, 3 UNKNOWN.",
        {}, float(_VERDICT_VALUE.get(report.verdict, 3)))
    if report.slurm:
        add("envcheck_doctor_slurm_job", "The Slurm job and steps the run went through (--launcher srun).",
            {"job_id": str(report.slurm.get("job_id", "")), "steps": ",".join(report.slurm.get("steps") or [])}, 1.0)
    add("envcheck_doctor_duration_seconds", "Wall time of the doctor run.", {}, report.duration)
    add("envcheck_doctor_last_run_timestamp_seconds", "When the doctor run finished (Unix time).", {},
        float(int(now if now is not None else time.time())))
    out: List[str] = []
    for name, (help_, samples) in families.items():
        out.append(f"# HELP {name} {_escape_help(help_)}")
        out.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            out.append(f"{name}{_labels(labels)} {_fmt(value)}")
    return "\n".join(out) + "\n"
