"""The layering the brief sets, checked on the source (ast): a cheap test that fails the moment a
module crosses a line.

- only envcheck/hosts/ imports fabric/paramiko (one SSH layer);
- only envcheck/hostlist.py imports ClusterShell (one place that reads and writes hostlists);
- envcheck/node/*.py is shipped as text: nothing imports it, and it imports nothing from envcheck;
- only envcheck/cli/ imports typer (the CLI parses, calls the library, prints, exits), and its
  modules keep real annotations (typer evaluates them; Python 3.9's typer cannot evaluate strings);
- library modules (everything outside cli/ and node/) never print and never exit the process;
- imports point down: cli/ -> subsystems (audit, allreduce, doctor, install, …) -> core (model,
  versions, errors, hostlist, hostfiles, remote, hosts, matrix, facts, rules); rules, matrix and facts are pure;
- imports sit at the top of a module, unless a measured start-up cost keeps one lazy (and says so);
- no package reaches into another package's private (`_name`) modules, functions or constants.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

PKG = Path(__file__).resolve().parent.parent / "envcheck"


def _modules() -> List[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(p: Path) -> str:
    return p.relative_to(PKG.parent).as_posix()


def _imports(tree: ast.AST) -> Iterator[Tuple[int, str]]:
    """(line, dotted name) for every import; `from a import b` yields a and a.b."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import stays inside its own package
                yield node.lineno, "." * node.level + (node.module or "")
                continue
            yield node.lineno, node.module or ""
            for a in node.names:
                yield node.lineno, f"{node.module}.{a.name}"


def _top(name: str) -> str:
    return name.split(".")[0]


class _Trees(Mapping):
    """Every envcheck module's AST by path, parsed on first use: parsed at import, it cost each of
    the 4 xdist workers ~1.7 s of CPU while collecting, three of them for tests they never run."""

    def __init__(self) -> None:
        self._trees: Optional[Dict[str, ast.AST]] = None

    def _all(self) -> Dict[str, ast.AST]:
        if self._trees is None:
            self._trees = {_rel(p): ast.parse(p.read_text(), str(p)) for p in _modules()}
        return self._trees

    def __getitem__(self, path: str) -> ast.AST:
        return self._all()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


TREES = _Trees()


def test_the_source_tree_is_where_the_test_thinks():
    assert "envcheck/hosts/ssh.py" in TREES and "envcheck/node/probe/main.py" in TREES
    assert any(m.startswith("envcheck/cli/") for m in TREES)


def test_only_hosts_imports_fabric_or_paramiko():
    bad = [(m, ln, n) for m, t in TREES.items() for ln, n in _imports(t)
           if _top(n) in ("fabric", "paramiko", "invoke") and not m.startswith("envcheck/hosts/")]
    assert bad == []


def test_only_hostlist_imports_clustershell():
    bad = [(m, ln, n) for m, t in TREES.items() for ln, n in _imports(t)
           if _top(n) == "ClusterShell" and m != "envcheck/hostlist.py"]
    assert bad == []


def test_nothing_imports_the_node_scripts_as_modules():
    bad = [(m, ln, n) for m, t in TREES.items() for ln, n in _imports(t)
           if n == "envcheck.node" or n.startswith("envcheck.node.")]
    assert bad == []


def test_node_scripts_import_nothing_from_envcheck():
    bad = [(m, ln, n) for m, t in TREES.items() if m.startswith("envcheck/node/")
           for ln, n in _imports(t) if _top(n) == "envcheck" or n.startswith(".")]
    assert bad == []


def test_only_the_cli_imports_typer():
    bad = [(m, ln, n) for m, t in TREES.items() if not m.startswith("envcheck/cli/")
           for ln, n in _imports(t) if _top(n) in ("typer", "click")]
    assert bad == []


