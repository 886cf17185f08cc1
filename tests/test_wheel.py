"""The wheel carries the matrix (force-included from the top level) and loads it."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
import zlib

import yaml

from envcheck import inputs
from envcheck.matrix.schema import validate
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
        # and every YAML data file compiled by the build (hatch_build.py) beside it: the same
        # data, read back by envcheck.inputs.compiled(), fingerprinted by its YAML
        yamls = [n for n in z.namelist() if n.endswith(".yaml")]
        assert len(yamls) >= 5 and "envcheck/rules/health_catalog.yaml" in yamls
        for name in yamls:
            raw = z.read(name)
            (tmp_path / "x.yaml").write_bytes(raw)
            (tmp_path / "x.json").write_bytes(z.read(name[:-len(".yaml")] + ".json"))
            assert inputs.compiled(tmp_path / "x.yaml") == yaml.safe_load(raw), name
            assert json.loads(z.read(name[:-len(".yaml")] + ".json"))["yaml_crc32"] == zlib.crc32(raw)
        assert "envcheck/matrix/schema.py" in z.namelist()
        # shipped as text to the nodes / read as data: an installed envcheck without them only
        # fails on first use, so check every one, byte for byte
        shipped = {p.relative_to(REPO).as_posix(): p for p in (REPO / "envcheck" / "node").rglob("*.py")}
        shipped.update({f"envcheck/data/playbooks/{p.name}": p for p in (REPO / "playbooks").glob("*.yaml")})
        shipped.update({f"envcheck/rules/{p.name}": p for p in (REPO / "envcheck" / "rules").glob("*.yaml")})
        assert "envcheck/rules/health_catalog.yaml" in shipped
        shipped["envcheck/explain/signatures.yaml"] = REPO / "envcheck" / "explain" / "signatures.yaml"
        assert "envcheck/node/probe/main.py" in shipped
        for name, src in shipped.items():
            assert name in z.namelist(), name
            assert z.read(name) == src.read_bytes(), name
    assert text == (REPO / "compat_matrix.yaml").read_text()
    validate(yaml.safe_load(text), "wheel")
