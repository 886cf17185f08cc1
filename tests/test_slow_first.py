"""tests/conftest.py's SLOW_FIRST (the modules handed to xdist's workers first) names modules that
exist, each once: a renamed module would silently fall back to collection order."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_FIRST

REPO = Path(__file__).resolve().parent.parent


def test_every_module_handed_out_first_exists_and_is_named_once():
    assert [p for p in SLOW_FIRST if not (REPO / p).is_file()] == []
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