def test_cli_modules_do_not_postpone_annotations():
    """Typer reads each command's parameters from its annotations at run time. With
    `from __future__ import annotations` they are strings, and the typer that pip resolves on
    Python 3.9 (0.23) cannot evaluate `Annotated[...]` strings: every option is dropped
    ("No such option: --json"). So the CLI modules keep real annotations."""
    bad = [m for m, t in TREES.items() if m.startswith("envcheck/cli/")
           for node in ast.walk(t) if isinstance(node, ast.ImportFrom) and node.module == "__future__"
           and any(a.name == "annotations" for a in node.names)]
    assert bad == []


def _exits_and_prints(tree: ast.AST) -> Iterator[Tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("print", "exit", "quit"):
            yield node.lineno, f.id
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            if (f.value.id, f.attr) in (("sys", "exit"), ("os", "_exit")):
                yield node.lineno, f"{f.value.id}.{f.attr}"
            if f.value.id == "sys" and f.attr in ("stdout", "stderr"):
                yield node.lineno, f"sys.{f.attr}"
        elif (isinstance(f, ast.Attribute) and f.attr == "write" and isinstance(f.value, ast.Attribute)
              and isinstance(f.value.value, ast.Name) and f.value.value.id == "sys"):
            yield node.lineno, f"sys.{f.value.attr}.write"


def test_library_modules_never_print_or_exit():
    lib = {m: t for m, t in TREES.items()
           if not m.startswith(("envcheck/cli/", "envcheck/node/")) and m != "envcheck/__main__.py"}
    assert "envcheck/rules/driver.py" in lib
    bad = [(m, ln, what) for m, t in lib.items() for ln, what in _exits_and_prints(t)]
    assert bad == []


# Raised without a fix, for a reason: an answer from our own fact command that the user cannot
# act on.
NO_FIX_YET: set = set()


def test_every_usage_error_names_a_fix():
    """The rule: one line naming the thing AND the fix. A UsageError/VersionError built from a
    message alone prints no '(fix: …)'."""
    bad = []
    for m, t in TREES.items():
        for node in ast.walk(t):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("UsageError", "VersionError", "EnvcheckError")
                    and len(node.args) < 2 and not any(k.arg == "fix" for k in node.keywords)):
                text = ast.unparse(node)
                if not any(m == f and s in text for f, s in NO_FIX_YET):
                    bad.append(f"{m}:{node.lineno}: {text[:100]}")
    assert bad == []


# The layers, from the top: the CLI; the subsystems (one package per command family); the core
# they share. A module may import its own layer and the ones below, never one above.
CORE = ("envcheck/model.py", "envcheck/versions.py", "envcheck/errors.py", "envcheck/hostlist.py", "envcheck/hostfiles.py",
        "envcheck/inputs.py", "envcheck/remote.py", "envcheck/hosts/", "envcheck/matrix/", "envcheck/facts/", "envcheck/rules/",
        "envcheck/params/", "envcheck/paths.py")
CORE_PKGS = ("envcheck.model", "envcheck.versions", "envcheck.errors", "envcheck.hostlist", "envcheck.hostfiles",
             "envcheck.inputs", "envcheck.remote", "envcheck.hosts", "envcheck.matrix", "envcheck.facts", "envcheck.rules",
             "envcheck.params", "envcheck.paths")


def _layer(module: str) -> int:
    if module.startswith("envcheck/cli/") or module == "envcheck/__main__.py":
        return 2
    return 0 if module.startswith(CORE) else 1


def _layer_of_import(name: str) -> int:
    if name == "envcheck.cli" or name.startswith("envcheck.cli.") or name == "envcheck.__main__":
        return 2
    return 0 if name == "envcheck" or name.startswith(tuple(p + "." for p in CORE_PKGS)) or name in CORE_PKGS else 1


def test_imports_point_down_from_the_cli_through_the_subsystems_to_the_core():
    assert _layer("envcheck/rules/driver.py") == 0 and _layer("envcheck/audit/fleet.py") == 1
    bad = [(m, ln, n) for m, t in TREES.items() if not m.startswith("envcheck/node/")
           for ln, n in _imports(t) if _top(n) == "envcheck" and _layer_of_import(n) > _layer(m)]
    assert bad == [], "a module imports from a layer above its own: " + repr(bad)


