"""`envcheck check`: judge a stack offline, from flags or a saved facts file."""
from pathlib import Path
from typing import Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import Annotated, StrictOpt, JsonOpt, MatrixOpt, color_wanted, guard, print_json
from envcheck.errors import UsageError


@app.command("check")
@guard
def check(
    facts_file: Annotated[Optional[Path], typer.Argument(metavar="[FACTS.json]", help="A saved facts document (or an audit --json output with one host); flags override its values.")] = None,
    driver: Annotated[Optional[str], typer.Option("--driver", metavar="V", help="NVIDIA driver, e.g. 410.48")] = None,
    cuda: Annotated[Optional[str], typer.Option("--cuda", metavar="V", help="CUDA toolkit (nvcc) in use, e.g. 10.0 or 10.0.130")] = None,
    cudnn: Annotated[Optional[str], typer.Option("--cudnn", metavar="V", help="cuDNN the torch process loads (system or pip), e.g. 7.6.5; also judged against --cuda")] = None,
    torch: Annotated[Optional[str], typer.Option("--torch", metavar="V[+cuXYZ]", help="torch, e.g. 1.1.0+cu100; a plain 1.1.0 means the PyPI build")] = None,
    torchvision: Annotated[Optional[str], typer.Option("--torchvision", metavar="V", help="torchvision, e.g. 0.3.0")] = None,
    torchaudio: Annotated[Optional[str], typer.Option("--torchaudio", metavar="V", help="torchaudio, e.g. 0.2.0")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", metavar="NAME|sm_XY|X.Y", help="GPU model or compute capability, e.g. V100, sm_70, 7.0")] = None,
    python: Annotated[Optional[str], typer.Option("--python", metavar="X.Y", help="Python, e.g. 3.7")] = None,
    gcc: Annotated[Optional[str], typer.Option("--gcc", metavar="V", help="host gcc, e.g. 7.5.0")] = None,
    numpy: Annotated[Optional[str], typer.Option("--numpy", metavar="V", help="numpy in torch's environment, e.g. 2.0.1 (torch < 2.3 fails under numpy 2)")] = None,
    cuda_compat: Annotated[Optional[str], typer.Option("--cuda-compat", metavar="none|X.Y", help="NVIDIA's forward-compatibility libraries the process loads: none, or the cuda-compat-X-Y package (a data-center GPU on an older driver branch runs a newer CUDA only with them)")] = None,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Judge a stack without touching any machine. Example: envcheck check --driver 410.48 --cuda 10.0 --torch 1.1.0+cu100 --gpu V100

    Judge a stack offline, from `--driver … --cuda … --torch …` flags or a saved audit
    (`envcheck check FACTS.json`), by the same rules as `audit`."""
    # lazy: the rules, the matrix and the facts reader cost ~80 ms CPU at start-up (-X importtime,
    # issue 26), which --help and the commands that judge nothing would pay
    from envcheck.facts.from_flags import load_facts_file, stack_facts
    from envcheck.matrix.load import load_matrix
    from envcheck.model import Outcome, has_errors
    from envcheck.report import render_findings
    from envcheck.rules import judge
    m = load_matrix(matrix)
    base = load_facts_file(facts_file) if facts_file else None
    given = dict(driver=driver, cuda=cuda, cudnn=cudnn, torch=torch, torchvision=torchvision,
                 torchaudio=torchaudio, gpu=gpu, python=python, gcc=gcc, numpy=numpy,
                 cuda_compat=cuda_compat)
    if base is None and not any(given.values()):
        raise UsageError("check: nothing to judge", "give a FACTS.json file or at least one of --driver --cuda "
                         "--cudnn --torch --torchvision --torchaudio --gpu --python --gcc --numpy --cuda-compat")
    facts = stack_facts(base, matrix=m, **given)
    verdict = judge(facts, m)
    outcome = Outcome.of(verdict.findings, len(verdict.skipped))
    if json_out:
        print_json({"ok": not has_errors(verdict.findings), "findings": [f.to_dict() for f in verdict.findings],
                    "skipped": [s.to_dict() for s in verdict.skipped]})
    else:
        typer.echo(render_findings(verdict.findings, skipped=verdict.skipped, verdict=outcome.verdict(strict),
                                   color=color_wanted()), nl=False)
    raise typer.Exit(outcome.exit_code(strict))
