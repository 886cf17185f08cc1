"""Every example of `envcheck explain` that the help and docs/doctor.md show is one that matches."""
from __future__ import annotations

import re

import typer

from envcheck.cli import app
from envcheck.explain.match import explain
from tests.conftest import REPO

# `envcheck explain "TEXT"` in the docs' prose and console blocks, and in the command's help
_EXAMPLE = re.compile(r'envcheck explain (?:--\S+ )*"([^"]+)"')


def _examples(text):
    return [t for t in _EXAMPLE.findall(text) if t not in ("ERROR TEXT", "TEXT")]


def test_every_example_in_docs_doctor_md_is_explained():
    examples = _examples((REPO / "docs" / "doctor.md").read_text())
    assert examples, "no examples found: the test would prove nothing"
    for text in examples:
        assert explain(text), text


def test_the_example_in_explain_help_is_explained():
    command = typer.main.get_command(app).commands["explain"]
    examples = _examples(command.help)
    assert examples, command.help
    for text in examples:
        assert explain(text), text


# the error texts the explain section quotes in its prose, with the cause it names for each
QUOTED = {
    "No CUDA GPUs are available": "no-driver-found",
    "DistStoreError: Socket Timeout": "store-timeout",
    "CUDNN_STATUS_NOT_INITIALIZED": "cudnn-not-initialized",
    "CUDA error: unknown error": "cuda-unknown-error",
    "an illegal memory access was encountered": "illegal-memory-access",
    "unhandled system error": "nccl-system-error",
    "CUBLAS_STATUS_NOT_INITIALIZED": "cublas-not-initialized",
}


def test_the_error_texts_quoted_in_the_explain_docs_are_explained_as_they_say():
    doc = (REPO / "docs" / "doctor.md").read_text()
    section = " ".join(doc[doc.index("## `envcheck explain"):doc.index("## `envcheck provision")].split())
    for text, cause in QUOTED.items():
        assert f"`{text}`" in section, text
        assert explain(text)[0].id == cause, text