def test_the_core_knows_no_transport_but_the_remote_interface():
    # rules, matrix and facts are pure functions of data: no SSH, no subprocess
    pure = {m: t for m, t in TREES.items() if m.startswith(("envcheck/rules/", "envcheck/matrix/", "envcheck/facts/"))}
    assert "envcheck/matrix/load.py" in pure
    bad = [(m, ln, n) for m, t in pure.items() for ln, n in _imports(t)
           if n in ("subprocess", "socket") or n.startswith(("envcheck.hosts", "envcheck.remote"))]
    assert bad == []


def _is_rendering(module: str) -> bool:
    return module == "envcheck/report.py" or module.endswith("/render.py")


def test_rendering_is_imported_by_the_cli_and_other_renderers_only():
    """Library code returns data; tables, JSON documents, JUnit and Prometheus text are made only
    on the way out (report.py, <subsystem>/render.py)."""
    renderers = {m[:-3].replace("/", ".") for m in TREES if _is_rendering(m)}
    assert "envcheck.report" in renderers and "envcheck.audit.render" in renderers
    bad = [(m, ln, n) for m, t in TREES.items()
           if not m.startswith("envcheck/cli/") and not _is_rendering(m)
           for ln, n in _imports(t) if n in renderers or n.rsplit(".", 1)[0] in renderers]
    assert bad == [], "library code imports a renderer: " + repr(bad)


# Sizes a newcomer can read: a function fits on a screen, a module is one subject. The node
# scripts are held by their own rule (short enough to read before letting them run as root).
MAX_FUNCTION_LINES = 80     # a function is shorter than this, its docstring not counted
MAX_MODULE_LINES = 400      # a module is at most this long


def _controller_modules():
    return {m: t for m, t in TREES.items() if not m.startswith("envcheck/node/")}


def _docstring_lines(n) -> int:
    """A command's docstring is its --help and the README's row (generated, cli/reference.py): text, not steps."""
    first = n.body[0] if n.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno - first.lineno + 1
    return 0


