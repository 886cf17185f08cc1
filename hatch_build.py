"""The wheel's build step for the YAML data envcheck ships (issue 26): each file is parsed here,
once, and compiled to JSON beside it in the wheel (compat_matrix.yaml, validated by envcheck's own
schema, to envcheck/data/compat_matrix.json; the playbooks; every YAML inside the package: the
health catalogue, explain's signatures, NVLink's table), so a command reads them in ~1 ms of CPU
instead of importing PyYAML (~17 ms) and parsing (~40 ms for the matrix, plus ~10 ms validating
it) on every start. Each JSON carries the size and CRC-32 of the YAML it was compiled from:
envcheck.inputs.compiled() uses it only while the YAML beside it is that same file (one edited by
hand is read, and validated, as before). A matrix that fails validation, or a file JSON cannot
hold as it is, fails the build with the reason.
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import zlib

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def sources(root):
    """(YAML in the checkout, its JSON's place in the wheel, validate as the matrix?)"""
    out = [("compat_matrix.yaml", "envcheck/data/compat_matrix.json", True)]
    for p in sorted(glob.glob(os.path.join(root, "playbooks", "*.yaml"))):
        name = os.path.basename(p)
        out.append(("playbooks/" + name, "envcheck/data/playbooks/" + name[:-len(".yaml")] + ".json", False))
    # every data file inside the package (the health catalogue, explain's signatures, NVLink's table)
    for p in sorted(glob.glob(os.path.join(root, "envcheck", "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(p, root).replace(os.sep, "/")
        out.append((rel, rel[:-len(".yaml")] + ".json", False))
    return out


def _encode(x, int_keys):
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return dict((k, _encode(v, int_keys)) for k, v in x.items())
        return {int_keys: [[k, _encode(v, int_keys)] for k, v in x.items()]}
    if isinstance(x, list):
        return [_encode(v, int_keys) for v in x]
    return x


def compile_yaml(root, rel, matrix):
    """The JSON text of one YAML file at root (a matrix validated by envcheck's own schema),
    read back through envcheck.inputs.compiled() and compared before it is accepted."""
    import yaml
    src = os.path.join(root, rel)
    with open(src, "rb") as f:
        raw = f.read()
    data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    sys.path.insert(0, root)
    try:
        from envcheck import inputs
        if matrix:
            from envcheck.matrix.schema import validate
            validate(data, src)
        text = json.dumps({"yaml_size": len(raw), "yaml_crc32": zlib.crc32(raw),
                           "data": _encode(data, inputs.INT_KEYS)}, separators=(",", ":"), ensure_ascii=False)
        tmp = tempfile.mkdtemp(prefix="envcheck-check-")
        try:
            base = os.path.join(tmp, "f")
            with open(base + ".yaml", "wb") as f:
                f.write(raw)
            with open(base + ".json", "w", encoding="utf-8") as f:
                f.write(text)
            back = inputs.compiled(base + ".yaml")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        sys.path.remove(root)
    if back != data or data is None:
        raise ValueError(f"{src}: JSON cannot hold this file as it is (a date? a key that is neither text nor a number?)")
    return text


class DataBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the checkout's YAML
        self._tmp = tempfile.mkdtemp(prefix="envcheck-build-")
        for i, (rel, dest, matrix) in enumerate(sources(self.root)):
            out = os.path.join(self._tmp, "%d.json" % i)
            with open(out, "w", encoding="utf-8") as f:
                f.write(compile_yaml(self.root, rel, matrix))
            build_data["force_include"][out] = dest

    def finalize(self, version, build_data, artifact_path):
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
