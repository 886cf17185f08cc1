"""Rendering only: facts and findings as text tables and as JSON documents. Nothing here decides
anything; it shows what the probe saw and what the rules said.

The audit JSON document (`envcheck audit --json`), the same shape for one host or many, local
or over SSH (schema 2; schema 1 had no "schema" key and no "drift" for a local audit):

    {
      "schema": 2,
      "ok": bool,                 # every host audited and no error finding anywhere
      "hosts": [{
        "host": "localhost",      # as given on the command line ("localhost" with no hosts)
        "ok": bool,               # audited, and no error finding on this host
        "error": str | None,      # why the host could not be audited (then facts is None)
        "facts": {...} | None,    # the probe's document, envcheck/facts/schema.py
        "findings": [{"severity", "code", "component", "message", "fix", "source",
                      "fix_check"}],    # errors only: what trying the fix found (model.FixCheck)
      }],
      "fleet_findings": [...],    # findings about several hosts at once (drift); [] for one host
      "drift": [{"component", "label", "values": {host: value}, "majority", "odd": [host]}],
                                  # [] for one host (envcheck/audit/fleet.py); odd = not the majority
    }

The text report groups hosts and findings (envcheck/audit/render.py); the JSON never does: every
host keeps its full facts and all its findings.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from envcheck.facts import schema as F
from envcheck.facts import views as V
from envcheck.facts.schema import Facts
from envcheck.render import skipped_lines, styled
from envcheck.model import ERROR, Finding, HostResult, has_errors, skipped_summary

def paint(text: str, style: str, on: bool) -> str:
    """text in the style's colour (rich, envcheck/render.py STYLES) when the CLI asks for colour
    (a terminal, NO_COLOR unset, or FORCE_COLOR), else unchanged: library output is plain text."""
    return styled(text, style, on)


def severity_label(severity: str) -> str:
    """`ERROR  `, `WARNING`, `INFO   `: one width, so messages line up."""
    return f"{severity.upper():<7}"


ENV_SHOWN = ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
             "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT")
NONE = "-"


def _driver(f: Facts) -> str:
    user, state, version = F.driver_userspace(f), F.driver_state(f), F.driver_version(f)
    if state == "module-not-loaded":
        return (f"{user.get('version') or 'unknown'} userspace installed, kernel module not loaded"
                + (f" ({user['library']})" if user.get("library") else ""))
    if state == "mismatch":
        return (f"version mismatch: userspace {user.get('version') or 'unknown'}, "
                f"kernel module {F.kernel_module(f) or 'unknown'}")
    if not version:
        why = (F.driver_error(f) or "").replace("no NVIDIA driver found: ", "")
        return f"not found ({why})" if why else ("not found" if V.driver_reported(f) else NONE)
    parts = [version]
    if V.driver_cuda(f):
        parts.append(f"supports CUDA <= {V.driver_cuda(f)}")
    if V.driver_source(f):
        parts.append(f"via {V.driver_source(f)}")
    km = F.kernel_module(f)
    if km and km != version:
        parts.append(f"kernel module {km}")
    return ", ".join(parts)


def _gpus(f: Facts) -> str:
    gpus = F.gpus(f)
    if not gpus:
        return _pci_gpus(f)
    groups: Dict[Tuple[Any, Any, Any], int] = {}
    for g in gpus:
        key = (g.get("name"), g.get("compute_capability"), g.get("memory_mib"))
        groups[key] = groups.get(key, 0) + 1
    out = []
    for (name, cc, mem), n in groups.items():
        extra = ", ".join(x for x in (f"sm_{cc.replace('.', '')}" if cc else "",
                                      f"{mem} MiB" if mem else "") if x)
        out.append(f"{n} x {name or '?'}" + (f" ({extra})" if extra else ""))
    return "; ".join(out)


def pci_gpus_summary(f: Facts) -> Optional[str]:
    """The NVIDIA GPUs sysfs shows on the PCI bus, grouped, as the controller named them
    ("2 x NVIDIA H100 SXM5 80GB (GH100, sm_90)"), else by device id; None when there are none."""
    pci = V.pci_gpus_section(f)
    if not pci:
        return None
    groups: Dict[Tuple[Any, Any, Any], int] = {}
    for g in pci:
        key = (g.get("name") or f"NVIDIA device {g.get('device_id')}", g.get("chip"), g.get("compute_capability"))
        groups[key] = groups.get(key, 0) + 1
    out = []
    for (name, chip, cc), n in groups.items():
        extra = ", ".join(x for x in (chip or "", f"sm_{cc.replace('.', '')}" if cc else "sm unknown") if x)
        out.append(f"{n} x {name} ({extra})")
    return "; ".join(out)


def _pci_gpus(f: Facts) -> str:
    """No driver lists GPUs (none installed yet?): the ones on the PCI bus."""
    found = pci_gpus_summary(f)
    return f"none listed by a driver; on the PCI bus: {found}" if found else "none"


def _cuda(f: Facts) -> List[str]:
    lines = []
    version, in_use, nvcc = F.cuda_version(f), V.cuda_in_use(f), F.nvcc(f)
    if version:
        how = in_use.get("via")
        where = in_use.get("path") or nvcc.get("path") or ""
        build = nvcc.get("build") if in_use.get("via") == "PATH" and nvcc.get("build") != version else None
        lines.append(f"{version} in use" + (f" (via {how}: {where})" if how else "")
                     + (f", nvcc V{build}" if build else ""))
    else:
        lines.append("no toolkit in use" + (" (nvcc on PATH: %s)" % nvcc["path"] if nvcc.get("path") else ""))
    link = F.cuda_symlink(f)
    for t in F.cuda_toolkits(f):
        marks = []
        if link.get("target") and t.get("path") == link.get("target"):
            marks.append(f"<- {link.get('path')}")
        if in_use.get("path") and t.get("path") == in_use.get("path"):
            marks.append("in use")
        if t.get("layout") == "distro":
            pkg = t.get("package") or {}
            marks.append("distribution package" + (f" {pkg.get('name')} {pkg.get('version')}" if pkg else "")
                         + f": headers {t.get('include') or '?'}, libraries {t.get('lib') or '?'}")
        lines.append(f"  {t.get('path')}  {t.get('version') or 'unknown version'}"
                     f" ({t.get('source') or 'no version file'})" + (" " + ", ".join(marks) if marks else ""))
    return lines


def _cudnn(f: Facts) -> List[str]:
    """The system cuDNN, the pip one torch depends on, and which of them torch loads."""
    system = F.cudnn_version(f)
    lines = [f"{system} (system)" if system else "no system cuDNN"]
    for h in F.cudnn_headers(f):
        lines.append(f"  header {h.get('path')}  {h.get('version')}")
    for lib in F.cudnn_libs(f):
        lines.append(f"  lib    {lib.get('path')}  {lib.get('version') or '?'}")
    for name, p in sorted(F.packages(f).items()):
        if name.startswith("nvidia-cudnn-cu"):
            lines.append(f"  pip    {name} {p.get('version')}  {p.get('location') or ''}".rstrip())
    loads = V.cudnn_torch_loads(f)
    if loads.get("version"):
        lines.append(f"  torch loads {loads['version']}: {loads.get('from')}")
    return lines


def _package(f: Facts, name: str) -> str:
    p = F.packages(f).get(name)
    if not p:
        return NONE
    text = p.get("version") or "?"
    if name == "torch":
        if F.torch_cuda(f):
            text += f"  (CUDA {F.torch_cuda(f)}, from {F.torch_cuda_source(f)})"
        elif F.torch_local(f) == "cpu":
            text += "  (CPU-only build)"
        else:
            text += "  (no local tag: PyPI's default CUDA variant)"
    if p.get("location"):
        text += f"  {p['location']}"
    for s in p.get("shadows") or []:
        text += f"  [also {s.get('version')} in {s.get('location')}]"
    return text


def _deep(f: Facts) -> List[str]:
    d = V.deep(f)
    if not d:
        return []
    if d.get("error") and not d.get("torch"):
        return [f"error: {d['error']}"]
    lines = [f"torch {d.get('torch')} built for CUDA {d.get('torch_cuda') or 'none'}, cuDNN "
             f"{d.get('cudnn') or NONE}, NCCL {d.get('nccl') or NONE}; cuda.is_available()="
             f"{d.get('cuda_available')}, {d.get('device_count')} device(s)"]
    if d.get("arch_list"):
        lines.append("  arch list: " + " ".join(d["arch_list"]))
    for op in d.get("ops") or []:
        state = "ok" if op.get("ok") else f"FAILED: {op.get('error')}"
        lines.append(f"  GPU {op.get('device')} {op.get('name') or ''}: tiny op {state}")
    return lines


def _nccl(nccl: Dict[str, Any]) -> List[str]:
    """The NCCL torch runs, where it was read, and a library on the node that torch does not load."""
    line = (f"{nccl['version']} (from {nccl.get('source')})" if nccl.get("version") else NONE) \
        + (f"; {nccl['note']}" if nccl.get("note") else "")
    other = nccl.get("ignored") if isinstance(nccl.get("ignored"), dict) else {}
    return [line] + ([f"  not loaded by torch: {other.get('version')} ({other.get('source')} "
                      f"{other.get('path') or ''})".replace(" )", ")")] if other else [])


def _interfaces(f: Facts) -> List[str]:
    ifs = F.interfaces(f)
    lines = [f"{i.get('name')} {' '.join(i['addrs'])}" + (f" ({i['state']})" if i.get("state") else "")
             for i in ifs if i.get("addrs")]
    rest = [i.get("name") for i in ifs if not i.get("addrs")]
    if rest:
        lines.append("no IPv4: " + " ".join(str(n) for n in rest))
    return lines or [NONE]


def _health(f: Facts) -> List[str]:
    """One line per kind of hardware fact the probe read (PCI, kernel log, fabric)."""
    if not F.health_probed(f):
        return []
    pci = F.pci_links(f)
    widths = Counter(f"x{(d.get('link') or {}).get('width')}" for d in pci)
    lines = [f"PCI: {len(pci)} NVIDIA GPU(s)" + (", links " + ", ".join(f"{c}x {w}" for w, c in sorted(widths.items()))
                                                 if pci else "")]
    log = F.kernel_log(f)
    events = [e for e in log.get("events") or [] if isinstance(e, dict)]
    if log.get("source"):
        xids = ", ".join(f"Xid {e.get('xid')} x{e.get('count')} ({e.get('pci')})" for e in events[:6])
        lines.append(f"kernel log ({log['source']}): {xids or 'no Xid'}")
    else:
        lines.append(f"kernel log: not read ({log.get('error') or 'unknown'})")
    ib = F.ib_ports(f)
    if ib:
        active = sum(1 for p in ib if "ACTIVE" in str(p.get("state")))
        lines.append(f"InfiniBand/RoCE: {active} of {len(ib)} port(s) ACTIVE")
    if F.nvswitches(f):
        fm = F.fabric_manager(f)
        lines.append(f"NVSwitches: {F.nvswitches(f)}, fabric manager "
                     f"{'running' if fm.get('running') else 'NOT running'} {fm.get('version') or ''}".rstrip())
    return lines


def fact_rows(f: Facts) -> List[Tuple[str, List[str]]]:
    """(label, lines) for every component, in the order a reader checks them."""
    os_, env = V.host_os(f), F.env(f)
    rows: List[Tuple[str, List[str]]] = [
        ("host", [" ".join(str(x) for x in (V.hostname(f), os_.get("pretty") or os_.get("name"),
                                            os_.get("kernel"), os_.get("arch")) if x) or NONE]),
        ("driver", [_driver(f)]),
        ("gpus", [_gpus(f)]),
        ("health", _health(f) or [NONE]),
        ("cuda", _cuda(f)),
        ("cudnn", _cudnn(f)),
        *((name, [_package(f, name)]) for name in ("torch", "torchvision", "torchaudio")),
        ("nccl", _nccl(F.nccl(f))),
        ("python", [" ".join(x for x in (F.python_version(f), V.python_executable(f)) if x) or NONE]),
        ("gcc", [" ".join(x for x in (F.gcc_version(f), V.gcc_path(f)) if x) or NONE]),
        ("env", [f"{k}={env[k]}" for k in ENV_SHOWN if env.get(k)]
                + ["unset: " + " ".join(k for k in ENV_SHOWN if not env.get(k))]),
        ("interfaces", _interfaces(f)),
    ]
    nvidia = sorted(k for k in F.packages(f) if k.startswith("nvidia-") and k != "nvidia-ml-py")
    if nvidia:
        rows.insert(9, ("nvidia-*", [f"{k} {F.package_version(f, k)}" for k in nvidia]))
    if _deep(f):
        rows.append(("deep", _deep(f)))
    if V.probe_errors(f):
        rows.append(("probe errors", V.probe_errors(f)))
    return rows


def render_facts(f: Facts) -> str:
    """A two-column table of one host's facts."""
    rows = fact_rows(f)
    width = max(len(label) for label, _ in rows)
    out = []
    for label, lines in rows:
        for i, line in enumerate(lines or [NONE]):
            out.append(f"  {(label if i == 0 else ''):<{width}}  {line}")
    return "\n".join(out)


