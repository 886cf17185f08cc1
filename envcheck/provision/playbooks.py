"""Playbooks (playbooks/*.yaml): a named stack and the steps that bring a node to it, as data.

load_playbook(path_or_name) reads and validates one: unknown keys or steps, wrong types and
unparsable versions are UsageErrors naming the file and the key path (steps[3].pip.pakages).
check_stack(playbook, matrix) judges the whole stack before anything runs: the playbook's own
consistency (the pip step installs the torch the stack names, from an index that serves its
CUDA variant …) plus the matrix rules over a facts document built from the stack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union


from envcheck import inputs, rules, versions
from envcheck.errors import UsageError
from envcheck.params.text import excerpt
from envcheck.provision import schema
from envcheck.facts.from_flags import stack_facts
from envcheck.model import ERROR, Finding, sort_findings

# what each field may be: the CLI's own declarations (envcheck/provision/schema.py)
SCHEMA = schema.SCHEMA
STEPS = schema.STEPS


@dataclass
class Step:
    name: str
    args: Dict[str, Any]
    index: int

    @property
    def where(self) -> str:
        return f"steps[{self.index}].{self.name}"


@dataclass
class Playbook:
    path: str
    name: str
    stack: Dict[str, Any]
    steps: List[Step]
    description: str = ""
    sources: List[str] = field(default_factory=list)

    @property
    def pythons(self) -> List[str]:
        py = self.stack.get("python")
        if py is None:
            return []
        return [py] if isinstance(py, str) else list(py)


def playbook_dirs() -> List[Path]:
    here = Path(__file__).resolve().parent.parent  # envcheck/
    return [here / "data" / "playbooks", here.parent / "playbooks"]


def available() -> List[Path]:
    seen: Dict[str, Path] = {}
    for d in playbook_dirs():
        if d.is_dir():
            for p in sorted(d.glob("*.yaml")):
                seen.setdefault(p.name, p)
    return [seen[k] for k in sorted(seen)]


def find_playbook(ref: Union[str, Path]) -> Path:
    """A path, or the name of a packaged playbook (with or without .yaml)."""
    p = Path(ref)
    if p.is_file():
        return p
    name = p.name if p.name.endswith(".yaml") else p.name + ".yaml"
    if str(p.parent) in ("", "."):
        for cand in available():
            if cand.name == name:
                return cand
    known = ", ".join(c.stem for c in available()) or "none"
    raise UsageError(f"playbook {ref}: no such file", f"give a path or one of: {known}")


def parse_playbook(data: Any, file: str) -> Playbook:
    """Every field checked by its declaration before anything runs (a value the CLI refuses is
    refused here too: a relative cuda_home, an nccl-test timeout of 0 or of 31 years)."""
    if isinstance(data, dict) and "schema" in data and (type(data["schema"]) is not int or data["schema"] != SCHEMA):
        raise schema.err(file, "schema", f"version {excerpt(data['schema'])} not supported (this envcheck "
                                         f"reads {SCHEMA})")
    schema.check_map(file, "", data, schema.TOP, schema.TOP_REQUIRED)
    schema.check_map(file, "stack", data["stack"], schema.STACK, ())
    if not isinstance(data["steps"], list) or not data["steps"]:
        raise schema.err(file, "steps", "must be a non-empty list")
    steps: List[Step] = []
    for i, raw in enumerate(data["steps"]):
        where = f"steps[{i}]"
        if not isinstance(raw, dict) or len(raw) != 1:
            raise schema.err(file, where, "each step is a mapping with one key, the step name (e.g. - pip: {...})")
        (name, args), = raw.items()
        if name not in STEPS:
            raise schema.err(file, f"{where}.{schema.key(name)}", f"unknown step (known: {', '.join(STEPS)})")
        args = {} if args is None else args
        fields, required = STEPS[name]
        schema.check_map(file, f"{where}.{name}", args, fields, required)
        steps.append(Step(name, dict(args), i))
    return Playbook(path=file, name=data["name"], stack=dict(data["stack"]), steps=steps,
                    description=str(data.get("description") or "").strip(),
                    sources=list(data.get("sources") or []))


def load_playbook(ref: Union[str, Path]) -> Playbook:
    p = find_playbook(ref)
    # a packaged playbook as the wheel's build compiled it (issue 26: plan reads every one); a
    # playbook of the user's is read as YAML, always
    data = inputs.compiled(p) if p.parent == playbook_dirs()[0] else None
    if data is None:
        data = inputs.parse_yaml(inputs.read_text(str(p), "playbook", "check the path"), str(p), "fix the YAML")
    return parse_playbook(data, str(p))


# ------------------------------------------------------------------ judging the stack
def facts_for_stack(stack: Dict[str, Any], python: Optional[str] = None) -> Dict[str, Any]:
    """The facts document (envcheck/facts/schema.py) a node would have once the stack is installed,
    built the way `envcheck check` builds it from flags (envcheck/facts/from_flags.py)."""
    return stack_facts(driver=stack.get("driver_min"), cuda=stack.get("cuda"), cudnn=stack.get("cudnn"),
                       torch=stack.get("torch"), torchvision=stack.get("torchvision"),
                       torchaudio=stack.get("torchaudio"), python=python)


def _f(sev: str, code: str, comp: str, msg: str, fix: str, where: str) -> Finding:
    return Finding(sev, code, comp, f"{where}: {msg}", fix)


def consistency(pb: Playbook) -> List[Finding]:
    """Does each step install what the stack says? Independent of the matrix."""
    out: List[Finding] = []
    st = pb.stack
    for s in pb.steps:
        a = s.args
        if s.name == "install-cuda" and st.get("cuda") and not versions.same_prefix(a["version"], st["cuda"], 3):
            out.append(_f(ERROR, "playbook-cuda-step", "cuda", f"installs CUDA {a['version']} but the stack says {st['cuda']}",
                          "make steps and stack name the same toolkit", s.where))
        if s.name == "install-cudnn":
            if st.get("cuda") and a.get("cuda") and not versions.same_prefix(a["cuda"], st["cuda"], 2):
                out.append(_f(ERROR, "playbook-cudnn-cuda", "cudnn", f"targets CUDA {a['cuda']} but the stack's toolkit is {st['cuda']}",
                              "set cuda: to the stack's X.Y", s.where))
            m = re.search(r"v?(\d+\.\d+\.\d+(?:\.\d+)?)(?:_cuda|\.tgz)", a["archive"])
            if m and st.get("cudnn") and not versions.same_prefix(m.group(1), st["cudnn"], 3):
                out.append(_f(ERROR, "playbook-cudnn-archive", "cudnn", f"archive is cuDNN {m.group(1)} but the stack says {st['cudnn']}",
                              "use the archive of the stack's cuDNN", s.where))
        if s.name == "env" and st.get("cuda"):
            m = re.search(r"cuda-(\d+\.\d+)/?$", a["cuda_home"])
            if m and not versions.same_prefix(m.group(1), st["cuda"], 2):
                out.append(_f(ERROR, "playbook-env-cuda-home", "env", f"CUDA_HOME {a['cuda_home']} is not the stack's CUDA {st['cuda']}",
                              f"cuda_home: /usr/local/cuda-{versions.major_minor(st['cuda'])}", s.where))
        if s.name == "pip":
            out.extend(_pip_consistency(pb, s))
    return out


def _pip_consistency(pb: Playbook, s: Step) -> List[Finding]:
    out: List[Finding] = []
    st = pb.stack
    source = " ".join(str(s.args.get(k, "")) for k in ("index_url", "extra_index_url", "find_links"))
    for spec in s.args["packages"]:
        m = re.fullmatch(r"\s*(torch|torchvision|torchaudio)\s*==\s*([^\s;]+)\s*", spec)
        if not m or not st.get(m.group(1)):
            continue
        name, pinned = m.group(1), m.group(2)
        want_pub, want_local = versions.parse_torch(st[name])
        got_pub, got_local = versions.parse_torch(pinned)
        if versions.compare(got_pub, want_pub) != 0:
            out.append(_f(ERROR, "playbook-pip-version", name,
                          f"installs {name} {pinned} but the stack says {st[name]}", f"pin {name}=={want_pub}", s.where))
        if name == "torch" and want_local and want_local.startswith("cu") and got_local is None \
                and f"/{want_local}" not in source:
            out.append(_f(ERROR, "playbook-pip-variant", "torch",
                          f"torch=={pinned} without a {want_local} index installs the variant PyPI serves, "
                          f"not {want_local}",
                          f"add index_url: https://download.pytorch.org/whl/{want_local} (or find_links for torch < 1.11)",
                          s.where))
    return out


def check_stack(pb: Playbook, matrix: Any, evaluate: Optional[Callable[..., List[Finding]]] = None) -> List[Finding]:
    """All findings for the playbook's stack, errors first. `evaluate` defaults to the rules
    registry; it runs once per Python version the stack names (a torch with no wheel for one of
    them is an error), and findings repeated across versions are kept once."""
    evaluate = evaluate or rules.evaluate
    out = consistency(pb)
    seen = {(f.code, f.message) for f in out}
    for py in pb.pythons or [None]:
        for f in evaluate(facts_for_stack(pb.stack, py), matrix):
            if (f.code, f.message) not in seen:
                seen.add((f.code, f.message))
                out.append(f)
    return sort_findings(out)


def refusal(pb: Playbook, findings: List[Finding]) -> Optional[str]:
    errs = [f for f in findings if f.severity == ERROR]
    if not errs:
        return None
    reasons = "; ".join(f"[{f.component}] {f.message}" for f in errs)
    return f"{pb.path}: stack {pb.name} refused: {reasons}"

