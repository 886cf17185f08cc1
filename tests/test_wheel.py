"""The wheel carries the matrix (force-included from the top level) and loads it."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile

import yaml

from envcheck.matrix_schema import validate
from tests.conftest import REPO


def test_the_built_wheel_contains_the_matrix_and_it_validates(tmp_path):
    # without hatchling in this interpreter, let pip fetch it into an isolated build env
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q",
                        "-w", str(tmp_path), str(REPO)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    [whl] = list(tmp_path.glob("envcheck-*.whl"))
    with zipfile.ZipFile(whl) as z:
        text = z.read("envcheck/data/compat_matrix.yaml").decode()
        assert "envcheck/matrix_schema.py" in z.namelist()
    assert text == (REPO / "compat_matrix.yaml").read_text()
    validate(yaml.safe_load(text), "wheel")
