"""Build envcheck/explain/torch_names.json: which of torch's and torchvision's modules and module
attributes exist in which of the releases sources.yaml reads (the same wheels gen.py reads their
messages from), so `explain` can tell "module 'torch.nn' has no attribute 'Buffer'" (a name some
release has and the installed one lacks: a package written for another torch) from a name no
release ever had (the program's own typo). Called by gen.py; our own code: it reads names out of
the wheels' Python sources and writes data.

A module's names: its top-level definitions, assignments and imports, what its `from X import *`
brings (X's __all__, else X's public names), its submodules; for the `torch` namespace also the
functions torch/_torch_docs.py documents (add_docstr(torch.frombuffer, ...)) and those
torch/_C/_VariableFunctions.pyi declares (the C functions torch/__init__.py re-exports); imports
under `if TYPE_CHECKING:` are not names at run time. Only .py files make a module present
(compiled ones, torch._C, are in every release and never stored), and a `sys.modules["old"] = new`
a module's top level makes (a moved module kept importable under its old name: the new one's names). Kept: the modules and names not
present in every release read (a name every release has is no release's fault): modules at most
four levels below the package; names of modules at most three levels below it with at most one
private level, outside torch's compiler and export internals (torch._inductor, torch._dynamo,
torch.fx ...), whose names users' code does not import.
"""
from __future__ import annotations

import ast
import glob
import json
import re
import sys
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

_INTERNALS = {"testing", "_inductor", "_dynamo", "_functorch", "_export", "_refs", "_prims", "_decomp", "onnx",
              "fx", "_higher_order_ops", "ao", "_library", "export", "_subclasses"}
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _module(path: str) -> str:
    p = re.sub(r"\.pyi?$", "", path)
    return (p[:-9] if p.endswith("/__init__") else p).replace("/", ".")


def _names(body: Sequence[ast.stmt]) -> Tuple[Set[str], List[Tuple[str, int]], Optional[Set[str]]]:
    """(names defined at the top level, `from X import *` sources, __all__) of a module's body,
    looking into top-level if/try blocks (version and platform switches)."""
    out: Set[str] = set()
    stars: List[Tuple[str, int]] = []
    alls: Optional[Set[str]] = None
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
                if isinstance(t, ast.Name) and t.id == "__all__" and node.value is not None:
                    try:
                        alls = set(ast.literal_eval(node.value))
                    except (ValueError, TypeError, SyntaxError):
                        pass
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name == "*":
                    stars.append((node.module or "", node.level))
                else:
                    out.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            # `if TYPE_CHECKING:` imports exist for type checkers only, never at run time
            checking = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test)
            inner = [*([] if checking else node.body), *node.orelse,
                     *(s for h in getattr(node, "handlers", []) for s in h.body)]
            o, s, _ = _names(inner)
            out |= o
            stars += s
    out.discard("_")        # the throwaway name (`_ = register_hook(...)`), no module's API
    return out, stars, alls


def _dotted(node: ast.AST, imported: Dict[str, str]) -> Optional[str]:
    """`torch.distributed.checkpoint`, or a name `import a.b as name` bound, as a module name."""
    if isinstance(node, ast.Name):
        return imported.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, imported) if not isinstance(node.value, ast.Name) else (
            imported.get(node.value.id) or node.value.id)
        return f"{base}.{node.attr}" if base else None
    return None


