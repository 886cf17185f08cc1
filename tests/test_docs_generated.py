"""The docs' tables that are the code's own words are generated from it (cog blocks, written by
envcheck/cli/reference.py) and checked here, as sqlite-utils checks its CLI reference: the
command table, the exit codes and where each part lives (README.md), every finding code
(docs/check-and-matrix.md). And what the docs show by hand cannot name a finding code the code
does not have."""
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

GENERATED = ["README.md", "docs/check-and-matrix.md"]
DOCS = ["README.md"] + sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))


def _cog(*args, cwd=REPO):
    import os
    env = dict(os.environ, PYTHONPATH=str(REPO))   # the source tree's envcheck, whatever is installed
    return subprocess.run([sys.executable, "-m", "cogapp", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_generated_tables_are_current():
    pytest.importorskip("cogapp")
    r = _cog("--check", *GENERATED)
    assert r.returncode == 0, ("a generated table is stale: run `cog -r README.md docs/check-and-matrix.md` "
                               "(cogapp, in the test extras)\n" + r.stdout + r.stderr)


def test_a_stale_table_is_caught(tmp_path):
    pytest.importorskip("cogapp")
    text = (REPO / "README.md").read_text()
    stale = tmp_path / "README.md"
    stale.write_text(text.replace("| `envcheck doctor [HOSTS…]` |", "| `envcheck doctor HOSTS` |", 1))
    assert stale.read_text() != text
    assert _cog("--check", str(stale)).returncode != 0


def test_every_command_exit_code_and_package_is_in_the_readme():
    """What the generator reads is really there (a generator that lost its input would generate
    an empty table, current and wrong)."""
    import typer.main

    from envcheck.cli import app
    from envcheck.errors import EXIT_CODES
    readme = (REPO / "README.md").read_text()
    for name in typer.main.get_command(app).commands:
        assert f"| `envcheck {name}" in readme, name
    for code in EXIT_CODES:
        assert f"\n| {code} | " in readme, code
    for pkg in ("ranks", "allreduce", "launch", "rules", "facts", "node"):
        assert f"`envcheck/{pkg}/`" in readme, pkg


def test_every_finding_code_the_code_builds_is_resolved_and_listed():
    from envcheck.cli.reference import finding_codes
    codes, unresolved = finding_codes()
    assert unresolved == set(), ("a Finding code built at run time that the docs generator cannot "
                                 "expand: add it to envcheck/cli/reference.py TEMPLATES")
    assert {"driver-too-old-for-toolkit", "fleet-cuda-mismatch", "torchvision-cuda-mismatch",
            "xid-79", "gpu-missing-from-driver"} <= set(codes)
    listed = (REPO / "docs" / "check-and-matrix.md").read_text()
    assert all(f"`{c}`" in listed for c in codes if not c.startswith("xid-"))


# a finding as envcheck prints it ends in its code: "… insufficient. [driver-too-old-for-toolkit]";
# a rules table lists one per row: "| `gpu-no-kernel` | gpu | error | …"
PRINTED = re.compile(r"\[([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\](?!\()")
TABLED = re.compile(r"^\| `([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`(?:(?:, | / )`([a-z][a-z0-9]*(?:-[a-z0-9]+)+)`)?",
                    re.M)
RULE_TABLES = ("docs/check-and-matrix.md", "docs/health.md")


def _promised(doc):
    text = re.sub(r"\[\[\[cog.*?\[\[\[end\]\]\]", "", (REPO / doc).read_text(), flags=re.S)
    found = set(PRINTED.findall(text))
    if doc in RULE_TABLES:
        found |= {c for pair in TABLED.findall(text) for c in pair if c}
    return found - {"nvidia-smi", "sysfs-bus-pci"}   # link texts, not codes


@pytest.fixture(scope="module")
def codes():
    from envcheck.cli.reference import finding_codes
    return set(finding_codes()[0])


@pytest.mark.parametrize("doc", DOCS)
def test_no_doc_shows_a_finding_code_the_code_does_not_have(doc, codes):
    assert _promised(doc) - codes == set()


def test_the_code_check_sees_a_planted_code():
    assert PRINTED.findall("fails. [driver-too-old-for-tolkit]\n[link-text](x)") == ["driver-too-old-for-tolkit"]
