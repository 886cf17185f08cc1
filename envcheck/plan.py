"""`envcheck plan --gpu NAME [--driver V] [--torch V] [--python X.Y]`: the stacks the matrix
allows on that GPU, newest first, each with the playbook or the commands that reach it. Stacks
that `check` passes without a warning come first: the first stack plan recommends is one check
passes clean, or the plan's `note` says why none is (issue 21: plan and check agree).

Candidates come from the matrix (every torch release x every CUDA variant it was published
for); whether one works is NOT decided here: each candidate becomes a facts document
(envcheck/facts/from_flags.py) judged by the same rules as `envcheck check`, so plan and check can never
disagree. A candidate with an error finding is excluded, its findings are the reasons.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from envcheck import rules, versions
from envcheck.errors import UsageError
from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.gpus import did_you_mean
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding
from envcheck.provision.playbooks import available, load_playbook


@dataclass
class Stack:
    torch: str                      # "2.5.1"
    tag: str                        # "cu124"
    cuda: str                       # toolkit release to install, "12.4.1"
    driver_min: Optional[str]       # the least driver running the whole stack with full support (no warning)
    cudnn: Optional[str]            # system cuDNN for that toolkit (extension builds)
    cudnn_bundled: Optional[str]    # what torch itself ships/links
    torchvision: Optional[str]
    python: List[str]
    playbook: Optional[str] = None
    commands: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    reasons: List[str] = field(default_factory=list)   # why excluded (errors), when excluded

    @property
    def label(self) -> str:
        return f"torch {self.torch}+{self.tag}"

    def to_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "torch", "tag", "cuda", "driver_min", "cudnn", "cudnn_bundled", "torchvision",
            "python", "playbook", "commands", "warnings", "reasons")}


@dataclass
class Plan:
    gpu: str
    compute_capability: Optional[str]
    allowed: List[Stack]
    excluded: List[Stack]
    note: Optional[str] = None      # why the first allowed stack is not clean, when none is


def _newest_cuda(matrix: Matrix, cuda_mm: str) -> Optional[Dict[str, Any]]:
    return matrix.find_cuda(cuda_mm)


def _driver_min(matrix: Matrix, *cudas: str) -> Optional[str]:
    """The least driver with full support for every CUDA given (the toolkit installed and torch's
    build): Table 3's minimum. Minor-version compatibility would run a pip torch on the family
    floor, but check warns there ('driver-too-old-for-torch'), so plan does not recommend it."""
    found = []
    for cuda in cudas:
        need = matrix.driver_need(cuda)
        if need is not None:
            found.append(need.release_min or need.family_min)
    found = [d for d in found if d]
    return max(found, key=versions.vkey) if found else None


def _gpu_driver_floor(matrix: Matrix, cc: str) -> Optional[str]:
    """The first driver that knows this GPU generation: the minimum of the first CUDA that
    supports it. Without --driver the plan assumes at least this much, so an old stack is
    judged by what it cannot do on this GPU, not by a driver the user never proposed."""
    try:
        arch = matrix.arch(versions.parse_compute_capability(cc))
    except Exception:  # noqa: BLE001 - unknown cc: no floor
        return None
    need = matrix.driver_need(arch.get("first_cuda")) if arch else None
    return need.release_min if need else None


def _system_cudnn(matrix: Matrix, cuda: str, bundled: Optional[str]) -> Optional[str]:
    recs = matrix.cudnn_for_cuda(cuda)
    if not recs:
        return None
    if bundled:
        same = [r for r in recs if versions.major(r["version"]) == versions.major(bundled)]
        if same:
            return same[-1]["version"]
    return recs[-1]["version"]


def pip_command(torch: str, tag: str, torchvision: Optional[str], pypi_default: Optional[str]) -> str:
    """How that exact variant is installed with pip (the index scheme changed over the years)."""
    pkgs_plain = f"torch=={torch}" + (f" torchvision=={torchvision}" if torchvision else "")
    k = versions.vkey(torch)
    if tag == pypi_default and k >= (1, 0):
        # PyPI serves this variant itself; also installable from the variant index
        return f"pip install {pkgs_plain}"
    if k < (1, 2):
        # no +cuXYZ in these wheels' versions: the per-variant page only, deps from PyPI after
        return (f"pip install --no-index --no-deps -f https://download.pytorch.org/whl/{tag}/torch_stable.html "
                f"{pkgs_plain}")
    if k < (1, 11):
        pk = f"torch=={torch}+{tag}" + (f" torchvision=={torchvision}+{tag}" if torchvision else "")
        return f"pip install {pk} -f https://download.pytorch.org/whl/torch_stable.html"
    return f"pip install {pkgs_plain} --index-url https://download.pytorch.org/whl/{tag}"


def _commands(s: Stack, archive: Optional[str]) -> List[str]:
    mm = versions.major_minor(s.cuda)
    out = [f"envcheck install-cuda {s.cuda} HOSTS"]
    if s.cudnn:
        out.append(f"envcheck install-cudnn {archive or 'CUDNN_ARCHIVE'} HOSTS --cuda {mm}")
    out.append(f"envcheck env HOSTS --cuda-home /usr/local/cuda-{mm}")
    return out


def _playbooks() -> Dict[str, Any]:
    out = {}
    for p in available():
        try:
            pb = load_playbook(p)
        except UsageError:
            continue
        t = pb.stack.get("torch")
        if t:
            out[t] = pb
    return out


def _gpu_name_notes(found: List[Finding]) -> List[str]:
    """What `check` says of the GPU name alone that changes the plan's meaning: a board name sold
    with chips of different compute capabilities, planned for the highest (GeForce GT 740M)."""
    return [f"{f.message} Fix: {f.fix}" for f in found if f.code == "gpu-name-several-chips"]


def make_plan(matrix: Matrix, gpu: str, *, driver: Optional[str] = None, torch: Optional[str] = None,
              python: Optional[str] = None, evaluate: Optional[Callable[..., List[Finding]]] = None) -> Plan:
    evaluate = evaluate or rules.evaluate
    if not gpu or not gpu.strip():
        raise UsageError("plan: --gpu is required", "name the GPU model (A100), sm_XY or X.Y")
    probe = stack_facts(gpu=gpu, matrix=matrix)
    cc = probe["gpus"][0].get("compute_capability")
    if cc is None:
        meant = did_you_mean(matrix.gpu_suggestions(gpu))
        raise UsageError(f"plan: GPU {gpu!r} is not in the matrix",
                         (f"did you mean {meant}? Else give" if meant else "give")
                         + " its compute capability instead, e.g. --gpu sm_86 or --gpu 8.6")
    if driver:
        versions.vkey(driver, "--driver")
    if python:
        versions.vkey(python, "--python")
    want_torch = versions.vkey(versions.parse_torch(torch)[0], "--torch") if torch else None
    gpu_floor = _gpu_driver_floor(matrix, cc)
    books = _playbooks()
    allowed: List[Stack] = []
    excluded: List[Stack] = []
    releases = sorted(matrix.data["torch"]["releases"], key=lambda r: versions.vkey(r["version"]), reverse=True)
    for rec in releases:
        if want_torch and versions.vkey(rec["version"])[:len(want_torch)] != want_torch:
            continue
        tags = sorted((t for t in rec["variants"] if t.startswith("cu")),
                      key=lambda t: versions.vkey(versions.cu_tag_to_version(t) or "0"), reverse=True)
        for tag in tags:
            var = matrix.torch_variant(rec["version"], tag) or {}
            cuda_mm = var.get("cuda") or versions.cu_tag_to_version(tag)
            toolkit = _newest_cuda(matrix, cuda_mm)
            cuda = toolkit["version"] if toolkit else cuda_mm
            tv = rec["torchvision"][-1] if rec.get("torchvision") else None
            pys = list(rec.get("python") or [])
            need = _driver_min(matrix, cuda, cuda_mm)
            if gpu_floor and (need is None or versions.compare(gpu_floor, need) > 0):
                need = gpu_floor
            s = Stack(torch=rec["version"], tag=tag, cuda=cuda, driver_min=need,
                      cudnn=None, cudnn_bundled=var.get("cudnn"), torchvision=tv,
                      python=[python] if python else pys)
            s.cudnn = _system_cudnn(matrix, cuda_mm, s.cudnn_bundled)
            findings: List[Finding] = []
            for py in ([python] if python else pys[-1:]) or [None]:
                facts = stack_facts(driver=driver or s.driver_min, cuda=cuda, cudnn=s.cudnn,
                                    torch=f"{rec['version']}+{tag}", torchvision=tv, gpu=gpu,
                                    python=py, matrix=matrix)
                findings += evaluate(facts, matrix)
            s.reasons = list(dict.fromkeys(f.message for f in findings if f.severity == ERROR))
            s.warnings = list(dict.fromkeys(f.message for f in findings if f.severity == WARNING))
            archive = None
            if s.cudnn:
                try:
                    archive = matrix.cudnn_archive(s.cudnn, cuda_mm)["name"]
                except Exception:  # noqa: BLE001 - only the name shown in a command
                    archive = None
            book = books.get(f"{rec['version']}+{tag}")
            s.playbook = str(book.path) if book else None
            s.commands = _commands(s, archive) + [pip_command(rec["version"], tag, tv, rec.get("pypi"))]
            (excluded if s.reasons else allowed).append(s)
    clean = [s for s in allowed if not s.warnings]
    allowed = clean + [s for s in allowed if s.warnings]  # each group newest first, as found
    notes = _gpu_name_notes(evaluate(probe, matrix))
    if allowed and not clean:
        on = f"driver {driver}" if driver else "any driver the matrix knows"
        notes.append(f"no allowed stack runs without a warning on {on}; the first one's: {allowed[0].warnings[0]}")
    note = "; ".join(notes) or None
    return Plan(gpu=gpu, compute_capability=cc, allowed=allowed, excluded=excluded, note=note)
