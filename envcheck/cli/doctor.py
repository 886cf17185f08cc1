import os
import tempfile
from pathlib import Path
from typing import Optional

import typer

from envcheck.allreduce import bandwidth as am
from envcheck.cli import app
from envcheck.cli.common import (Annotated, StrictOpt, GpusPerNodeOpt, JsonOpt, MatrixOpt, ShowProbeOpt, color_wanted, guard,
                                 note, print_json, show_probes_exit)
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsArg, HostsFileOpt, ExcludeOpt, GroupsFileOpt, IdentityOpt,
                                   NodePythonOpt, PortOpt, SshConfigOpt, StrictHostKeysOpt, UserOpt,
                                   HostSelection, closing_all, local_python)
from envcheck.cli.rankopts import BackendOpt, WorkerNprocOpt
from envcheck.cli.slurmopts import StepSizeOpt
from envcheck.doctor import health
from envcheck.errors import UsageError

FileOpt = Optional[Path]


def _check_writable(path: Path, flag: str) -> None:
    d = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(d))
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot write in {d}: {e.strerror}", "choose a writable directory") from e


def _check_inputs(launcher: str, local: bool, named_hosts: bool, outputs) -> None:
    """Refuse what cannot work before anything runs, not after minutes of it."""
    # lazy: doctor costs ~140 ms CPU at start-up (-X importtime, issue 26); only doctor needs it
    from envcheck.doctor.backend import check_launcher
    check_launcher(launcher)
    if local and named_hosts:
        raise UsageError("--local checks this machine only; it takes no hosts", "drop --local, or the hosts")
    if local and launcher == "srun":
        raise UsageError("--local checks this machine only; --launcher srun reaches the allocation's nodes",
                         "drop --local (inside an allocation), or --launcher srun")
    for path, flag in outputs:
        if path is not None and not (path.parent if str(path.parent) else Path(".")).is_dir():
            raise UsageError(f"{flag} {path}: directory {path.parent} does not exist", "create it or choose another path")
        if path is not None:   # /proc, a read-only mount
            _check_writable(path, flag)


def _write_outputs(report: health.DoctorReport, code: int, strict: bool, junit: FileOpt,
                   prometheus: FileOpt, json_out: bool, actions=None) -> None:
    # lazy: doctor costs ~140 ms CPU at start-up (-X importtime, issue 26); only doctor needs it
    from envcheck.doctor.render import render_junit, render_prometheus, render_table, write_atomic
    if junit:
        write_atomic(junit, render_junit(report, strict=strict))
    if prometheus:
        write_atomic(prometheus, render_prometheus(report))
    if json_out:
        print_json(dict(report.to_dict(), exit_code=code,
                        **({"slurm_actions": [a.to_dict() for a in actions]} if actions is not None else {})))
    else:
        table = render_table(report, color_wanted(), strict)
        if actions:  # what was done to the nodes goes above the summary line, which ends the report
            # lazy: Slurm's rendering costs ~30 ms CPU at start-up (-X importtime, issue 26); only --drain-failed needs it
            from envcheck.slurm.render import render_actions
            body, summary = table.rstrip("\n").rsplit("\n", 1)
            table = f"{body}\n{render_actions(actions)}{summary}\n"
        typer.echo(table, nl=False)


def _load_baseline(path: Path) -> health.DoctorReport:
    fix = "save a good run with `envcheck doctor --json > FILE`"
    from envcheck import inputs  # lazy: PyYAML with it, ~13 ms CPU at start-up (-X importtime, issue 26)
    doc = inputs.parse_json(inputs.read_text(str(path), "--baseline", fix), f"--baseline {path}", fix)
    if not isinstance(doc, dict) or "verdict" not in doc or "checks" not in doc:
        raise UsageError(f"--baseline {path}: not a doctor report", "save a good run with `envcheck doctor --json > FILE`")
    return health.from_dict(doc)


