"""The one way into a facts document: `load` validates it, whatever its source (the probe's
output, a saved file, `check`'s flags), and derives, once, the facts computed from others and
the matrix (the PCI GPUs named, the NCCL and the cuDNN that torch loads). Commands then read it
through facts/schema.py's accessors and facts/views.py's typed views, never by indexing it.
"""
from __future__ import annotations

from typing import Any, Optional

from envcheck.errors import UsageError
from envcheck.facts.schema import SCHEMA, Facts
from envcheck.matrix.load import Matrix
from envcheck.matrix.pci import annotate as annotate_pci_gpus
from envcheck.rules.cudnn import torch_cudnn
from envcheck.rules.nccl import torch_nccl

OBJECT_SECTIONS = ("driver", "cuda", "torch", "packages", "python", "cudnn", "gcc", "nccl", "os", "cuda_compat",
                   "privilege", "login", "port", "resources", "tools", "torch_import")
LIST_SECTIONS = ("gpus", "interfaces", "toolkit", "disk", "manifest", "owner", "pip_cudnn", "rcfile")
FIX = "give a file written by `envcheck audit --json` or the probe of this envcheck version"


def load(doc: Any, *, where: str, matrix: Optional[Matrix] = None) -> Facts:
    """`doc` validated (UsageError naming `where` and the section otherwise) and, with a matrix,
    its derived facts added."""
    facts = validate(doc, where)
    if matrix is not None:
        derive(facts, matrix)
    return facts


def validate(doc: Any, where: str, *, schema_required: bool = False) -> Facts:
    """A facts document of this schema whose sections have their types: a section of the wrong
    type would be read as absent, and "No findings" would follow. The probe's own output must
    say its schema (schema_required); a saved file or flags may predate the key."""
    if not isinstance(doc, dict):
        raise UsageError(f"{where}: not a facts document (a JSON object expected)", FIX)
    if ("schema" in doc or schema_required) and doc.get("schema") != SCHEMA:
        raise UsageError(f"{where}: facts schema {str(doc.get('schema'))[:20]!r}, this envcheck reads schema {SCHEMA}", FIX)
    for key in OBJECT_SECTIONS:
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise UsageError(f"{where}: {key!r} is {type(doc[key]).__name__}, not an object", FIX)
    for key in LIST_SECTIONS:
        if doc.get(key) is not None and not isinstance(doc[key], list):
            raise UsageError(f"{where}: {key!r} is {type(doc[key]).__name__}, not a list", FIX)
    return doc


def derive(facts: Facts, matrix: Matrix) -> None:
    """The derived facts, once, in place (reports and saved files show them): each PCI GPU named
    (matrix/pci.py), the NCCL torch loads (rules/nccl.py: torch_nccl), the cuDNN torch loads
    (rules/cudnn.py: torch_cudnn)."""
    annotate_pci_gpus(facts, matrix)
    derive_nccl(facts, matrix)
    derive_cudnn(facts, matrix)


def derive_nccl(facts: Facts, matrix: Matrix) -> None:
    """Replace the probe's `nccl` section with the NCCL torch loads (torch_nccl), where that has
    an answer: the same verdict with and without --deep."""
    nccl = torch_nccl(facts, matrix)
    if nccl is not None:
        facts["nccl"] = nccl


def derive_cudnn(facts: Facts, matrix: Matrix) -> None:
    """Record under cudnn.torch_loads which cuDNN torch loads (torch_cudnn), beside the system
    one (reports)."""
    loads = torch_cudnn(facts, matrix)
    if loads and isinstance(facts.get("cudnn"), dict):
        facts["cudnn"]["torch_loads"] = loads
