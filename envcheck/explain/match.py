"""`envcheck explain`: match a pasted error text against well-known signatures
(envcheck/explain/signatures.py) and say what causes it, how to fix it and which envcheck checks
diagnose it. Pure: text in, data out; the CLI prints.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from envcheck.explain.signatures import SIGNATURES
from envcheck.errors import UsageError

_FLAGS = re.IGNORECASE | re.MULTILINE
# a pasted traceback can be huge; the signatures are all near the error lines, and a bounded
# input keeps every regex cheap
MAX_TEXT = 1_000_000


@dataclass
class Explanation:
    id: str
    title: str
    matched: str          # the text that matched, as pasted (one line, trimmed)
    cause: str
    fix: str
    components: List[str]
    checks: List[str]
    values: Dict[str, str] = field(default_factory=dict)   # numbers/versions read from the text
    position: int = 0

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        del d["position"]
        return d


class _Fill(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _compiled() -> List[Tuple[Dict[str, Any], "re.Pattern[str]"]]:
    return [(sig, re.compile(sig["pattern"], _FLAGS)) for sig in SIGNATURES]


_TABLE = _compiled()


def explain(text: str) -> List[Explanation]:
    """Every signature found in `text`, in the order they appear (the earliest is usually the
    root cause); generic entries superseded by a specific one are dropped. [] = unknown."""
    if text is None or not text.strip():
        raise UsageError("explain: no error text given", 'pass the message, e.g. envcheck explain "no kernel image is available"')
    text = text[:MAX_TEXT]
    found: List[Explanation] = []
    for sig, rx in _TABLE:
        m = rx.search(text)
        if not m:
            continue
        values = {k: v for k, v in m.groupdict().items() if v is not None}
        fill = _Fill(sig.get("defaults", {}))
        fill.update(values)
        derive = sig.get("derive")
        if derive:
            fill.update({k: v for k, v in derive(dict(fill)).items() if v is not None})
        found.append(Explanation(
            id=sig["id"],
            title=sig["title"].format_map(fill),
            matched=" ".join(m.group(0).split())[:300],
            cause=sig["cause"].format_map(fill),
            fix=sig["fix"].format_map(fill),
            components=list(sig["components"]),
            checks=[c.format_map(fill) for c in sig["checks"]],
            values={k: str(v) for k, v in values.items()},
            position=m.start(),
        ))
    dropped = {s for sig, _ in _TABLE if sig["id"] in {e.id for e in found}
               for s in sig.get("supersedes", ())}
    found = [e for e in found if e.id not in dropped]
    found.sort(key=lambda e: e.position)
    return found


def signature_ids() -> Sequence[str]:
    return [sig["id"] for sig, _ in _TABLE]


def components_of(explanations: Sequence[Explanation]) -> List[str]:
    """The finding components that diagnose these errors, for filtering an audit's findings."""
    out: List[str] = []
    for e in explanations:
        for c in e.components:
            if c not in out:
                out.append(c)
    return out


def read_text(arg: Optional[str], stdin_text: Optional[str]) -> str:
    """The text to explain: the argument, or stdin when the argument is '-' or missing."""
    if arg is not None and arg != "-":
        return arg
    if stdin_text is None:
        raise UsageError("explain: no error text given", 'pass it as an argument or pipe it: envcheck explain - < log.txt')
    return stdin_text
