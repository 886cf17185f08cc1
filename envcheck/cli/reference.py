"""The parts of the docs that are the code's own words, generated from it: the command table
and the exit codes (README.md), every finding code (docs/check-and-matrix.md) and where each
part of envcheck lives (README.md). The docs hold them in cog blocks
(`cog -r README.md docs/check-and-matrix.md` rewrites them); tests/test_docs_generated.py runs
`cog --check`, so a command, an exit code, a finding code or a package the docs leave out, or
name but the code no longer has, fails CI.
"""
import ast
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

import typer.main

from envcheck import errors
from envcheck.cli import app
from envcheck.rules import health
from envcheck.rules.fleet import CHECKS

PKG = Path(__file__).resolve().parent.parent


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _usage(name: str, cmd: Any) -> str:
    """The usage line `envcheck NAME --help` prints, without [OPTIONS]."""
    pieces = cmd.collect_usage_pieces(cmd.context_class(cmd, info_name=name))
    text = " ".join(p for p in pieces if p != "[OPTIONS]").replace("]...", "…]").replace("...", "…")
    text = re.sub(r"\{([^}]*)\}", lambda m: m.group(1).upper(), text)   # Typer's {version}
    text = text.replace("[[", "[").replace("]]", "]").replace("…]…]", "…]")
    # a variadic argument says so whatever the Typer (0.29 writes HOSTS..., 0.28 not): the table is
    # the same under every Typer pyproject allows
    for p in cmd.params:
        mv = (p.metavar or "").strip("[].") if p.param_type_name == "argument" and p.nargs == -1 else ""
        if mv:
            text = re.sub(r"\[%s\](?!…)" % re.escape(mv), "[%s…]" % mv, text)
    return " ".join(["envcheck", name] + ([text] if text else []))


def _help(cmd: Any) -> str:
    """What the command's docstring says past its first line (which `envcheck --help` lists,
    with an example); a docstring of one paragraph: that paragraph, its example as code."""
    paras = [_cell(p) for p in (cmd.help or "").split("\n\n") if p.strip()]
    if len(paras) > 1:
        return " ".join(paras[1:])
    head, sep, example = (paras or [""])[0].partition("Example: ")
    if not sep and ": envcheck " in head:   # "Do X: envcheck x …"
        head, _, example = head.partition(": envcheck ")
        head, example = head + ".", "envcheck " + example
    return head.strip() + (f" Example: `{example.strip()}`" if example else "")


def command_table() -> str:
    """Every command and subcommand, in the order `envcheck --help` lists them, with its
    docstring (what `envcheck COMMAND --help` says)."""
    rows = ["| command | what it does |", "|---|---|"]
    for name, cmd in typer.main.get_command(app).commands.items():
        subs = getattr(cmd, "commands", None)
        if subs:
            for sub_name, sub in subs.items():
                rows.append(f"| `{_cell(_usage(f'{name} {sub_name}', sub))}` | {_help(sub)} |")
        else:
            rows.append(f"| `{_cell(_usage(name, cmd))}` | {_help(cmd)} |")
    return "\n".join(rows) + "\n"


def exit_code_table() -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| {code} | {name}: {_cell(text)} |" for code, (name, text) in sorted(errors.EXIT_CODES.items())]
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------- finding codes
# Codes built at run time, and the data that says which: the template as the code writes it
# (an f-string's placeholders spelled as in the source) -> every code it can make. A template
# not listed here (or not resolvable from literal arguments in its module) fails the docs test.
TEMPLATES: Dict[str, Callable[[], List[str]]] = {
    "fleet-{c.key}-split": lambda: [f"fleet-{c.key}-split" for c in CHECKS],
    "fleet-{c.key}-mismatch": lambda: [f"fleet-{c.key}-mismatch" for c in CHECKS],
    "xid-{code}": lambda: [f"xid-{n}" for n in sorted(health.catalog()["xid"]["codes"])] + ["xid-N"],
}
CODE_SHAPE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")


def _template(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                   for v in node.values)


def _calls(tree: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.Call))


def _name(call: ast.Call) -> Optional[str]:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _arg(call: ast.Call, pos: int, kw: str) -> Optional[ast.AST]:
    if len(call.args) > pos and not any(isinstance(a, ast.Starred) for a in call.args[:pos + 1]):
        return call.args[pos]
    return next((k.value for k in call.keywords if k.arg == kw), None)


def _literals_for(tree: ast.AST, func: str, param: str, depth: int = 3) -> List[str]:
    """The literal values a module passes to `func`'s parameter `param` at its call sites; a call
    site passing on a parameter of its own function is followed to that function's call sites."""
    defs = [d for d in ast.walk(tree) if isinstance(d, ast.FunctionDef) and d.name == func]
    if not defs or depth == 0:
        return []
    params = [a.arg for a in defs[0].args.args]
    pos = params.index(param) if param in params else -1
    enclosing = {c: d for d in ast.walk(tree) if isinstance(d, ast.FunctionDef) for c in ast.walk(d)}
    out: List[str] = []
    for c in _calls(tree):
        if _name(c) != func:
            continue
        a = _arg(c, pos, param)
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            out.append(a.value)
        elif isinstance(a, ast.Name) and c in enclosing and enclosing[c].name != func:
            out += _literals_for(tree, enclosing[c].name, a.id, depth - 1)
    return out


