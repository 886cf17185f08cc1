#!/usr/bin/env python3
"""The Pythons each torch release has Linux x86_64 wheels for, read from a wheel index's file
names (their CPython tags: torch-2.5.1-cp313-cp313-manylinux1_x86_64.whl is Python 3.13), and
checked against compat_matrix.yaml's `python` lists: both bounds of python_has_torch_wheel come
from these tags, not from release notes.

Inputs, one file name per line (`#` lines are comments):
  - PyPI's files for torch (https://pypi.org/pypi/torch/json, "releases" -> filename): what a
    plain `pip install torch==X` sees; the matrix's release `python` list is its tags;
  - a PEP 503 page of PyTorch's own index (https://download.pytorch.org/whl/<tag>/torch/): the
    `+cuXYZ` wheels; where a variant's tags differ from the release's, the variant carries its own
    `python` list (and `python_source`).

    curl -fsS https://pypi.org/pypi/torch/json | python3 tools/torch_pythons.py --pypi-json - \\
        --excerpt tests/fixtures/wheel-index/pypi-torch-linux-x86_64.txt
    python3 tools/torch_pythons.py tests/fixtures/wheel-index/pypi-torch-linux-x86_64.txt   # check the matrix

tests/matrix/test_torch_pythons.py runs the check on the kept excerpt.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Set, Tuple

WHEEL = re.compile(r"^torch-(?P<version>[^-]+)(?:-\d[^-]*)?-cp(?P<py>\d)(?P<minor>\d+)-cp\d+m?u?-"
                   r"(?:manylinux[^-]*|linux)_x86_64\.whl$")


def tags(names: Iterable[str]) -> Dict[Tuple[str, str], Set[str]]:
    """{(release, local tag or ''): {"3.11", ...}} from wheel file names; free-threaded (cp313t),
    other platforms and non-wheels are left out."""
    out: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
    for raw in names:
        name = raw.strip().rsplit("/", 1)[-1].replace("%2B", "+")
        m = WHEEL.match(name)
        if not m:
            continue
        version, _, local = m.group("version").partition("+")
        out[(version, local)].add(f"{m.group('py')}.{m.group('minor')}")
    return dict(out)


def ordered(pys: Iterable[str]) -> List[str]:
    return sorted(pys, key=lambda p: tuple(int(x) for x in p.split(".")))


def pypi_names(doc: dict) -> List[str]:
    return [f["filename"] for files in (doc.get("releases") or {}).values() for f in files]


def mismatches(found: Dict[Tuple[str, str], Set[str]], matrix: dict) -> List[str]:
    """Releases on PyPI whose matrix `python` list is not exactly the index's tags."""
    out = []
    for rel in matrix["torch"]["releases"]:
        got = found.get((rel["version"], ""))
        if rel["pypi"] is None or got is None:
            continue
        if ordered(got) != list(rel["python"]):
            out.append(f"torch {rel['version']}: matrix {rel['python']}, PyPI wheels {ordered(got)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="?", help="a file of wheel file names (the kept excerpt)")
    ap.add_argument("--pypi-json", help="PyPI's JSON for torch ('-' for stdin)")
    ap.add_argument("--excerpt", help="write the Linux x86_64 wheel names found to this file")
    ap.add_argument("--matrix", default=str(Path(__file__).resolve().parents[1] / "compat_matrix.yaml"))
    args = ap.parse_args(argv)
    if args.pypi_json:
        text = sys.stdin.read() if args.pypi_json == "-" else Path(args.pypi_json).read_text()
        names = pypi_names(json.loads(text))
    elif args.names:
        names = [l for l in Path(args.names).read_text().splitlines() if l and not l.startswith("#")]
    else:
        ap.error("give a names file or --pypi-json")
    kept = sorted(n for n in names if WHEEL.match(n.rsplit("/", 1)[-1].replace("%2B", "+")))
    if args.excerpt:
        Path(args.excerpt).write_text("# torch Linux x86_64 wheel file names on PyPI (https://pypi.org/pypi/torch/json)\n"
                                      + "".join(n + "\n" for n in kept))
    import yaml
    bad = mismatches(tags(kept), yaml.safe_load(Path(args.matrix).read_text()))
    for line in bad:
        print(line)
    for (version, local), pys in sorted(tags(kept).items()):
        print(f"{version}{'+' + local if local else ''}: {' '.join(ordered(pys))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
