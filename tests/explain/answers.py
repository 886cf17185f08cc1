"""What `explain` answers for a text, in the shapes the emitter tests compare: one place for the
helpers every tests/explain/test_emitter_*.py and test_catalogue_families.py used to redefine."""
from envcheck.explain.match import explain, top_environment_cause


def answers(text: str) -> dict:
    """Each environment cause named, with its confidence, in explain's order."""
    return {e.id: e.confidence for e in explain(text) if e.kind == "environment"}


def confident(text: str) -> list:
    """The environment causes named with confidence exact or likely."""
    return [i for i, c in answers(text).items() if c in ("exact", "likely")]


def top_id(text: str):
    """The top environment cause's id, or None."""
    got = top_environment_cause(explain(text))
    return got.id if got else None


def top_with_confidence(text: str):
    """The top environment cause as (id, confidence), or None."""
    got = top_environment_cause(explain(text))
    return (got.id, got.confidence) if got else None


WHOLE = ("id", "confidence", "title", "values", "fix")


def whole(text: str, fields=WHOLE) -> dict:
    """The first environment cause as the emitter tests compare it: those fields of it, whole."""
    e = next(e for e in explain(text) if e.kind == "environment")
    return {f: getattr(e, f) for f in fields}


CAUSE = ("id", "confidence", "title", "cause", "fix")


def whole_cause(text: str) -> dict:
    """whole() with the cause's text: what the round tests from the eighteenth on compare."""
    return whole(text, CAUSE)


def whole_cause_and_values(text: str) -> dict:
    """whole_cause() and the values the wording read."""
    return whole(text, CAUSE + ("values",))
