"""`envcheck check`: judge a stack offline, from flags or a saved facts file."""
from typing import Optional

import typer

from envcheck.cli import app
from envcheck import params as P
from envcheck.cli.common import Annotated, StrictOpt, JsonOpt, MatrixOpt, color_wanted, guard, print_json
from envcheck.cli.options import argument, option
from envcheck.errors import UsageError


@app.command("check")
@guard
def check(
    facts_file: Annotated[Optional[str], argument(
        P.FACTS_FILE, help="A saved facts document (or an audit --json output with one host); "
                           "flags override its values.")] = None,
    driver: Annotated[Optional[str], option(P.DRIVER_V)] = None,
    cuda: Annotated[Optional[str], option(P.CUDA_V)] = None,
    cudnn: Annotated[Optional[str], option(P.CUDNN_V)] = None,
    torch: Annotated[Optional[str], option(P.TORCH_VERSION)] = None,
    torchvision: Annotated[Optional[str], option(P.TORCHVISION_V)] = None,
    torchaudio: Annotated[Optional[str], option(P.TORCHAUDIO_V)] = None,
    gpu: Annotated[Optional[str], option(P.GPU)] = None,
    python: Annotated[Optional[str], option(P.PYTHON_VERSION)] = None,
    gcc: Annotated[Optional[str], option(P.GCC_V)] = None,
    numpy: Annotated[Optional[str], option(P.NUMPY_V)] = None,
    cuda_compat: Annotated[Optional[str], option(P.CUDA_COMPAT)] = None,
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
    from envcheck.render import render_findings
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
