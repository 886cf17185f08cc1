"""Out-of-sample recall of `explain` by scope (issue 21): is the scored-once figure the same on the
texts envcheck's users paste (PyTorch on NVIDIA GPUs) as on the rest of what the collectors found
(Lua Torch, early TensorFlow, Caffe, miners, renderers, scientific codes)? Each round from heldout4
is replayed at the commit it was first scored at (bench/_replay.py, as bench/explain_cv.py's
replay, without the key fallback: explain as it answered then), and each text is put in a scope by
its own words, never by its label:

  pytorch   the text names PyTorch: `import torch`, `torch.` attributes, torch's own paths and
            headers (site-packages/torch, torch/lib, torch/csrc, torch/extension.h, libtorch, c10,
            c10d, conda-bld/pytorch_*, its shared-memory names /torch_PID_N), torchvision/torchaudio,
            torchrun/torch.distributed, a torch version requirement, torch's own "Torch not
            compiled with CUDA enabled", "PyTorch"; Lua Torch's texts (.lua frames, torch7, cutorch,
            cunn) are not, unless they also name PyTorch's Python side
  other     everything else

Per round and in total: positives hit / positives in each scope (a hit is test_heldout.py's: the
first environment cause is the thread's), and negatives answered with a confident (exact/likely)
environment cause. Then the total per area letter (heldout5.yaml's header: A driver, B shared
libraries, C architecture, D extension builds, E NCCL/distributed, F containers, G cuDNN/cuBLAS,
H GPU state, W Windows). Figures only; nothing is judged.

    python bench/explain_scope.py [--quick]     (--quick: the last round only, what CI runs)
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tools" / "explain_catalogue"))
# (imports this checkout's envcheck; the child drops it for the old tree's: _replay.enter_old_tree)
from gen_keys import read_yaml  # noqa: E402

PYTORCH = re.compile(r"\bimport torch\b|\bfrom torch\b|\btorch\.[a-z_]|site-packages[\\/]torch\b|"
                     r"\btorch[\\/](?:lib|csrc|utils|include|nn|cuda|distributed|extension\.h)\b|\blibtorch|"
                     r"\bc10d?[\\/:]|\btorch(?:vision|audio|run)\b|\bpytorch|torch not compiled with cuda|"
                     r"\btorch ?(?:[<>=]=?|~=)\s*\d|[\\/]torch_\d+_\d+", re.I)


LUA = re.compile(r"\.lua\b|\bluajit\b|\btorch7\b|\bcutorch\b|\bcunn\b|\bluarocks\b", re.I)
PYTHON = re.compile(r"\bimport torch\b|\bfrom torch\b|site-packages[\\/]torch\b|\bpytorch", re.I)


def scope(text: str) -> str:
    """Lua Torch's texts (torch.CudaTensor, .lua frames, cutorch) are not PyTorch's, unless the text
    also names PyTorch's Python side."""
    if LUA.search(text) and not PYTHON.search(text):
        return "other"
    return "pytorch" if PYTORCH.search(text) else "other"


def child(old: Path, name: str, earlier=()) -> None:
    """In the old tree: one line per text, `pos|neg hit conf area scope`."""
    from envcheck.explain.match import explain, top_environment_cause
    for item in read_yaml(old / "tests/fixtures/errors-heldout" / name):
        found = explain(item["text"])
        want = item["cause"] if isinstance(item["cause"], list) else [item["cause"]]
        top = top_environment_cause(found)
        hit = int(item["cause"] is not None and bool(top and top.id in want))
        conf = int(any(e.kind == "environment" and e.confidence in ("exact", "likely") for e in found))
        area = str(item.get("area") or "-").split()[0][:1] if item["cause"] is not None else "-"
        print("neg" if item["cause"] is None else "pos", hit, conf, area, scope(item["text"]))


def main(quick: bool) -> int:
    from _replay import REPLAY, replays
    from gen_keys import ROUNDS
    rounds = list(REPLAY)[-1 if quick else 0:]
    tot = defaultdict(lambda: [0, 0])          # (scope or area, pos|neg) -> [hit or conf, n]
    print(f"{'round':<10} {'pytorch hit/pos':>16} {'other hit/pos':>14} {'pytorch neg conf':>17} "
          f"{'other neg conf':>15}")
    for name, _, out in replays(__file__, rounds, REPLAY, ROUNDS):
        per = defaultdict(lambda: [0, 0])
        for line in out.split("\n"):
            if not line.strip():
                continue
            kind, hit, conf, area, sc = line.split()
            got = int(hit) if kind == "pos" else int(conf)
            for key in ((sc, kind), ("area " + area, kind)):
                per[key][0] += got
                per[key][1] += 1
        for key, (a, b) in per.items():
            tot[key][0] += a
            tot[key][1] += b
        cells = [per[("pytorch", "pos")], per[("other", "pos")], per[("pytorch", "neg")], per[("other", "neg")]]
        print(f"{name[:-5]:<10} " + " ".join(f"{a:>{w - 4}}/{b:<3}" for (a, b), w in zip(cells, (16, 14, 17, 15))))

    def pct(key):
        a, b = tot[key]
        return f"{a}/{b} = {a / b:.1%}" if b else "0/0"
    print(f"\ntotal, scored once (replayed): PyTorch texts {pct(('pytorch', 'pos'))}, others "
          f"{pct(('other', 'pos'))}; negatives confident: PyTorch {pct(('pytorch', 'neg'))}, "
          f"others {pct(('other', 'neg'))}")
    for key in sorted(k for k in tot if k[0].startswith("area ") and k[1] == "pos"):
        print(f"  {key[0]}: {pct(key)}")
    return 0


if __name__ == "__main__":
    from _replay import bench_main
    bench_main(main, child)