def test_every_function_outside_the_node_scripts_is_under_80_lines():
    longest = [(n.end_lineno - n.lineno + 1 - _docstring_lines(n), f"{m}:{n.lineno} {n.name}")
               for m, t in _controller_modules().items() for n in ast.walk(t)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(longest) > 100   # the walk found the functions it is meant to hold
    bad = sorted((size, where) for size, where in longest if size >= MAX_FUNCTION_LINES)
    assert bad == [], f"functions of {MAX_FUNCTION_LINES} lines or more: split them where their steps are"


def test_no_module_outside_the_node_scripts_is_over_400_lines():
    sizes = {m: len((PKG.parent / m).read_text().splitlines()) for m in _controller_modules()}
    assert sizes["envcheck/cli/doctor.py"] > 50   # the sizes are real files' sizes
    bad = sorted((n, m) for m, n in sizes.items() if n > MAX_MODULE_LINES)
    assert bad == [], f"modules over {MAX_MODULE_LINES} lines: split them by subject"


def test_exit_codes_are_decided_in_one_place():
    """model.Outcome turns what a command found into 0, 1 or 3 (errors.py defines the numbers):
    no other module names EXIT_FINDINGS or EXIT_UNREACHABLE (an error class's own exit_code
    attribute aside), and no command exits with a bare number other than 0."""
    bad = []
    for m, t in TREES.items():
        if m in ("envcheck/errors.py", "envcheck/model.py") or m.startswith("envcheck/node/"):
            continue
        attrs = {id(n.value) for c in ast.walk(t) if isinstance(c, ast.ClassDef) for n in c.body
                 if isinstance(n, ast.Assign) and [getattr(x, "id", "") for x in n.targets] == ["exit_code"]}
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and n.id in ("EXIT_FINDINGS", "EXIT_UNREACHABLE") and id(n) not in attrs:
                bad.append((m, n.lineno, n.id))
            if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "Exit" and n.args \
                    and isinstance(n.args[0], ast.Constant) and n.args[0].value not in (0,):
                bad.append((m, n.lineno, f"Exit({n.args[0].value})"))
    assert bad == [], "exit codes decided outside model.Outcome: " + repr(bad)


# An import inside a function hides the real import graph from a reader; it is allowed only where
# it pays at start-up (issue 26: `envcheck check`, `explain` and `--help` within 0.15 s), and then
# it says what it saves, measured: `# lazy: <what> costs ~N ms CPU …` on its line or right above
# (one note for a block of imports).
LAZY_NOTE = re.compile(r"#\s*lazy:.*\b\d+ ms")


def _lazy_note(lines: List[str], lineno: int) -> bool:
    """The import's own line, or the comments (and imports) just above it carry a measured note."""
    i = lineno - 1
    if LAZY_NOTE.search(lines[i]):
        return True
    i -= 1
    while i >= 0 and lines[i].lstrip().startswith(("#", "import ", "from ")):
        if LAZY_NOTE.search(lines[i]):
            return True
        i -= 1
    return False


def test_imports_sit_at_the_top_unless_a_measured_cost_keeps_them_lazy():
    lazy, bad = [], []
    for m, t in _controller_modules().items():
        lines = (PKG.parent / m).read_text().splitlines()
        for fn in ast.walk(t):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    (lazy if _lazy_note(lines, node.lineno) else bad).append(f"{m}:{node.lineno}")
    assert lazy, "the walk found the lazy imports it is meant to hold (fabric's, matplotlib's)"
    assert bad == [], ("imports inside functions without a measured `# lazy: … N ms` note: move "
                       "them to the top of the module, or measure (python -X importtime) and say why")


def _owner(dotted: str) -> str:
    """The package a module belongs to: envcheck.allreduce for envcheck.allreduce.run; a module
    directly under envcheck (envcheck.report) is its own."""
    return ".".join(dotted.split(".")[:2])


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches_into_private(module: str, tree: ast.AST) -> Iterator[Tuple[int, str]]:
    me = _owner(module[:-3].replace("/", ".").replace(".__init__", ""))
    aliases = {}   # local name -> the other package's module (or name) it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _top(node.module or "") == "envcheck":
            if _owner(node.module) == me:
                continue
            for a in node.names:
                dotted = f"{node.module}.{a.name}"
                if any(_private(p) for p in dotted.split(".")):
                    yield node.lineno, dotted
                aliases[a.asname or a.name] = dotted
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _top(a.name) == "envcheck" and _owner(a.name) != me:
                    if any(_private(p) for p in a.name.split(".")):
                        yield node.lineno, a.name
                    aliases[a.asname or a.name] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and _private(node.attr)):
            yield node.lineno, f"{aliases[node.value.id]}.{node.attr}"


def test_no_package_reaches_into_another_package_s_private_names():
    """A `_name` is its package's own business: free to change without a look elsewhere. Another
    package that needs it asks for a public name (as launch needs nccl-test's preflight)."""
    bad = [(m, ln, n) for m, t in _controller_modules().items() for ln, n in _reaches_into_private(m, t)]
    assert bad == [], "a module uses another package's private names: " + repr(bad)


# ---- one reader of a node, one reader of a facts document (issue 23) ----

# What reads a node, in the words a shell snippet or argv would hold. Only the node probe
# (envcheck/node/probe/) says them in code. The pure core (rules/, matrix/, facts/) runs nothing
# (test_the_core_knows_no_transport_but_the_remote_interface): there they are advice in a
# finding's fix or the schema's description, and docstrings anywhere are prose.
NODE_READS = ("nvidia-smi", "version.json", "sudo -n true", "ip -o")
# Every command reads a node through the probe's sections (the installers too: their preflight,
# and install-cuda's check of the tree it installed, run the probe).