def _text(node: ast.AST, var: Optional[str] = None, value: str = "") -> Optional[str]:
    """A string constant, or an f-string whose only placeholder is `var` (filled with `value`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and var:
        out = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                out += str(part.value)
            elif isinstance(part, ast.FormattedValue) and getattr(part.value, "id", None) == var:
                out += value
            else:
                return None
        return out
    return None


def _aliases(body: Sequence[ast.stmt]) -> List[Tuple[str, str]]:
    """(old module name, the module it stands for) for each `sys.modules["old"] = new` a module's
    top level makes: a module a release moved, kept importable under its old name
    (torch/distributed/_tensor/__init__.py from 2.5: a loop over its submodules' names with
    import_module; torch/distributed/_sharded_tensor/__init__.py: a module object)."""
    imported: Dict[str, str] = {}
    lists: Dict[str, List[str]] = {}
    out: List[Tuple[str, str]] = []

    def one(node: ast.stmt, var: Optional[str] = None, value: str = "", local: Optional[Dict[str, str]] = None) -> None:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)
                and isinstance(node.targets[0].value, ast.Attribute) and node.targets[0].value.attr == "modules"):
            return
        old = _text(node.targets[0].slice, var, value)
        v = node.value
        arg = v.args[0] if isinstance(v, ast.Call) and getattr(v.func, "id", "") == "import_module" and v.args else None
        new = ((local or {}).get(getattr(arg, "id", "")) or _text(arg, var, value)) if arg is not None else _dotted(v, imported)
        if old and new:
            out.append((old, new))

    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if isinstance(node, ast.Import):
                    imported[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                elif node.module and not node.level:
                    imported[a.asname or a.name] = f"{node.module}.{a.name}"
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, (ast.List, ast.Tuple))):
            lists[node.targets[0].id] = [e.value for e in node.value.elts
                                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            it = node.iter
            names = (lists.get(it.id, []) if isinstance(it, ast.Name) else
                     [e.value for e in it.elts if isinstance(e, ast.Constant)] if isinstance(it, (ast.List, ast.Tuple))
                     else [])
            for value in names:
                local: Dict[str, str] = {}      # full_module_name = f"torch.distributed.tensor.{submodule}"
                for inner in node.body:
                    if (isinstance(inner, ast.Assign) and len(inner.targets) == 1
                            and isinstance(inner.targets[0], ast.Name)):
                        text = _text(inner.value, node.target.id, value)
                        if text:
                            local[inner.targets[0].id] = text
                    one(inner, node.target.id, value, local)
        else:
            one(node)
    return out


def read_release(whl: str, pkg: str = "torch") -> Dict[str, Set[str]]:
    """Every module of the wheel's package (torch, torchvision) with its names."""
    mods: Dict[str, Set[str]] = defaultdict(set)
    stars: Dict[str, List[Tuple[str, int]]] = defaultdict(list)
    alls: Dict[str, Set[str]] = {}
    packages: Set[str] = set()
    aliases: List[Tuple[str, str]] = []
    root = pkg
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            # the .pyi stubs describe compiled modules (torch._C) some releases ship stubs for and
            # others not: read for the names torch re-exports from them only, never as presence
            if n == "torch/_C/_VariableFunctions.pyi":
                stub = ast.parse(z.read(n).decode("utf-8", "replace"))
                mods["torch"] |= {x for x in _names(stub.body)[0] if not x.startswith("_")}
                continue
            if not n.startswith(pkg + "/") or not n.endswith(".py"):
                continue
            m = _module(n)
            if n.endswith("/__init__.py"):
                packages.add(m)
            mods[m]        # the module exists
            parts = m.split(".")
            for i in range(1, len(parts)):
                mods[".".join(parts[:i])].add(parts[i])
            try:
                tree = ast.parse(z.read(n).decode("utf-8", "replace"))
            except SyntaxError:
                continue
            o, s, a = _names(tree.body)
            aliases += _aliases(tree.body)
            mods[m] |= o
            stars[m] += s
            if a:
                alls[m] = a
            if n == "torch/_torch_docs.py":
                for c in ast.walk(tree):
                    if (isinstance(c, ast.Call) and getattr(c.func, "id", "") in ("add_docstr", "add_docstr_all")
                            and c.args and isinstance(c.args[0], ast.Attribute)
                            and isinstance(c.args[0].value, ast.Name) and c.args[0].value.id == "torch"):
                        mods["torch"].add(c.args[0].attr)
    for _ in range(3):      # star imports of star imports
        for m, sources in stars.items():
            pkg = m.split(".") if m in packages else m.split(".")[:-1]
            for mod, level in sources:
                base = pkg[:len(pkg) - level + 1] if level else []
                src = ".".join(base + ([mod] if mod else [])) if level else mod
                if src in mods:
                    mods[m] |= alls.get(src) or {x for x in mods[src] if not x.startswith("_")}
    for old, new in aliases:
        if old.startswith(root + ".") and new in mods:
            mods[old] = set(mods[new])          # importable under its old name, with the new one's names
            parent, _, leaf = old.rpartition(".")
            mods[parent].add(leaf)
    return mods


