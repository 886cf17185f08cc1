"""A facts document checked against its JSON Schema (facts.schema.json, beside this file; editors
and other tools can use the same file): every section and nested value of the wrong type is an
error naming its path, never read as "absent" (`gpus: [5, null]`, `python.version: 3.7` as a
number, `schema: true`). jsonschema does the walking: the schema is data, the checks are the
standard's, and a key the schema lists can be neither misspelt in code nor forgotten.

validate_facts(doc, where) is what every reader of a saved facts document calls (check FILE,
plan FILE, and envcheck/facts' loader)."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, List

from envcheck.errors import UsageError
from envcheck.params.core import excerpt

SCHEMA_FILE = Path(__file__).resolve().parent / "facts.schema.json"
FIX = "give a file written by `envcheck audit --json` or the probe of this envcheck version"


@functools.lru_cache(maxsize=1)
def schema() -> Dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # lazy: jsonschema costs ~120 ms CPU to load (-X importtime); only a saved facts file needs it
    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def errors(doc: Any) -> List[str]:
    """Every violation, one line each ('gpus[1] is null, not an object'), the most telling first."""
    import jsonschema  # lazy: jsonschema costs ~120 ms CPU to load (-X importtime); only a saved facts file needs it
    found = sorted(_validator().iter_errors(doc), key=jsonschema.exceptions.relevance, reverse=True)
    return [_say(e) for e in found]


def validate_facts(doc: Any, where: str) -> None:
    """UsageError naming the first wrong value's path, or nothing."""
    import jsonschema  # lazy: jsonschema costs ~120 ms CPU to load (-X importtime); only a saved facts file needs it
    err = jsonschema.exceptions.best_match(_validator().iter_errors(doc))
    if err is not None:
        raise UsageError(f"{where}: {_say(err)}", FIX)


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def _kind(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _path(err: Any) -> str:
    out = ""
    for p in err.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top)"


def _say(err: Any) -> str:
    where, value = _path(err), err.instance
    if err.validator == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        names = [{"object": "an object", "array": "a list", "string": "a string", "integer": "a whole number",
                  "number": "a number", "boolean": "true or false", "null": "null"}.get(w, w) for w in want]
        return f"{where} is {_kind(value)} {excerpt(value, 20) if _kind(value) != 'null' else ''}".rstrip() + \
            f", not {' or '.join(names)}"
    if err.validator == "const":
        return f"{where} is {excerpt(value, 20)}, this envcheck reads {err.validator_value!r}"
    if err.validator == "enum":
        return f"{where} is {excerpt(value, 20)}, not one of {', '.join(map(str, err.validator_value))}"
    if err.validator in ("maximum", "minimum"):
        return f"{where} is {excerpt(value, 20)}, out of range ({err.validator} {err.validator_value})"
    return f"{where}: {' '.join(err.message.split())[:120]}"