def _docstrings(tree: ast.AST) -> set:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _node_reads(tree: ast.AST) -> Iterator[Tuple[int, str]]:
    docs = _docstrings(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            for word in NODE_READS:
                if word in n.value:
                    yield n.lineno, word


def _node_readers() -> dict:
    pure = ("envcheck/node/probe/", "envcheck/rules/", "envcheck/matrix/", "envcheck/facts/")
    return {m: sorted(set(_node_reads(t))) for m, t in TREES.items()
            if not m.startswith(pure) and list(_node_reads(t))}


def test_the_node_read_detector_sees_a_planted_reader():
    planted = ast.parse('def gpus(r):\n    """Count with nvidia-smi (prose)."""\n'
                        '    return r.run(f"nvidia-smi -L; ip -o -4 addr show {x}")\n')
    assert sorted(w for _, w in _node_reads(planted)) == ["ip -o", "nvidia-smi"]


def test_only_the_node_probe_reads_a_node():
    readers = _node_readers()
    assert "envcheck/node/allreduce_launcher.py" not in readers   # nccl-test's own `facts` mode is gone
    assert readers == {}, readers


# The top-level keys of a facts document (envcheck/facts/schema.py). Outside facts/ a command
# reads them through facts/schema.py's accessors or facts/views.py's typed views: indexing the
# dict (f["gpus"], facts.get("torch"), a private _get(f, "driver", …)) is a second reader of it.
# Writing one is facts/'s too: the derived facts (load.py: derive), a fix's edits on a copy (edit.py).
FACT_KEYS = {"schema", "origin", "probe", "hostname", "machine_id", "os", "python", "driver", "gpus",
             "pci_gpus", "cuda", "cudnn", "packages", "torch", "deep", "numpy", "nccl", "gcc", "env",
             "interfaces", "health", "errors", "privilege", "disk", "toolkit", "port", "resources", "tools",
             "gpu_processes", "login", "manifest", "owner", "pip_cudnn", "rcfile", "torch_import"}


def _is_facts(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in ("f", "facts")) or \
        (isinstance(node, ast.Attribute) and node.attr == "facts")


def _key(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _facts_indexing(tree: ast.AST) -> Iterator[Tuple[int, str]]:
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and _is_facts(n.value) and _key(n.slice) in FACT_KEYS:
            yield n.lineno, _key(n.slice)
        elif isinstance(n, ast.Call) and len(n.args) >= 1:
            f = n.func
            if (isinstance(f, ast.Attribute) and f.attr in ("get", "setdefault", "pop") and _is_facts(f.value)
                    and _key(n.args[0]) in FACT_KEYS):
                yield n.lineno, _key(n.args[0])
            elif (isinstance(f, ast.Name) and f.id.startswith("_") and len(n.args) >= 2 and _is_facts(n.args[0])
                  and _key(n.args[1]) in FACT_KEYS):
                yield n.lineno, _key(n.args[1])


def test_the_facts_indexing_detector_sees_a_planted_reader():
    planted = ast.parse('def n(f, r):\n    return f["gpus"], r.facts.get("torch"), _get(f, "driver", "v"), '
                        'f.get("name"), doc["gpus"]\n')
    assert sorted(k for _, k in _facts_indexing(planted)) == ["driver", "gpus", "torch"]


def test_only_facts_indexes_a_facts_document():
    readers = {m: sorted(set(_facts_indexing(t))) for m, t in TREES.items()
               if not m.startswith(("envcheck/facts/", "envcheck/node/")) and list(_facts_indexing(t))}
    assert readers == {}, readers


def test_the_two_rank_workloads_share_the_harness_not_each_other():
    """nccl-test (allreduce/) and launch (launch/) are two workloads on one rank harness (ranks/),
    as nccl-tests keeps common.cu and a file per collective: what they share lives in the
    harness, so neither imports the other, and the harness imports neither."""
    workloads = {"envcheck/allreduce/": "envcheck.launch", "envcheck/launch/": "envcheck.allreduce",
                 "envcheck/ranks/": ("envcheck.launch", "envcheck.allreduce")}
    assert "envcheck/ranks/plan.py" in TREES and "envcheck/launch/run.py" in TREES
    bad = [(m, ln, n) for m, t in TREES.items() for prefix, other in workloads.items()
           if m.startswith(prefix) for ln, n in _imports(t)
           if any(n == o or n.startswith(o + ".") for o in ((other,) if isinstance(other, str) else other))]
    assert bad == [], "a rank workload imports the other (or the harness a workload): " + repr(bad)
