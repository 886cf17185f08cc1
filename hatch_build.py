"""The wheel's build step for the packaged matrix (issue 26): compat_matrix.yaml is validated here,
once, and compiled to JSON beside it (envcheck/data/compat_matrix.json), so a command that reads
the packaged matrix loads it in ~1 ms of CPU instead of ~40 ms of YAML parsing plus ~10 ms of
validation on every start. The JSON carries the size and CRC-32 of the YAML it was compiled from:
envcheck.matrix.load uses it only while the YAML beside it is that same file (an installed YAML
edited by hand is read and validated as before). A matrix that fails validation, or that JSON
cannot hold as it is (a date, a non-string key), fails the build with the reason.
"""
import json
import os
import shutil
import sys
import tempfile
import zlib

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MATRIX = "compat_matrix.yaml"
COMPILED = "envcheck/data/compat_matrix.json"


def compile_matrix(root: str) -> str:
    """The JSON text of the matrix at root, validated by envcheck's own schema."""
    import yaml
    src = os.path.join(root, MATRIX)
    with open(src, "rb") as f:
        raw = f.read()
    data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    sys.path.insert(0, root)
    try:
        from envcheck.matrix.schema import validate
        validate(data, src)
    finally:
        sys.path.remove(root)
    text = json.dumps({"yaml_size": len(raw), "yaml_crc32": zlib.crc32(raw), "matrix": data},
                      separators=(",", ":"), ensure_ascii=False)
    if json.loads(text)["matrix"] != data:
        raise ValueError(f"{src}: JSON cannot hold this matrix as it is (a date or a non-string key?)")
    return text


class MatrixBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the checkout's YAML (envcheck.matrix.load)
        self._tmp = tempfile.mkdtemp(prefix="envcheck-build-")
        out = os.path.join(self._tmp, "compat_matrix.json")
        with open(out, "w", encoding="utf-8") as f:
            f.write(compile_matrix(self.root))
        build_data["force_include"][out] = COMPILED

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