def _kept(module: str) -> bool:
    below = module.split(".")[1:]
    return (len(below) <= 3 and sum(p.startswith("_") for p in below) <= 1
            and not (below and below[0] in _INTERNALS))


def build(releases: Sequence[Tuple[str, str]], pkg: str = "torch") -> Dict:
    """releases: (release, wheel file), oldest first."""
    per = [read_release(whl, pkg) for _, whl in releases]
    n = len(per)
    span = lambda p: _DIGITS[p[0]] + _DIGITS[p[-1]]     # noqa: E731  (first and last release holding it)
    modules, names = {}, {}
    for m in sorted(set().union(*per)):
        present = [i for i in range(n) if m in per[i]]
        contiguous = lambda p: p[-1] - p[0] + 1 == len(p)    # noqa: E731  (a gap: came, went, came back)
        if len(present) < n and m.count(".") <= 4 and contiguous(present):
            modules[m] = span(present)
        if not _kept(m):
            continue
        held = []
        for a in sorted(set().union(*(per[i][m] for i in present))):
            p = [i for i in present if a in per[i][m]]
            if len(p) < len(present) and contiguous([present.index(i) for i in p]):
                held.append(f"{a}:{span(p)}")
        if held:
            names[m] = " ".join(held)
    return {"releases": [r for r, _ in releases], "modules": modules, "names": names}


ABOUT = ("Per package (torch, torchvision): its modules and module names not present in every release read; each "
         "with the first and last of the package's `releases` holding it (one character each, 0-9a-z). Generated by "
         "tools/explain_catalogue/torch_names.py from the release wheels tools/explain_catalogue/sources.yaml names.")


def write(docs: Dict[str, Dict], out: Path) -> None:
    """One module per line, so a regeneration's diff reads."""
    lines = ['{"about": ' + json.dumps(ABOUT) + ',']
    for k, (pkg, doc) in enumerate(docs.items()):
        lines += [f'{json.dumps(pkg)}: {{"releases": {json.dumps(doc["releases"])},', '"modules": {']
        lines += [f"{json.dumps(m)}: {json.dumps(v)}," for m, v in doc["modules"].items()]
        lines[-1] = lines[-1].rstrip(",")
        lines += ["},", '"names": {']
        lines += [f"{json.dumps(m)}: {json.dumps(v)}," for m, v in doc["names"].items()]
        lines[-1] = lines[-1].rstrip(",")
        lines += ["}}" + ("," if k < len(docs) - 1 else "")]
    lines += ["}"]
    out.write_text("\n".join(lines) + "\n")
    json.loads(out.read_text())      # it must load


PACKAGES = {"pytorch/pytorch": "torch", "pytorch/vision": "torchvision"}


def from_sources(specs: Sequence[Dict], wheels: Path, out: Path) -> None:
    """The builds of sources.yaml's torch and torchvision wheel entries whose wheel is there, oldest
    first, per package."""
    docs = {}
    for spec in specs:
        pkg = PACKAGES.get(spec["repo"])
        if not pkg:
            continue
        found = []
        for b in spec["builds"]:
            files = sorted(glob.glob(b["glob"].replace("{wheels}", str(wheels))))
            if files:
                found.append((b["ref"].lstrip("v"), files[-1]))
        found.sort(key=lambda r: tuple(int(x) for x in r[0].split(".")))
        docs[pkg] = build(found, pkg)
        print(f"torch_names: {pkg}: {len(found)} releases, {len(docs[pkg]['modules'])} modules and "
              f"{sum(v.count(':') for v in docs[pkg]['names'].values())} names not in every release", file=sys.stderr)
    write(docs, out)
