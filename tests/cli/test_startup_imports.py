"""What the commands a person waits for import at start-up (issue 26; the figures:
bench/cli_cpu.py): no PyYAML for envcheck's own data (the wheel carries it compiled to JSON), no
rich when the output is piped and nothing forces colour (rich would say "no colour" there too),
and not the facts views (~10 ms of dataclasses: check's findings table is in render.py, not in
report.py). Through the installed wheel, as a user runs it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import sys, runpy
sys.argv = ["envcheck"] + sys.argv[1:]
try:
    runpy.run_module("envcheck", run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\\nIMPORTED " + " ".join(m for m in ("yaml", "rich", "envcheck.facts.views") if m in sys.modules) + "\\n")
"""
COMMANDS = [["plan", "--gpu", "sm_90"],
            ["check", "--driver", "535.104.05", "--cuda", "12.4", "--torch", "2.5.1+cu124", "--gpu", "sm_90"],
            ["explain", "no kernel image is available for execution on the device"],
            ["--help"]]


def _imported(argv, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "PYTHONPATH")}
    p = subprocess.run([sys.executable, "-I", "-c", PROBE, *argv], capture_output=True, text=True, cwd="/",
                       env=dict(clean, **env), timeout=120)
    line = [x for x in p.stderr.splitlines() if x.startswith("IMPORTED")][-1]
    return set(line.split()[1:]), p.stdout


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_piped_command_imports_neither_pyyaml_nor_rich_nor_the_facts_views(argv):
    imported, out = _imported(argv)
    assert out.strip() and imported == set()


def test_forced_colour_still_goes_through_rich():
    imported, out = _imported(COMMANDS[0], FORCE_COLOR="1")
    assert "rich" in imported and "\033[" in out
