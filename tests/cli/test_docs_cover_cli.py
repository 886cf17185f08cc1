"""Every command and every long option the CLI accepts is documented: the command as
`envcheck NAME` in README.md or docs/*.md, each option in a document that shows that command.
Read from the live Typer app, so a new option without a doc line fails here."""
from __future__ import annotations

import re
from pathlib import Path

import typer

from envcheck.cli import app

REPO = Path(__file__).resolve().parents[2]


def _docs():
    return {p.relative_to(REPO).as_posix(): p.read_text()
            for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))] if p.exists()}


def _leaves(group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        if getattr(cmd, "commands", None):
            yield from _leaves(cmd, prefix + (name,))
        else:
            yield " ".join(prefix + (name,)), cmd


LEAVES = list(_leaves(typer.main.get_command(app)))


def test_the_cli_has_the_commands_the_issues_name():
    names = {n for n, _ in LEAVES}
    assert {"audit", "check", "install-cuda", "install-cudnn", "env", "nccl-test", "matrix validate"} <= names


def test_every_command_and_option_is_documented():
    docs = _docs()
    problems = []
    for name, cmd in LEAVES:
        shown_in = [d for d, text in docs.items() if re.search(r"envcheck " + re.escape(name) + r"(?![\w-])", text)]
        if not shown_in:
            problems.append(f"`envcheck {name}` appears in no doc")
            continue
        for opt in (o for p in cmd.params for o in p.opts if o.startswith("--") and o != "--help"):
            if not any(re.search(re.escape(opt) + r"(?![\w-])", docs[d]) for d in shown_in):
                problems.append(f"envcheck {name} {opt}: not in {', '.join(shown_in)}")
    assert problems == []
