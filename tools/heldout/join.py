#!/usr/bin/env python3
"""Join a held-out round's parts into tests/fixtures/errors-heldout/heldoutN.yaml (tools/heldout/
README.md): the coordinator's header, then each part's header unchanged and its entries, less the
entries dropped at the join (the same incident or file entry quoted twice), each with its reason.

    python3 tools/heldout/join.py N ROUND_DIR HEADER.txt [DROPS.yaml]

ROUND_DIR holds heldoutN<part>.yaml for each part; DROPS.yaml maps an entry's source URL to why it
was dropped (the reasons are appended to the header). Prints the counts the header should state.
"""
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _blocks(lines):
    first = next(i for i, line in enumerate(lines) if line.startswith("- source:"))
    head, blocks, cur = lines[:first], [], []
    for line in lines[first:]:
        if line.startswith("- source:") and cur:
            blocks.append(cur)
            cur = []
        cur.append(line)
    return head, blocks + [cur]


def main(n: str, round_dir: str, header: str, drops_file: str = "") -> int:
    drops = yaml.safe_load(Path(drops_file).read_text()) if drops_file else {}
    parts = sorted(Path(round_dir).glob(f"heldout{n}?.yaml"))
    if not parts:
        sys.exit(f"no heldout{n}<part>.yaml in {round_dir}")
    text = Path(header).read_text(encoding="utf-8").rstrip("\n") + "\n"
    for src, why in drops.items():
        text += f"#   - dropped at the join: {src}: {why}\n"
    body, dropped = "", set()
    for part in parts:
        head, blocks = _blocks(part.read_text(encoding="utf-8").splitlines(keepends=True))
        body += "".join(head).rstrip("\n") + "\n"
        for b in blocks:
            src = b[0].split(":", 1)[1].strip()
            if src in drops:
                dropped.add(src)
                continue
            body += "".join(b).rstrip("\n") + "\n"
    if set(drops) - dropped:
        sys.exit(f"not in any part: {sorted(set(drops) - dropped)}")
    # a text whose first line starts with a tab: libyaml (what the tests read the rounds with)
    # wants its indentation stated; PyYAML's own parser reads both forms to the same text
    body = re.sub(r"^(  text: )\|\n(    \t)", r"\1|2\n\2", body, flags=re.M)
    items = yaml.safe_load(text + body)
    if yaml.load(text + body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) != items:  # noqa: S506
        sys.exit("libyaml and PyYAML read the joined round differently: mend the part files")
    sources = [i["source"] for i in items]
    if len(set(sources)) != len(sources):
        sys.exit("a source taken twice: drop one at the join")
    positives = [i for i in items if i["cause"] is not None]
    other = [i for i in positives
             if all(str(c).startswith("other:") for c in (i["cause"] if isinstance(i["cause"], list) else [i["cause"]]))]
    out = ROOT / "tests" / "fixtures" / "errors-heldout" / f"heldout{n}.yaml"
    out.write_text(text + body, encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}: {len(items)} texts, {len(positives)} positives "
          f"({len(other)} other:), {len(items) - len(positives)} negatives; {len(dropped)} dropped")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
