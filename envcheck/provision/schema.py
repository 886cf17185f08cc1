"""What a playbook may hold, field by field, with the declarations the CLI uses for the same
inputs (envcheck/params): an env step's cuda_home is `--cuda-home` (absolute, no control
character), an nccl-test step's timeout is `--collective-timeout` (0.1 s to a week), a pip step's
index_url is a URL. So a playbook passes validation only with values the CLI would take, and no
provisioning run stops half-way on a value it could have refused before any step ran.

json_schema() is the same table as a JSON Schema (schemas/playbook.schema.json, for editors:
`# yaml-language-server: $schema=…` at the top of a playbook)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

from envcheck import params as P
from envcheck.errors import UsageError
from envcheck.params.core import Param, excerpt

SCHEMA = 1
FIX = "correct the playbook (keys: see docs/doctor.md)"

BOOL = Param("flag", "bool", "true or false")
NAME = Param("name", "text", "The stack's name.", max_len=200, example="cuda12.4-cudnn9.1-torch2.5")
DESCRIPTION = Param("description", "text", "What the stack is for.", max_len=16384, controls=True)
SOURCE = Param("source", "url", "Where a fact of the stack comes from.", max_len=2048,
               example="https://pytorch.org/get-started/previous-versions/")
FILE_NAME = Param("file", "text", "A file in --files (or beside the playbook), by name.", max_len=1024,
                  example="cuda_12.4.1_550.54.15_linux.run")
PACKAGE = Param("package", "text", "A pip requirement.", max_len=1024, example="torch==2.5.1")
FIND_LINKS = Param("find_links", "text", "A URL or a directory on the node with wheels.", max_len=2048,
                   example="https://download.pytorch.org/whl/cu100/torch_stable.html")


@dataclass(frozen=True)
class ListOf:
    """A non-empty list of one declared kind (or, with scalar_ok, one value alone)."""
    item: Param
    scalar_ok: bool = False
    max_items: int = 1000

    def json_schema(self) -> Dict[str, Any]:
        arr = {"type": "array", "items": self.item.json_schema(), "minItems": 1, "maxItems": self.max_items}
        return {"oneOf": [self.item.json_schema(), arr]} if self.scalar_ok else arr


Field = Union[Param, ListOf, None]    # None: a section checked on its own (stack, steps)

TOP: Dict[str, Field] = {"schema": None,   # checked first, on its own: a newer playbook says so
                         "name": NAME, "description": DESCRIPTION, "stack": None,
                         "sources": ListOf(SOURCE), "steps": None}
TOP_REQUIRED = ("schema", "name", "stack", "steps")
STACK: Dict[str, Field] = {"driver_min": P.DRIVER_V, "cuda": P.CUDA_V, "cudnn": P.CUDNN_V,
                           "torch": P.TORCH_VERSION, "torchvision": P.TORCHVISION_V,
                           "torchaudio": P.TORCHAUDIO_V, "python": ListOf(P.PYTHON_VERSION, scalar_ok=True),
                           "gpu": ListOf(P.GPU)}

# step name -> (its fields, the required ones)
STEPS: Dict[str, Tuple[Dict[str, Field], Tuple[str, ...]]] = {
    "install-cuda": ({"version": P.CUDA_VERSION, "runfile": FILE_NAME, "url": P.URL, "sha256": P.SHA256,
                      "symlink": BOOL, "tmpdir": P.TMPDIR}, ("version",)),
    "install-cudnn": ({"archive": FILE_NAME, "cuda": P.VERSION, "cuda_home": P.CUDA_HOME, "tmpdir": P.TMPDIR},
                      ("archive",)),
    "env": ({"cuda_home": P.CUDA_HOME, "file": P.RC_FILE, "profile_d": BOOL}, ("cuda_home",)),
    "pip": ({"packages": ListOf(PACKAGE), "index_url": P.INDEX_URL, "extra_index_url": P.INDEX_URL,
             "find_links": FIND_LINKS, "no_index": BOOL, "no_deps": BOOL}, ("packages",)),
    "audit": ({"deep": BOOL}, ()),
    "nccl-test": ({"backend": P.BACKEND, "min_busbw": P.MIN_BUSBW, "max_bytes": P.MAX_BYTES,
                   "timeout": P.COLLECTIVE_TIMEOUT, "ifname": P.IFNAME}, ()),
}


def key(k: Any) -> str:
    """A key as a path part: itself when it is a short name, else an excerpt."""
    return k if isinstance(k, str) and len(k) <= 60 and k.isprintable() else excerpt(k)


def err(file: str, where: str, reason: str) -> UsageError:
    return UsageError(f"{file}: {where}: {reason}", FIX)


def check_value(file: str, where: str, key: str, field: Field, value: Any) -> Any:
    """The value as its declaration reads it, or a UsageError naming file, key path and a fix in
    the playbook's own terms (`cuda_home: /usr/local/cuda-12.4`)."""
    if field is None:
        return value
    if isinstance(field, ListOf):
        items = [value] if field.scalar_ok and not isinstance(value, list) else value
        if not isinstance(items, list) or not items or len(items) > field.max_items:
            raise err(file, where, f"must be a non-empty list (at most {field.max_items}), not {excerpt(value)}")
        return [check_value(file, f"{where}[{i}]", key, field.item, v) for i, v in enumerate(items)]
    try:
        return field.parse(value, f"{file}: {where}")
    except UsageError as e:
        shown = f'"{field.example}"' if field.kind == "version" else field.example   # YAML: 12.4 is a number
        example = f"e.g. {key}: {shown}" if field.example else FIX
        raise UsageError(e.message, example) from None


def check_map(file: str, where: str, data: Any, fields: Dict[str, Field], required: Tuple[str, ...]) -> None:
    if not isinstance(data, dict):
        raise err(file, where or "(top)", "must be a mapping")
    for k in data:
        if k not in fields:
            raise err(file, f"{where}.{key(k)}" if where else key(k), f"unknown key (known: {', '.join(fields)})")
    for k in required:
        if k not in data:
            raise err(file, f"{where}.{k}" if where else k, "missing")
    for k, field in fields.items():
        if k in data:
            check_value(file, f"{where}.{k}" if where else k, k, field, data[k])


def _field_schema(field: Field) -> Dict[str, Any]:
    return {} if field is None else field.json_schema()


def _map_schema(fields: Dict[str, Field], required: Tuple[str, ...], null_ok: bool = False) -> Dict[str, Any]:
    return {"type": ["object", "null"] if null_ok else "object", "additionalProperties": False,
            "required": list(required), "properties": {k: _field_schema(f) for k, f in fields.items()}}


def json_schema() -> Dict[str, Any]:
    """The playbook format as a JSON Schema (draft 2020-12), generated from the table above."""
    top = _map_schema(TOP, TOP_REQUIRED)
    top["properties"]["schema"] = {"const": SCHEMA}
    top["properties"]["stack"] = _map_schema(STACK, ())
    steps = [{"type": "object", "additionalProperties": False, "required": [name],
              "properties": {name: _map_schema(fields, req, null_ok=not req)}}
             for name, (fields, req) in STEPS.items()]
    top["properties"]["steps"] = {"type": "array", "minItems": 1, "maxItems": 1000, "items": {"oneOf": steps}}
    return dict({"$schema": "https://json-schema.org/draft/2020-12/schema",
                 "$id": "https://envcheck.invalid/schemas/playbook.schema.json",
                 "title": "envcheck playbook", "description": __doc__.split("\n\n")[0]}, **top)


def field_of(step: str, key: str) -> Optional[Field]:
    return STEPS.get(step, ({}, ()))[0].get(key)
