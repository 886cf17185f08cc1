from typing import Optional

import typer

from envcheck import params as P
from envcheck.cli import app
from envcheck.cli.common import (Annotated, StrictOpt, GpusPerNodeOpt, JsonOpt, MatrixOpt, ShowProbeOpt,
                                 color_wanted, guard, note, print_json, show_probes_exit)
from envcheck.cli.hostopts import (OLD_TIMEOUT, ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt,
                                   HostsArg, HostsFileOpt, IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, TimeoutOpt, UserOpt, HostSelection,
                                   closing_all, command_timeout, local_python)
from envcheck.cli.options import option
from envcheck.cli.rankopts import (MAX_BYTES_DEFAULT, BackendOpt, CollectiveTimeoutOpt, IfnameOpt,
                                   MasterPortOpt, MaxBytesOpt, MinBusbwOpt, NprocOpt)
from envcheck.cli.slurmopts import LauncherOpt, StepSizeOpt
from envcheck.doctor import health
from envcheck.errors import UsageError
from envcheck.paths import write_output


def _check_inputs(launcher: str, local: bool, named_hosts: bool) -> None:
    """Refuse what cannot work before anything runs, not after minutes of it."""
    # lazy: doctor costs ~140 ms CPU at start-up (-X importtime, issue 26); only doctor needs it
    from envcheck.doctor.backend import check_launcher
    check_launcher(launcher)
    if local and named_hosts:
        raise UsageError("--local checks this machine only; it takes no hosts", "drop --local, or the hosts")
    if local and launcher == "srun":
        raise UsageError("--local checks this machine only; --launcher srun reaches the allocation's nodes",
                         "drop --local (inside an allocation), or --launcher srun")


def _write_outputs(report: health.DoctorReport, code: int, strict: bool, junit: Optional[str],
                   prometheus: Optional[str], json_out: bool, actions=None) -> None:
    # lazy: doctor costs ~140 ms CPU at start-up (-X importtime, issue 26); only doctor needs it
    from envcheck.doctor.render import render_junit, render_prometheus, render_table
    if junit:
        write_output(junit, render_junit(report, strict=strict), "--junit")
    if prometheus:
        write_output(prometheus, render_prometheus(report), "--prometheus")
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


def _load_baseline(path: str) -> health.DoctorReport:
    fix = "save a good run with `envcheck doctor --json > FILE`"
    from envcheck import inputs  # lazy: PyYAML with it, ~13 ms CPU at start-up (-X importtime, issue 26)
    doc = inputs.parse_json(inputs.read_text(str(path), "--baseline", fix), f"--baseline {path}", fix)
    if not isinstance(doc, dict) or "verdict" not in doc or "checks" not in doc:
        raise UsageError(f"--baseline {path}: not a doctor report", "save a good run with `envcheck doctor --json > FILE`")
    return health.from_dict(doc)


@app.command("doctor", renamed=OLD_TIMEOUT)
@guard
def doctor(
    ctx: typer.Context,
    hosts: HostsArg = None,
    local: Annotated[bool, typer.Option("--local", help="Check this machine only (e.g. a Slurm HealthCheckProgram or prolog), even inside an allocation.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="No network test and no GPU op (torch is still imported once: a PASS says a rank can start); seconds.")] = False,
    deep: Annotated[bool, typer.Option("--deep/--no-deep", help="Import torch on the nodes (its CUDA, cuDNN, NCCL, a tiny op per GPU): on by default here, a pre-training check must know torch works; audit's default is off.")] = True,
    strict: StrictOpt = False,
    expect_gpus: Annotated[bool, typer.Option("--expect-gpus/--no-expect-gpus", help="--no-expect-gpus: a CPU-only (gloo) cluster; a missing NVIDIA driver is then not a warning.")] = True,
    gpus_per_node: GpusPerNodeOpt = None,
    dcgm: Annotated[Optional[int], option(P.DCGM)] = None,
    junit: Annotated[Optional[str], option(P.JUNIT)] = None,
    prometheus: Annotated[Optional[str], option(P.PROMETHEUS)] = None,
    baseline: Annotated[Optional[str], option(P.BASELINE)] = None,
    launcher: LauncherOpt = "ssh",
    step_size: StepSizeOpt = 64,
    drain_failed: Annotated[bool, typer.Option("--drain-failed", help="Drain each FAIL node in Slurm with the reason 'envcheck: <code>: <summary>' (never over a reason envcheck did not write); without the rights, print the scontrol lines.")] = False,
    resume_passed: Annotated[bool, typer.Option("--resume-passed", help="Resume each passing node that envcheck drained (never one drained for another reason).")] = False,
    backend: BackendOpt = "auto",
    nproc_per_node: NprocOpt = None,
    max_bytes: MaxBytesOpt = MAX_BYTES_DEFAULT,
    min_busbw: MinBusbwOpt = None,
    ifname: IfnameOpt = None,
    master_port: MasterPortOpt = None,
    collective_timeout: CollectiveTimeoutOpt = 60.0,
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
    timeout: TimeoutOpt = None,
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

    _check_inputs(launcher, local, bool(hosts or hosts_file))
    timeout = command_timeout(timeout, deep and not quick)
    base = _load_baseline(baseline) if baseline else None
    m = load_matrix(matrix)
    remotes = [LocalRemote()] if local else HostSelection.from_params(ctx.params, timeout=timeout).remotes()
    with closing_all(remotes):
        node_python, which = local_python(node_python, remotes, "torch checks and workers run")
        be = make_backend(remotes, m, launcher=launcher, collective_timeout=collective_timeout,
                          node_python=node_python, forks=forks, timeout=timeout,
                          connect_timeout=connect_timeout, backend=backend, nproc_per_node=nproc_per_node,
                          master_port=master_port, ifname=ifname, gpus_per_node=gpus_per_node,
                          step_size=step_size)
        opts = DoctorOptions(deep=deep, quick=quick, max_bytes=max_bytes, min_busbw=min_busbw,
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
    """--show-probe: the audit's probe, `import torch` where the audit is not deep (the deep one
    tries it), then (unless --quick) the rank preflight's sections (torch already checked)."""
    # lazy: the probe runner and the preflight cost ~100 ms CPU at start-up (-X importtime, issue 26)
    from envcheck.audit.probe import show_probe as probe_shown
    from envcheck.doctor.backend import TORCH_SECTIONS
    from envcheck.ranks.preflight import PROBE_SECTIONS
    reads = [("the audit, on each node", probe_shown(deep=deep and not quick, node_python=node_python))]
    if not (deep and not quick):
        reads.append(("whether torch imports, on each node", probe_shown(only=TORCH_SECTIONS, node_python=node_python)))
    if not quick:
        reads.append(("the all-reduce's preflight, on each node", probe_shown(only=PROBE_SECTIONS, node_python=node_python)))
    return show_probes_exit(reads)
