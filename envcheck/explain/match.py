"""`envcheck explain`: find the well-known error texts (envcheck/explain/signatures.yaml) in a
pasted message, traceback or whole log, rank them and say for each what causes it, how sure
that is, how to fix it and which envcheck checks tell the causes apart. Pure: text in, data
out; the CLI prints.

Beyond the hand-written wordings, the catalogue of what the emitters print
(envcheck/explain/catalogue.py: message templates and error codes from the sources of PyTorch,
NCCL, the CUDA libraries ...) names a cause for a message no wording knows, or for an error code
alone; its matches say what was recognised (`via`). Where neither blames the environment and
nothing found is sure of the workload, the text's stable keys (keys.py: error names and numbers,
library files, tools, phrases) may add `possible` causes, learnt from the labelled texts, their
`via` naming the keys.

Ranking: a confidence (exact: the text is that error's own message; likely: a weaker hint, or
the most frequent cause of an error with several; possible: the other causes of such an error,
and an error whose most frequent cause is the workload's (memory, a bad index), not the setup's),
then root causes before what they lead to (a GPU missing from torch's arch list before the
'no kernel image' it causes), then a hand-written wording before a catalogue inference, then
the order in the log (the earliest is usually the cause).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from envcheck.errors import UsageError
from envcheck.explain import catalogue
from envcheck.explain.normalise import Normalised
from envcheck.explain.signatures import AT_INIT, CONFIDENCE, CPU_ASKED, MID_RUN, Signature, Wording, signatures

if TYPE_CHECKING:
    from envcheck.explain.keys import Model

# every wording is searched in the whole text; past this the tail is what matters (the error
# is printed last) and the head of a huge log is mostly progress output
MAX_TEXT = 4_000_000


@dataclass
class Alternative:
    cause: str
    check: str
    confidence: str


@dataclass
class Explanation:
    id: str
    kind: str                 # environment | workload
    confidence: str           # exact | likely | possible
    title: str
    matched: str              # the line(s) that matched, as pasted (trimmed)
    line: int                 # 1-based line of the match in the pasted text
    cause: str
    fix: str
    components: List[str]
    checks: List[str]
    values: Dict[str, str] = field(default_factory=dict)   # numbers/versions read from the text
    alternatives: List[Alternative] = field(default_factory=list)
    via: str = ""             # a catalogue match: the message or error code recognised, and its source
    position: int = 0
    span: int = 0
    priority: int = 0

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        del d["position"], d["priority"], d["span"]
        return d


class _Fill(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _shell_words(fill: _Fill) -> _Fill:
    """The values a check command is filled with, each one shell word (a GPU's name has spaces:
    `envcheck check --gpu 'GeForce RTX 2080'`); stand-ins (?, X.Y, "(not in the text)") as they are."""
    return _Fill({k: v if _STAND_IN.fullmatch(str(v)) else shlex.quote(str(v)) for k, v in fill.items()})


# a title's variable part: in parentheses with its words ("(compute capability {cc})"), or alone
_SLOT = re.compile(r" ?\([^(){}]*\{(\w+)\}[^()]*\)| ?\{(\w+)\}")
# what a default holds where the text gave no value: a stand-in, not a value
_STAND_IN = re.compile(r"\s*|[?NV]|X\.Y|VERSION|\(.*\)")


def _bare_title(title: str, fill: Dict[str, str]) -> str:
    """The title without the variable parts the text gave no value for (a fallback answer reads
    no value: "cuDNN {major} library not found" is "cuDNN library not found", not "cuDNN N ...")."""
    def part(m):
        key = m.group(1) or m.group(2)
        return "" if _STAND_IN.fullmatch(str(fill.get(key, ""))) else m.group(0)
    return _SLOT.sub(part, title).format_map(fill)


def _search(w: Wording, norm: Normalised):
    """The wording's match in the text, or None: its anchor looked for first, its context after."""
    if w.anchor is not None and w.anchor not in norm.lower:
        return None
    m = w.regex.search(norm.text)
    return None if m and w.context is not None and not w.context.search(norm.text) else m


def _first_match(sig: Signature, norm: Normalised):
    """The match of the wording with the best confidence, the earliest among equals: a weaker
    wording of the same cause earlier in the text (a generic final line printed before the
    emitter's own words) does not lower the answer; None when no wording matches."""
    best = None
    for w in sig.wordings:
        m = _search(w, norm)
        if m and (best is None or (CONFIDENCE.index(w.confidence), m.start())
                  < (CONFIDENCE.index(best[1]), best[0].start())):
            best = (m, w.confidence)
    return best


def _explanation(sig: Signature, m, confidence: str, norm: Normalised) -> Explanation:
    return _build(sig, confidence, norm, m.start(), m.end(),
                  {k: v for k, v in m.groupdict().items() if v is not None})


