#!/usr/bin/env python3
"""Write the list of explain's cause ids a held-out round's collectors label with (tools/heldout/
README.md): each id with its kind, title and cause text from envcheck/explain/signatures.yaml, and
nothing else (no wording, so no collector can see what the matcher reads).

    python3 tools/heldout/cause_ids.py OUT.txt
"""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def main(out: str) -> int:
    sigs = yaml.safe_load((ROOT / "envcheck" / "explain" / "signatures.yaml").read_text())
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    lines = [f"# envcheck explain's cause ids (id [kind] title / cause), from signatures.yaml at {commit}\n"]
    for s in sigs:
        cause = " ".join(str(s.get("cause", "")).split())
        lines.append(f"{s['id']}  [{s.get('kind') or 'environment'}]  {s.get('title', '')}\n    cause: {cause}\n")
    Path(out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}: {len(sigs)} ids")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
