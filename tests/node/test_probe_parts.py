"""The probe's parts: one per component, each reading on its own (it imports every name it uses
from another part), joined into one script in import order, every collector a registered
section. pyflakes reads each part as an editor would."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from pyflakes import api as pyflakes_api
from pyflakes import messages as pyflakes_messages

from envcheck.audit import probe as audit_probe
from envcheck.audit.probe import PROBE_DIR, ProbeError, probe_parts, probe_source
from tests.node.probe_helpers import PROBE, load_probe

PARTS = sorted(PROBE_DIR.glob("*.py"))
UNDEFINED = (pyflakes_messages.UndefinedName, pyflakes_messages.UndefinedLocal,
             pyflakes_messages.UndefinedExport)


class Collect:
    def __init__(self):
        self.messages = []

    def flake(self, message):
        self.messages.append(message)

    def syntaxError(self, filename, msg, lineno, offset, text):  # noqa: N802 - pyflakes' names
        self.messages.append(f"{filename}:{lineno}: syntax error: {msg}")

    def unexpectedError(self, filename, msg):  # noqa: N802
        self.messages.append(f"{filename}: {msg}")


def flakes(text: str, name: str):
    out = Collect()
    pyflakes_api.check(text, name, out)
    return out.messages


def test_every_part_defines_or_imports_every_name_it_uses():
    assert len(PARTS) > 15
    bad = [str(m) for p in PARTS for m in flakes(p.read_text(), str(p))
           if isinstance(m, UNDEFINED) or isinstance(m, str)]
    assert bad == []


def test_the_pyflakes_check_sees_a_name_a_part_does_not_import():
    text = (PROBE_DIR / "gcc.py").read_text().replace("from run import ls, run, which\n", "")
    assert any(isinstance(m, pyflakes_messages.UndefinedName) for m in flakes(text, "gcc.py"))


def _stdlib_imports():
    stems = {p.stem for p in PARTS}
    return {a.name for p in PARTS for n in ast.parse(p.read_text()).body if isinstance(n, ast.Import)
            for a in n.names if a.name not in stems}


def test_no_two_parts_define_the_same_name_in_the_joined_script():
    """Joined, the parts share one namespace: a name defined twice would silently replace the
    first. pyflakes sees that as a redefinition (of which a stdlib module imported by several
    parts is the harmless kind)."""
    messages = flakes(probe_source(), "probe.py")
    assert [str(m) for m in messages if not isinstance(m, pyflakes_messages.UnusedImport) and not (
        isinstance(m, pyflakes_messages.RedefinedWhileUnused) and m.message_args[0] in _stdlib_imports())] == []


def _imported_parts(path):
    stems = {p.stem for p in PARTS}
    tree = ast.parse(path.read_text())
    return {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module in stems} | \
        {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names if a.name in stems}


def test_each_part_is_joined_after_the_parts_it_imports():
    order = [p.stem for p in probe_parts()]
    assert order[0] == "base" and order[-1] == "main" and sorted(order) == sorted(p.stem for p in PARTS)
    late = [(p.stem, dep) for p in PARTS for dep in _imported_parts(p) if order.index(dep) > order.index(p.stem)]
    assert late == []


def test_the_joined_script_imports_no_part():
    text = probe_source()
    stems = {p.stem for p in PARTS}
    tree = ast.parse(text)
    assert [n.lineno for n in tree.body if isinstance(n, ast.ImportFrom) and n.module in stems] == []
    assert [n.lineno for n in tree.body if isinstance(n, ast.Import)
            and any(a.name in stems for a in n.names)] == []


def test_a_cycle_between_parts_is_refused_and_imports_spanning_lines_are_dropped(tmp_path, monkeypatch):
    (tmp_path / "base.py").write_text("#!/usr/bin/env python3\nX = 1\nY = 2\n")
    (tmp_path / "a.py").write_text("# part a\n\nimport os\nfrom base import (X,\n                  Y)\n\nZ = X + Y\n")
    (tmp_path / "main.py").write_text("# part main\n\nimport os\nfrom a import Z\nimport a, base  # noqa\n\nprint(Z)\n")
    monkeypatch.setattr(audit_probe, "PROBE_DIR", tmp_path)
    text = probe_source()
    assert [p.stem for p in probe_parts()] == ["base", "a", "main"]
    assert "import (" not in text and "from a" not in text and "import a" not in text
    assert subprocess.run([sys.executable, "-"], input=text, capture_output=True, text=True).stdout == "3\n"
    (tmp_path / "base.py").write_text("from main import Z\n")
    with pytest.raises(ProbeError, match="cycle"):
        probe_source()


def _timeless(doc):
    doc["probe"]["seconds"] = None
    if isinstance(doc.get("health"), dict):
        doc["health"]["seconds"] = None
        if isinstance(doc["health"].get("kernel_log"), dict):
            doc["health"]["kernel_log"]["uptime_s"] = None   # the clock the Xids' ages are read against
    return doc


def test_main_runs_on_its_own_and_prints_what_the_joined_script_prints(tmp_path):
    alone = subprocess.run([sys.executable, str(PROBE_DIR / "main.py")], capture_output=True,
                           text=True, timeout=120, cwd=tmp_path)
    joined = subprocess.run([sys.executable, "-"], input=PROBE.read_text(), capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert alone.returncode == 0 and joined.returncode == 0, alone.stderr + joined.stderr
    a, b = _timeless(json.loads(alone.stdout)), _timeless(json.loads(joined.stdout))
    a.pop("interfaces"), b.pop("interfaces")  # other tests' simulated hosts come and go meanwhile
    assert a == b


def test_every_collector_is_a_section_of_the_one_registry():
    """main runs sections from the registry only: it calls no collector by name, and no part
    but base touches the registry except through @section."""
    main = ast.parse((PROBE_DIR / "main.py").read_text())
    by_name = sorted({n.id for n in ast.walk(main) if isinstance(n, ast.Name) and n.id.startswith("collect_")})
    assert by_name == []
    hand_wired = [p.name for p in PARTS if p.stem not in ("base", "main", "driver")
                  and "SECTIONS" in p.read_text()]
    assert hand_wired == []
    probe = load_probe()
    assert set(probe.DOCUMENT) <= set(probe.SECTIONS)
    for s in probe.SECTIONS.values():  # what a section needs is a section too
        assert set(s.needs) <= set(probe.SECTIONS), s.name
