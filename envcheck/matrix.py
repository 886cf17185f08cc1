"""Load and validate compat_matrix.yaml; queries on it. (Being built: issue 2.)

load_matrix(path=None) is the ONE way the matrix is read: the packaged copy
(envcheck/data/compat_matrix.yaml inside the wheel) or, in a checkout, the top-level file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Union

import yaml

from envcheck.errors import MatrixError


def default_matrix_path() -> Path:
    packaged = Path(__file__).parent / "data" / "compat_matrix.yaml"
    if packaged.exists():
        return packaged
    return Path(__file__).resolve().parent.parent / "compat_matrix.yaml"


class Matrix:
    def __init__(self, data: Dict[str, Any], path: str):
        self.data = data
        self.path = path


def load_matrix(path: Optional[Union[str, Path]] = None) -> Matrix:
    p = Path(path) if path else default_matrix_path()
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as e:
        raise MatrixError("(file)", f"cannot read: {e.strerror}", str(p)) from e
    except yaml.YAMLError as e:
        raise MatrixError("(file)", f"not valid YAML: {e}", str(p)) from e
    if not isinstance(data, dict):
        raise MatrixError("(top)", "must be a mapping", str(p))
    return Matrix(data, str(p))
