"""What every rule test judges against: the real compat_matrix.yaml, loaded once per module (a
test that needs other data edits a copy)."""
from __future__ import annotations

import pytest

from envcheck.matrix.load import load_matrix
from tests.conftest import REPO


@pytest.fixture(scope="module")
def m():
    return load_matrix(REPO / "compat_matrix.yaml")