@app.command("doctor")
@guard
def doctor(
    ctx: typer.Context,
    hosts: HostsArg = None,
    local: Annotated[bool, typer.Option("--local", help="Check this machine only (e.g. a Slurm HealthCheckProgram or prolog), even inside an allocation.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="No network test and no GPU op (torch is still imported once: a PASS says a rank can start); seconds.")] = False,
    deep: Annotated[bool, typer.Option("--deep/--no-deep", help="Import torch on the nodes (its CUDA, cuDNN, NCCL, a tiny op per GPU).")] = True,
    strict: StrictOpt = False,
    expect_gpus: Annotated[bool, typer.Option("--expect-gpus/--no-expect-gpus", help="--no-expect-gpus: a CPU-only (gloo) cluster; a missing NVIDIA driver is then not a warning.")] = True,
    gpus_per_node: GpusPerNodeOpt = None,
    dcgm: Annotated[Optional[int], typer.Option("--dcgm", metavar="LEVEL", min=1, max=4, help="Also run NVIDIA DCGM's diagnostic (dcgmi diag -r LEVEL) on every node; a node without dcgmi is reported as skipped. Levels 2+ load the GPUs for minutes.")] = None,
    junit: Annotated[FileOpt, typer.Option("--junit", metavar="FILE", help="Write JUnit XML: a testcase per check per host.")] = None,
    prometheus: Annotated[FileOpt, typer.Option("--prometheus", metavar="FILE", help="Write node_exporter textfile metrics (FILE.prom).")] = None,
    baseline: Annotated[FileOpt, typer.Option("--baseline", metavar="FILE", help="A saved `doctor --json` of a good run: flag regressions.")] = None,
    launcher: Annotated[str, typer.Option("--launcher", help="Reach the nodes over ssh, or with srun inside a Slurm allocation (the audit's probe and the all-reduce's ranks).")] = "ssh",
    step_size: StepSizeOpt = 64,
    drain_failed: Annotated[bool, typer.Option("--drain-failed", help="Drain each FAIL node in Slurm with the reason 'envcheck: <code>: <summary>' (never over a reason envcheck did not write); without the rights, print the scontrol lines.")] = False,
    resume_passed: Annotated[bool, typer.Option("--resume-passed", help="Resume each passing node that envcheck drained (never one drained for another reason).")] = False,
    backend: BackendOpt = "auto",
    nproc_per_node: WorkerNprocOpt = None,
    max_bytes: Annotated[str, typer.Option("--max-bytes", help="The one large all-reduce size.")] = "64M",
    min_busbw: Annotated[Optional[float], typer.Option("--min-busbw", metavar="GB/S", help="Below this bus bandwidth the all-reduce fails (and the slow node is isolated).")] = None,
    ifname: Annotated[Optional[str], typer.Option("--ifname", help="NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME for the all-reduce.")] = None,
    master_port: Annotated[Optional[int], typer.Option("--master-port", help="MASTER_PORT (default: a free one).")] = None,
    collective_timeout: Annotated[float, typer.Option("--collective-timeout", metavar="SECONDS", help="Seconds one collective or the rendezvous may take.")] = 60.0,
    pairs: Annotated[bool, typer.Option("--pairs/--no-pairs", help="After the all-reduce, rounds of node pairs all-reducing at once, each compared with their median: names a slow node or link with no threshold given (3+ hosts).")] = True,
    bisect: Annotated[bool, typer.Option("--bisect/--no-bisect", help="When the all-reduce fails and neither it nor the pairs name a node, re-test halves and pairs to find it.")] = True,
    node_python: NodePythonOpt = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, metavar="SECONDS", help="Give up on an audit of one host after this long.")] = 120.0,
    strict_host_keys: StrictHostKeysOpt = False,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
    show_probe: ShowProbeOpt = False,
) -> None:
    """Say GO or name the node and the fix, before a training run. Example: envcheck doctor node[01-04] --junit doctor.xml

    The pre-training health check: audit (versions and GPU/link health: GPUs the driver lost, ECC
    and row remapping, Xids, PCIe width, throttling) -> connectivity -> short all-reduce -> rounds
    of node pairs judged against their median (a slow node or link named with no threshold given)
    -> PASS/WARN/FAIL/UNKNOWN per node; JUnit and Prometheus output."""
    if show_probe:
        raise _show_probe(deep, quick, node_python)
    # lazy: doctor (and the matrix) costs ~140 ms CPU at start-up (-X importtime, issue 26); only doctor needs it
    from envcheck.doctor.backend import make_backend
    from envcheck.doctor.run import DoctorOptions, run_doctor
    from envcheck.matrix.load import load_matrix
    from envcheck.remote import LocalRemote

    _check_inputs(launcher, local, bool(hosts or hosts_file), ((junit, "--junit"), (prometheus, "--prometheus")))
    base = _load_baseline(baseline) if baseline else None
    m = load_matrix(matrix)
    remotes = [LocalRemote()] if local else HostSelection.from_params(ctx.params).remotes()
    with closing_all(remotes):
        node_python, which = local_python(node_python, remotes, "torch checks and workers run")
        be = make_backend(remotes, m, launcher=launcher, collective_timeout=collective_timeout,
                          node_python=node_python, forks=forks, timeout=timeout,
                          connect_timeout=connect_timeout, backend=backend, nproc_per_node=nproc_per_node,
                          master_port=master_port, ifname=ifname, gpus_per_node=gpus_per_node,
                          step_size=step_size)
        opts = DoctorOptions(deep=deep, quick=quick, max_bytes=am.parse_size(max_bytes), min_busbw=min_busbw,
                             bisect=bisect, pairs=pairs, baseline=base, expect_gpus=expect_gpus, dcgm=dcgm)
        if which:
            note(which)
        report = run_doctor([r.name for r in remotes], opts, be, progress=None if json_out else note)
    report.notes += be.fleet_notes
    if launcher == "srun":
        report.slurm = be.slurm()
    code = health.outcome(report).exit_code(strict)
    actions = None
    if drain_failed or resume_passed:
        # lazy: Slurm's node actions cost ~5 ms CPU at start-up (-X importtime, issue 26); only these flags need them
        from envcheck.slurm.drain import act
        actions = act(report, drain=drain_failed, resume=resume_passed, strict=strict)
    _write_outputs(report, code, strict, junit, prometheus, json_out, actions)
    raise typer.Exit(code)


def _show_probe(deep: bool, quick: bool, node_python: Optional[str]) -> typer.Exit:
    """--show-probe: the audit's probe, then (unless --quick) the rank preflight's sections."""
    # lazy: the probe runner and the preflight cost ~100 ms CPU at start-up (-X importtime, issue 26)
    from envcheck.allreduce.preflight import RANK_SECTIONS
    from envcheck.audit.probe import show_probe as probe_shown
    reads = [("the audit, on each node", probe_shown(deep=deep and not quick, node_python=node_python))]
    if not quick:
        reads.append(("the all-reduce's preflight, on each node", probe_shown(only=RANK_SECTIONS, node_python=node_python)))
    return show_probes_exit(reads)