def _build(sig: Signature, confidence: str, norm: Normalised, start: int, end: int,
           values: Dict[str, str], via: str = "", bare: bool = False) -> Explanation:
    fill = _Fill(sig.defaults)
    fill.update(values)
    if sig.derive:
        fill.update({k: v for k, v in sig.derive(dict(fill)).items() if v is not None})
    alts = [Alternative(a["cause"], a["check"], "likely" if i == 0 else "possible")
            for i, a in enumerate(sig.alternatives)]
    if alts and confidence == "exact":
        # the error is certain, its cause is not: the answer is as sure as its first cause
        confidence = "likely"
    if sig.alternatives and sig.alternatives[0].get("kind") == "workload":
        # its most frequent cause is the workload's (memory, a bad index), not the environment's
        confidence = "possible"
    if sig.mid_run and MID_RUN.search(norm.text) and not AT_INIT.search(norm.text):
        # its environment causes show at CUDA's initialisation; raised mid-run it is as often the
        # workload's
        confidence = max(confidence, sig.mid_run, key=CONFIDENCE.index)
    if sig.cpu_run and CPU_ASKED.search(norm.text):
        # the program was asked to run on the CPU: a probe finding no GPU is expected there, and
        # a failure after it is the program's use of CUDA anyway
        confidence = max(confidence, sig.cpu_run, key=CONFIDENCE.index)
    line, shown = norm.lines_of(start, end)
    return Explanation(
        id=sig.id, kind=sig.kind, confidence=confidence,
        title=_bare_title(sig.title, fill) if bare else sig.title.format_map(fill),
        matched=shown, line=line, cause=sig.cause.format_map(fill), fix=sig.fix.format_map(fill),
        components=list(sig.components), checks=[c.format_map(_shell_words(fill)) for c in sig.checks],
        values={k: str(v) for k, v in values.items()}, alternatives=alts, via=via,
        position=start, span=end - start, priority=sig.priority)


def _from_catalogue(norm: Normalised, table: Dict[str, Signature], found: Sequence[Explanation]) -> List[Explanation]:
    """One explanation per cause the catalogue's hits name that no wording found, from hits
    outside the text a wording matched (the wording knows that message better): the most
    confident hit, then the earliest."""
    known = {e.id for e in found}
    spans = [(e.position, e.position + e.span) for e in found]
    best: Dict[str, catalogue.Hit] = {}
    for h in catalogue.find(norm.text, norm.lower):
        if h.cause in known or any(a < h.end and h.start < b for a, b in spans):
            continue
        cur = best.get(h.cause)
        if cur is None or (CONFIDENCE.index(h.confidence), h.start) < (CONFIDENCE.index(cur.confidence), cur.start):
            best[h.cause] = h
    return [_build(table[h.cause], h.confidence, norm, h.start, h.end, dict(h.values), h.via)
            for h in best.values()]


KEYS_VIA = "no known message; the text's keys: "
GENERIC_VIA = "the words any program uses for this cause, not one program's own message (signatures.yaml `generic:`)"


def _from_generic(norm: Normalised, table: Sequence[Signature]) -> List[Explanation]:
    """The causes whose generic words (a build "compiled without CUDA", a driver "too old", a GPU
    below a "compute capability" a library asks for) the text holds, each `possible`: no one
    emitter's sentence, so they never hide or outrank one, and answer only where nothing did."""
    out = []
    for sig in table:
        for w in sig.generic:
            m = _search(w, norm)
            if m:
                out.append(_build(sig, "possible", norm, m.start(), m.end(),
                                  {k: v for k, v in m.groupdict().items() if v is not None}, GENERIC_VIA))
                break
    return out


def _from_keys(norm: Normalised, table: Dict[str, Signature], model: Optional["Model"]) -> List[Explanation]:
    """The causes the text's stable keys point to (keys.py), each `possible` only, saying which
    keys gave it and how much each weighs."""
    # lazy: importing keys.py costs ~2 ms CPU (-X importtime), paid only by texts nothing else names
    from envcheck.explain import keys
    out = []
    for g in keys.guess(norm.lower, model):
        sig = table.get(g.cause)
        if sig is None or sig.kind != "environment":
            continue
        shown = ", ".join(f"{k} {w:.2f}" for k, w in g.keys[:5])
        via = f"{KEYS_VIA}{shown} (keys.json: the causes of the labelled texts holding them)"
        out.append(_build(sig, "possible", norm, g.start, g.end, {}, via, bare=True))
    return out


def explain(text: str, key_model: Optional["Model"] = None) -> List[Explanation]:
    """Every known error found in `text`, most likely cause first; generic entries superseded by
    a specific one are dropped. [] = nothing known. When nothing found blames the environment
    and nothing found is sure of the workload, the text's keys (keys.py) may add `possible`
    environment causes; `key_model` replaces keys.json's (bench/explain_cv.py)."""
    if text is None or not text.strip():
        raise UsageError("explain: no error text given",
                         'pass the message, e.g. envcheck explain "no kernel image is available"')
    skipped = text.count("\n", 0, len(text) - MAX_TEXT) if len(text) > MAX_TEXT else 0
    norm = Normalised(text[-MAX_TEXT:], first_line=skipped + 1)
    found: List[Explanation] = []
    table = signatures()
    for sig in table:
        hit = _first_match(sig, norm)
        if hit:
            found.append(_explanation(sig, hit[0], hit[1], norm))
    found += _from_catalogue(norm, {s.id: s for s in table}, found)
    ids = {e.id for e in found}
    dropped = {s for sig in table if sig.id in ids for s in sig.supersedes}
    found = [e for e in found if e.id not in dropped]
    if not any(e.kind == "environment" or e.confidence != "possible" for e in found):
        found += _from_generic(norm, table)
    if not any(e.kind == "environment" or e.confidence != "possible" for e in found):
        found += _from_keys(norm, {s.id: s for s in table}, key_model)
    # a wording judged against real threads before a catalogue inference of the same standing, and
    # both before a guess from the keys alone (what the text says before what such texts had)
    found.sort(key=lambda e: (CONFIDENCE.index(e.confidence), e.via.startswith(KEYS_VIA),
                              -e.priority, bool(e.via), e.position))
    return found


def top_environment_cause(found: Sequence[Explanation]) -> Optional[Explanation]:
    """The first match that blames the environment (None: unknown, or the program's own fault)."""
    return next((e for e in found if e.kind == "environment"), None)


def signature_ids() -> Sequence[str]:
    return [s.id for s in signatures()]


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
        raise UsageError("explain: no error text given",
                         "pass it as an argument or pipe it: envcheck explain - < log.txt")
    return stdin_text
