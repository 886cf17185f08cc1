"""The YAML data the wheel ships besides the matrix (tests/matrix/test_compiled.py): the health
catalogue, explain's signatures, the playbooks. Each is read from the JSON the wheel's build
compiled it to (hatch_build.py, issue 26) while its YAML is the file it was compiled from, and
from the YAML once that is edited; a playbook of the user's is never read from a JSON beside it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck import inputs
from envcheck.explain import signatures as S
from envcheck.provision import playbooks as PB
from envcheck.rules import health as H

# the installed wheel's package (tests/run.sh installs it; in-process imports are the checkout's)
PKG = Path(subprocess.run([sys.executable, "-I", "-c", "import envcheck, os; print(os.path.dirname(envcheck.__file__))"],
                          capture_output=True, text=True, cwd="/", check=True).stdout.strip())
pytestmark = pytest.mark.skipif(not (PKG / "data" / "compat_matrix.json").exists(),
                                reason="no installed wheel: no compiled data")


def _copy(src: Path, dst_dir: Path, mark) -> Path:
    """A copy of an installed YAML and its JSON, the JSON's data changed by mark(data)."""
    shutil.copy(src, dst_dir / src.name)
    doc = json.loads(src.with_suffix(".json").read_text())
    mark(doc["data"])
    (dst_dir / src.name).with_suffix(".json").write_text(json.dumps(doc))
    return dst_dir / src.name


def test_the_xid_catalogue_keeps_its_number_keys_through_json():
    import yaml
    cat = inputs.compiled(PKG / "rules" / "health_catalog.yaml")
    assert cat == yaml.safe_load((PKG / "rules" / "health_catalog.yaml").read_text())
    assert 79 in cat["xid"]["codes"] and all(isinstance(k, int) for k in cat["xid"]["codes"])


def test_the_health_catalogue_is_read_from_json_until_its_yaml_is_edited(tmp_path, monkeypatch):
    yml = _copy(PKG / "rules" / "health_catalog.yaml", tmp_path, lambda d: d.update(read_from="json"))
    monkeypatch.setattr(H, "CATALOG", yml)
    H.catalog.cache_clear()
    try:
        assert H.catalog()["read_from"] == "json"
        yml.write_text(yml.read_text() + "\n# edited\n")
        H.catalog.cache_clear()
        assert "read_from" not in H.catalog() and H.catalog()["xid"]
    finally:
        H.catalog.cache_clear()


def test_explains_signatures_are_read_from_json_until_their_yaml_is_edited(tmp_path, monkeypatch):
    yml = _copy(PKG / "explain" / "signatures.yaml", tmp_path, lambda d: d[0].update(title="from json"))
    monkeypatch.setattr(S, "DATA", yml)
    S.signatures.cache_clear()
    try:
        assert S.signatures()[0].title == "from json"
        yml.write_text(yml.read_text() + "\n# edited\n")
        S.signatures.cache_clear()
        assert S.signatures()[0].title != "from json"
    finally:
        S.signatures.cache_clear()


def test_a_packaged_playbook_is_read_from_json_and_a_users_never(tmp_path, monkeypatch):
    src = sorted((PKG / "data" / "playbooks").glob("*.yaml"))[0]
    packaged = tmp_path / "packaged"
    packaged.mkdir()
    yml = _copy(src, packaged, lambda d: d.update(description="from json"))
    monkeypatch.setattr(PB, "playbook_dirs", lambda: [packaged])
    assert PB.load_playbook(yml.stem).description == "from json"
    mine = tmp_path / "mine"
    mine.mkdir()
    users = _copy(src, mine, lambda d: d.update(description="from json"))
    assert PB.load_playbook(str(users)).description != "from json"
    yml.write_text(yml.read_text() + "\n# edited\n")
    assert PB.load_playbook(yml.stem).description != "from json"