def render_finding_lines(findings: Sequence[Finding], color: bool = False) -> str:
    """Findings as an indented list, errors first (the order rules.evaluate returns)."""
    if not findings:
        return "  no findings"
    out = []
    for fd in findings:
        out.append(f"  {paint(severity_label(fd.severity), fd.severity, color)} {fd.component:<11} "
                   f"{fd.code}: {fd.message}")
        if fd.fix:
            out.append(f"          fix: {fd.fix}")
    return "\n".join(out)


def render_audit(results: Iterable[HostResult], color: bool = False) -> str:
    """Every host: its facts table, then its findings (or why it could not be audited)."""
    blocks = []
    for r in results:
        if r.error:
            blocks.append(f"{r.host}: {paint('NOT AUDITED', ERROR, color)}: {r.error}")
            continue
        text = f"{r.host}\n{render_facts(r.facts or {})}\nfindings\n{render_finding_lines(r.findings, color)}"
        if r.skipped:
            text += f"\n{skipped_summary(r.skipped)}\n" + "\n".join(skipped_lines(r.skipped))
        blocks.append(text)
    return "\n\n".join(blocks)


def host_ok(r: HostResult) -> bool:
    return r.error is None and not has_errors(r.findings)


AUDIT_JSON_SCHEMA = 2


def audit_json(results: Sequence[HostResult], fleet_findings: Sequence[Finding] = ()) -> Dict[str, Any]:
    """The audit JSON document (module docstring), less the drift table the fleet audit adds."""
    hosts = [{"host": r.host, "ok": host_ok(r), "error": r.error, "facts": r.facts,
              "findings": [fd.to_dict() for fd in r.findings],
              "skipped": [s.to_dict() for s in r.skipped]} for r in results]
    ok = all(h["ok"] for h in hosts) and not any(fd.severity == ERROR for fd in fleet_findings)
    return {"schema": AUDIT_JSON_SCHEMA, "ok": ok, "hosts": hosts,
            "fleet_findings": [fd.to_dict() for fd in fleet_findings]}