def _codes_of(tree: ast.AST) -> Tuple[Set[str], Set[str]]:
    """(codes, templates it could not expand) of one module's Finding(...) calls."""
    codes: Set[str] = set()
    unresolved: Set[str] = set()
    enclosing = {c: d for d in ast.walk(tree) if isinstance(d, ast.FunctionDef) for c in ast.walk(d)}
    for call in _calls(tree):
        if _name(call) != "Finding":
            continue
        arg = _arg(call, 1, "code")
        fn = enclosing.get(call)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            codes.add(arg.value)
        elif isinstance(arg, ast.Name) and fn is not None:      # a parameter: its call sites say
            found = _literals_for(tree, fn.name, arg.id)
            codes.update(found) if found else unresolved.add("{%s}" % arg.id)
        elif isinstance(arg, ast.JoinedStr):
            t = _template(arg)
            holes = [v.value for v in arg.values if isinstance(v, ast.FormattedValue)]
            if t in TEMPLATES:
                codes.update(TEMPLATES[t]())
            elif len(holes) == 1 and isinstance(holes[0], ast.Name) and fn is not None \
                    and _literals_for(tree, fn.name, holes[0].id):
                codes.update(t.replace("{%s}" % holes[0].id, v) for v in _literals_for(tree, fn.name, holes[0].id))
            else:
                unresolved.add(t)
    return codes, unresolved


def finding_codes() -> Tuple[Dict[str, List[str]], Set[str]]:
    """code -> the modules that raise it, from every Finding(...) in the controller's code
    (a finding re-made from another, Finding(…, f.code, …), adds none); and the templates it
    could not expand."""
    where: Dict[str, List[str]] = {}
    unresolved: Set[str] = set()
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG.parent).as_posix()
        if rel.startswith(("envcheck/node/", "envcheck/cli/")):
            continue
        codes, bad = _codes_of(ast.parse(p.read_text()))
        unresolved |= {f"{rel}: {t}" for t in bad if t != "{f.code}"}
        for c in codes:
            where.setdefault(c, []).append(rel)
    return dict(sorted(where.items())), unresolved


def finding_code_table() -> str:
    codes, _ = finding_codes()
    rows = ["| code | raised in |", "|---|---|"]
    xids = [c for c in codes if c.startswith("xid-")]
    for c, mods in codes.items():
        if c.startswith("xid-") and c != "xid-N":
            continue
        shown = (f"`xid-N`: N any Xid; {len(xids) - 1} with their meaning in "
                 f"`rules/health_catalog.yaml`") if c == "xid-N" else f"`{c}`"
        rows.append(f"| {shown} | {', '.join(f'`{m}`' for m in mods)} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------- where does X live
DATA = ("*.yaml", "*.tsv", "*.json")   # data files a package keeps beside its modules


def _summary(p: Path) -> str:
    """A module's or package's docstring, its first paragraph."""
    doc = ast.get_docstring(ast.parse(p.read_text())) or ""
    return _cell(doc.split("\n\n")[0])


def _files(d: Path) -> str:
    subs = sorted(x.name + "/" for x in d.iterdir() if x.is_dir() and any(x.glob("*.py")))
    mods = sorted(m.name for m in d.glob("*.py") if m.name != "__init__.py")
    data = sorted(f.name for pat in DATA for f in d.glob(pat))
    return ", ".join(f"`{m}`" for m in subs + mods + data)


def _comment(p: Path) -> str:
    """A data file's opening comment, its first line."""
    return _cell(p.read_text().splitlines()[0].lstrip("# "))


def where_table() -> str:
    """One row per package and per module directly under envcheck/ (what its docstring says it
    is, and its modules and data), then the data and scripts beside the package."""
    rows = ["| what | where |", "|---|---|"]
    for p in sorted(PKG.iterdir()):
        if p.name.startswith(("_", ".")):
            continue
        if p.is_dir() and (p / "__init__.py").exists():
            rows.append(f"| {_summary(p / '__init__.py')} | `envcheck/{p.name}/`: {_files(p)} |")
        elif p.is_dir() and any(p.glob("*.py")):      # node/: scripts, not a package
            rows.append(f"| what runs on a node: stdlib scripts, read as text and shipped over SSH, "
                        f"never imported (Python >= 3.6; the worker: torch >= 1.1) | "
                        f"`envcheck/{p.name}/`: {_files(p)} |")
        elif p.suffix == ".py":
            rows.append(f"| {_summary(p)} | `envcheck/{p.name}` |")
    root = PKG.parent
    rows.append(f"| {_comment(root / 'compat_matrix.yaml')} | `compat_matrix.yaml` |")
    rows.append("| playbooks: a stack as data, for `provision` and `plan` | `playbooks/`: "
                + ", ".join(f"`{f.name}`" for f in sorted((root / "playbooks").glob("*.yaml"))) + " |")
    rows.append("| benchmarks: scripts that print figures (targets live there, not in timed tests) | "
                "`bench/`: " + ", ".join(f"`{f.name}`" for f in sorted((root / "bench").iterdir())
                                         if f.suffix in (".py", ".sh") and not f.name.startswith("_")) + " |")
    return "\n".join(rows) + "\n"
