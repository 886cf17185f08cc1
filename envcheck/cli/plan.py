from typing import TYPE_CHECKING, List, Optional, Tuple

import typer

from envcheck.cli import app
from envcheck import params as P
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, color_wanted, guard, print_json
from envcheck.cli.options import argument, option

if TYPE_CHECKING:  # imported where they run (see plan and _gpu_of_host below)
    from envcheck.gpus.host import HostGpu
    from envcheck.matrix.load import Matrix
    from envcheck.plan import Stack

PLAN_SECTIONS = ("gpus", "pci_gpus")   # what host_gpu() reads: the driver's GPU list, the PCI bus


def _gpu_of_host(facts_file: Optional[str], m: "Matrix", driver: Optional[str]) -> Tuple["HostGpu", Optional[str]]:
    """The GPU (and, unless --driver was given, the driver) of a saved facts file or, with none,
    of this machine as the audit probe sees it."""
    # lazy: the probe runner and the facts reader cost ~95 ms CPU at start-up (-X importtime,
    # issue 26); `plan --gpu` never reads a machine
    from envcheck.audit.probe import run_probe
    from envcheck.facts import schema as F
    from envcheck.facts.from_flags import load_facts_file
    from envcheck.gpus.host import host_gpu
    from envcheck.remote import LocalRemote
    if facts_file:
        facts = load_facts_file(facts_file)
    else:
        remote = LocalRemote()
        try:  # the GPU and the driver only: the whole document would cost ~5x the probe's CPU
            facts = run_probe(remote, only=PLAN_SECTIONS)
        finally:
            remote.close()
    found = host_gpu(facts, m, str(facts_file) if facts_file else "this machine")
    return found, driver or F.driver_version(facts)


def _row(s: "Stack") -> List[str]:
    return [s.driver_min or "?", s.cuda, s.cudnn or "-", f"{s.torch}+{s.tag}", s.torchvision or "-",
            ",".join(s.python) or "?"]


def _table(rows: List[List[str]], head: List[str]) -> List[str]:
    w = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    return ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in [head] + rows]


@app.command("plan")
@guard
def plan(
    facts_file: Annotated[Optional[str], argument(P.FACTS_FILE, help="Plan for the GPU in a saved facts document (envcheck audit --json / --save) instead of this machine's.")] = None,
    gpu: Annotated[Optional[str], option(P.GPU, help="GPU model (A100, 'Tesla V100-SXM2-16GB'), sm_XY or X.Y. Without it: the GPU of FACTS.json, else of this machine (its driver's list, or the NVIDIA GPUs on its PCI bus when no driver is installed yet).")] = None,
    driver: Annotated[Optional[str], option(P.DRIVER_V, help="The installed driver: stacks needing a newer one are excluded.")] = None,
    torch: Annotated[Optional[str], option(P.VERSION, "--torch", help="Only this torch release (2.5.1, or 2.5 for every 2.5.x).")] = None,
    python: Annotated[Optional[str], option(P.PYTHON_VERSION, help="Only stacks with wheels for this Python.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Also list the excluded stacks and why.")] = False,
    limit: Annotated[int, option(P.LIMIT)] = 10,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List the stacks the matrix allows on a GPU, newest first. Example: envcheck plan --gpu V100 --driver 418.87

    Which stacks the matrix allows on that GPU (`--gpu NAME`), newest first; without `--gpu` the
    GPU of the facts (`plan FACTS.json`) or of this machine, from the PCI bus when no driver is
    installed yet."""
    # lazy: the planner (the rules, the playbooks) and the matrix cost ~85 ms CPU at start-up
    # (-X importtime, issue 26), which --help and every other command would pay
    from envcheck.matrix.load import load_matrix
    from envcheck.model import Outcome
    from envcheck.plan import make_plan
    from envcheck.render import plural, styled, summary_line
    m = load_matrix(matrix)
    label = gpu
    if not gpu:
        found, driver = _gpu_of_host(facts_file, m, driver)
        gpu, label = found.cc, f"{found.name} (from {found.source} of {facts_file or 'this machine'})"
    p = make_plan(m, gpu, driver=driver, torch=torch, python=python)
    if json_out:
        print_json({"gpu": label, "compute_capability": p.compute_capability,
                    "note": p.note, "allowed": [s.to_dict() for s in p.allowed],
                    "excluded": [s.to_dict() for s in p.excluded]})
        raise typer.Exit(Outcome(errors=int(not p.allowed)).exit_code())
    pins = "".join(f", {k} {v}" for k, v in (("driver", driver), ("torch", torch), ("python", python)) if v)
    typer.echo(f"GPU {label} (compute capability {p.compute_capability}{pins}): {len(p.allowed)} stack(s) allowed, "
               f"{len(p.excluded)} excluded")
    if p.allowed:
        shown = p.allowed[:limit]
        head = ["DRIVER>=", "CUDA", "cuDNN", "TORCH", "TORCHVISION", "PYTHON"]
        for line in _table([_row(s) for s in shown], head):
            typer.echo("  " + line)
        best = shown[0]
        typer.echo("")
        if p.note:
            typer.echo(f"note: {p.note}")
        typer.echo(f"to reach {best.label} ({'newest' if not best.warnings else 'newest, with a warning'}):")
        if best.playbook:
            typer.echo(f"  envcheck provision {best.playbook} HOSTS")
        for c in best.commands:
            typer.echo(f"  {c}")
        others = [s for s in shown[1:]]
        if others:
            typer.echo("the others, torch step (the toolkit steps follow the same pattern):")
            for s in others:
                typer.echo(f"  {s.label}: " + (f"envcheck provision {s.playbook} HOSTS" if s.playbook else s.commands[-1]))
        if len(p.allowed) > limit:
            typer.echo(f"({len(p.allowed) - limit} older stack(s) not shown: --limit N or --json)")
    else:
        typer.echo("no stack in the matrix runs here" + ("; see the reasons below" if explain else " (--explain says why)"))
    if explain and p.excluded:
        typer.echo("")
        typer.echo("excluded:")
        for s in p.excluded:
            typer.echo(f"  {s.label} (CUDA {s.cuda}): " + "; ".join(s.reasons))
    outcome = Outcome(errors=int(not p.allowed))
    typer.echo("\n" + summary_line(outcome.verdict(), plural(len(p.allowed) + len(p.excluded), "stack"),
                                   [(len(p.allowed), "allowed"), (len(p.excluded), "excluded")], f"GPU {label}",
                                   keep_zero=True, paint=lambda t, st: styled(t, st, color_wanted())))
    if p.allowed:
        best = p.allowed[0]
        typer.echo("next: " + (f"envcheck provision {best.playbook} HOSTS" if best.playbook else best.commands[0]))
    raise typer.Exit(outcome.exit_code())
