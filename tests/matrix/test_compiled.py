"""The packaged matrix is read from the JSON the wheel's build validated and compiled it to
(hatch_build.py, issue 26), and only while the YAML beside it is the file it was compiled from:
an installed YAML edited by hand is read, and validated, as before."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck import inputs
from envcheck.errors import MatrixError
from envcheck.matrix import load as L

# the installed wheel's matrix (tests/run.sh installs it; in-process imports are the checkout's)
PACKAGED = Path(subprocess.run(
    [sys.executable, "-I", "-c", "import envcheck.matrix.load as L; print(L.default_matrix_path())"],
    capture_output=True, text=True, cwd="/", check=True).stdout.strip())
COMPILED = PACKAGED.with_suffix(".json")
pytestmark = pytest.mark.skipif(not COMPILED.exists(), reason="no installed wheel: no compiled matrix")


@pytest.fixture()
def installed(tmp_path, monkeypatch):
    """A copy of the installed pair, its JSON marked so a test sees which file was read."""
    yml, js = tmp_path / "compat_matrix.yaml", tmp_path / "compat_matrix.json"
    shutil.copy(PACKAGED, yml)
    doc = json.loads(COMPILED.read_text())
    doc["data"]["read_from"] = "json"
    js.write_text(json.dumps(doc))
    monkeypatch.setattr(L, "default_matrix_path", lambda: yml)
    return yml


def test_the_compiled_matrix_is_the_packaged_yaml_read_and_validated(monkeypatch):
    monkeypatch.setattr(L, "default_matrix_path", lambda: PACKAGED)
    assert isinstance(inputs.compiled(PACKAGED), dict)
    assert L.load_matrix().data == L.load_matrix(PACKAGED).data


def test_the_packaged_matrix_is_read_from_its_compiled_form(installed):
    assert L.load_matrix().data["read_from"] == "json"


def test_a_hand_edited_yaml_is_read_from_the_yaml(installed):
    installed.write_text(installed.read_text() + "\n# edited by hand\n")
    m = L.load_matrix()
    assert "read_from" not in m.data and m.summary() == L.load_matrix(PACKAGED).summary()


def test_a_hand_edited_yaml_is_validated_as_before(installed):
    installed.write_text(installed.read_text().replace("schema: 1", "schema: 1\nbogus_key: 1", 1))
    with pytest.raises(MatrixError, match="bogus_key"):
        L.load_matrix()


def test_a_path_given_is_never_read_from_a_compiled_form(installed):
    assert "read_from" not in L.load_matrix(installed).data
