#!/usr/bin/env python3
"""Build envcheck/explain/catalogue.json: every error message the software that prints GPU
training errors can print, as templates (fixed text kept, run-time parts as `{}`), and every
error code (CUDA runtime and driver, cuDNN, cuBLAS, NVML, NCCL, errno) with its number and the
description its library prints; each with where it came from, and the causes
tools/explain_catalogue/causes.yaml assigns.

    python3 tools/explain_catalogue/gen.py --mirrors /work/.mirror     # everything
    python3 tools/explain_catalogue/gen.py --causes-only              # re-apply causes.yaml

Inputs (sources.yaml): git snapshots of the emitters' repositories at several tags (brought by
the search tool's `fetch`; never committed), the torch wheel on this machine, this machine's
CUDA headers and libraries (descriptions from each library's own *GetErrorString via ctypes),
HIPIFY's name tables, and manual.yaml: messages transcribed from sources that are too large to
fetch (pytorch/pytorch's C++), each with its repo, path and commit. From the same torch wheels,
torch_names.py writes envcheck/explain/torch_names.json: which torch modules and module names exist in
which of the releases read.

This script, extract.py and binaries.py are our own code and contain no fetched code: they
read string literals and enum tables out of the sources and write data.
"""
from __future__ import annotations

import argparse
import errno
import fnmatch
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = ROOT / "envcheck" / "explain" / "catalogue.json"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import extract as ex  # noqa: E402  (this directory's own module)
import torch_names  # noqa: E402  (this directory's own module)
from binaries import (ENUMS, describer, read_pip_cuda, read_pip_nvrtc, read_pynvml,  # noqa: E402
                      read_wheels, string_table)
from envcheck.explain.catalogue import apply_causes  # noqa: E402


class Catalogue:
    def __init__(self):
        self.sources: Dict[Tuple[str, str], List[str]] = {}
        self.order: List[Tuple[str, str]] = []
        self.templates: Dict[str, Dict] = {}
        self.codes: Dict[str, Dict] = {}

    def source(self, repo: str, path: str, ref: str) -> int:
        key = (repo, path)
        if key not in self.sources:
            self.sources[key] = []
            self.order.append(key)
        if ref not in self.sources[key]:
            self.sources[key].append(ref)
        return self.order.index(key)

    def add_template(self, lib: str, text: str, repo: str, path: str, ref: str) -> None:
        t = ex.tidy(text)
        if not ex.worth_keeping(t):
            return
        entry = self.templates.setdefault(t, {"lib": lib, "s": []})
        i = self.source(repo, path, ref)
        if i not in entry["s"]:
            entry["s"].append(i)

    def add_code(self, name: str, lib: str, num: Optional[int], text: Optional[str], repo: str,
                 path: str, ref: str, since: Optional[str] = None, alt: Optional[str] = None,
                 aka: Optional[str] = None) -> None:
        e = self.codes.setdefault(name, {"lib": lib, "num": None, "text": None, "s": []})
        if aka and aka not in e.setdefault("aka", []):
            e["aka"].append(aka)      # the name a wrapper raises it under
        if alt and alt not in e.setdefault("alt", []):
            e["alt"].append(alt)      # what another release printed for the same code
        if num is not None and e["num"] is None:
            e["num"] = num
        if text and not e["text"]:
            e["text"] = text
        if since and "since" not in e:
            e["since"] = since
        i = self.source(repo, path, ref)
        if i not in e["s"]:
            e["s"].append(i)


# --- git snapshots ---------------------------------------------------------------------------

def _git(repo_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo_dir), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def _tree(repo_dir: Path, ref: str, globs: Iterable[str]) -> List[str]:
    names = _git(repo_dir, "ls-tree", "-r", "--name-only", ref).splitlines()
    return [n for n in names if any(fnmatch.fnmatchcase(n, g) and n.count("/") == g.count("/") for g in globs)]


def _messages(spec: Dict, path: str, src: str) -> Iterable[Tuple[int, str]]:
    if path.endswith(".py") and spec.get("python"):
        yield from ex.py_messages(src, spec.get("py_calls", ()))
    elif path.endswith(".go") and spec.get("go"):
        yield from ex.go_messages(src)
    elif re.search(r"\.(cc|cpp|cu|h|hpp|cuh|c)$", path):
        if spec.get("c_printf"):
            yield from ex.c_printf_messages(src, spec["c_printf"])
        if spec.get("c_concat"):
            yield from ex.c_concat_messages(src, spec["c_concat"])


def read_snapshots(cat: Catalogue, specs: List[Dict], mirrors: Path) -> None:
    for spec in specs:
        repo_dir = mirrors / spec["repo"].replace("/", "+") / "repo"
        if not repo_dir.is_dir():
            print(f"gen: no snapshot of {spec['repo']} under {mirrors}: skipped", file=sys.stderr)
            continue
        for ref in spec["refs"]:
            try:
                paths = _tree(repo_dir, ref, spec["paths"])
            except subprocess.CalledProcessError:
                print(f"gen: {spec['repo']} has no ref {ref}: skipped", file=sys.stderr)
                continue
            for path in paths:
                src = _git(repo_dir, "show", f"{ref}:{path}")
                for _line, t in _messages(spec, path, src):
                    cat.add_template(spec["lib"], t, spec["repo"], path, ref)


def nccl_codes(cat: Catalogue, spec: Dict, mirrors: Path) -> None:
    """ncclResult_t names and numbers (nccl.h) and what ncclGetErrorString prints for each."""
    repo_dir = mirrors / spec["repo"].replace("/", "+") / "repo"
    for ref in spec["refs"]:
        header = next(p for p in ("src/nccl.h.in", "src/nccl.h") if p in _tree(repo_dir, ref, ["src/*"]))
        enum = dict(re.findall(r"\b(nccl[A-Z]\w+)\s*=\s*(\d+)", _git(repo_dir, "show", f"{ref}:{header}")))
        init = _git(repo_dir, "show", f"{ref}:src/init.cc")
        body = init[init.index("ncclGetErrorString(ncclResult_t"):]
        body = body[:body.index("\n}")]
        for name, text in re.findall(r"case (nccl\w+)\s*:\s*return \"([^\"]*)\"", body):
            if name == "ncclSuccess":
                continue
            num = int(enum[name]) if name in enum else None
            cat.add_code(name, "NCCL", num, text, spec["repo"], "src/init.cc", ref)
            cat.add_code(name, "NCCL", num, None, spec["repo"], header, ref)


# --- this machine's CUDA headers and libraries -----------------------------------------------

def _deb_version(package: str) -> str:
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], check=True,
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def read_local(cat: Catalogue, spec: Dict) -> None:
    for key, (pattern, lib) in ENUMS.items():
        s = spec[key]
        if not os.path.exists(s["header"]):
            print(f"gen: {s['header']} missing (install {s['package']}): skipped", file=sys.stderr)
            continue
        hdr_src = ("debian:" + s["package"], s["header"], _deb_version(s["package"]))
        lib_src = ("debian:" + s["libpackage"], f"{s['lib']} {s['func']}()", _deb_version(s["libpackage"]))
        describe = describer(s["lib"], s["func"])
        for name, num in re.findall(pattern, Path(s["header"]).read_text(errors="replace")):
            if name.endswith(("SUCCESS", "Success")) or name.startswith("cudaErrorApiFailureBase"):
                continue
            text = describe(int(num)) if describe else None
            if text and text.lower().startswith(("unrecognized error code", "unknown nvml error")):
                text = None
            if text:    # the library that prints the description first: it is what a match shows
                cat.add_code(name, lib, int(num), text, *lib_src)
            cat.add_code(name, lib, int(num), None, *hdr_src)
    for b in spec.get("binaries", ()):
        if not os.path.exists(b["path"]):
            print(f"gen: {b['path']} missing (install {b['package']}): skipped", file=sys.stderr)
            continue
        keep = re.compile(b["keep"])
        for s in string_table(Path(b["path"]).read_bytes(), 12):
            if keep.search(s) and " " in s:
                cat.add_template(b["lib"], ex.printf_template(s), "debian:" + b["package"],
                                 b["path"] + " (string table)", _deb_version(b["package"]))
    hc = spec["host_config"]
    if os.path.exists(hc["header"]):
        for fmt in re.findall(r"#error\s+--\s*(.+)", Path(hc["header"]).read_text()):
            # the versions in these messages change with each toolkit: wildcards
            fmt = re.sub(r"\d+(?:\.\d+)*(?:\.x)?", "{}", fmt.strip())
            cat.add_template("CUDA toolkit (nvcc)", fmt, "debian:" + hc["package"], hc["header"],
                             _deb_version(hc["package"]))


def read_hipify(cat: Catalogue, spec: Dict, mirrors: Path) -> None:
    """Names and numbers of every CUDA runtime/driver error and every cuDNN/cuBLAS status, with
    the release each appeared in, from HIPIFY's tables."""
    repo_dir = mirrors / spec["repo"].replace("/", "+") / "repo"
    if not repo_dir.is_dir():
        print(f"gen: no snapshot of {spec['repo']}: skipped", file=sys.stderr)
        return
    pats = {"runtime": (r'\{"(cudaError\w+)",.*?\}\},\s*//\s*(\d+)', "CUDA runtime"),
            "driver": (r'\{"(CUDA_ERROR_\w+)",.*?\}\},\s*//\s*(\d+)', "CUDA driver"),
            "cudnn": (r'\{"(CUDNN_STATUS_\w+)",\s*\{"HIP', "cuDNN"),
            "cublas": (r'\{"(CUBLAS_STATUS_\w+)",\s*\{"HIP', "cuBLAS")}
    for key, (pat, lib) in pats.items():
        src = _git(repo_dir, "show", f"{spec['ref']}:{spec[key]}")
        since = dict(re.findall(r'\{"(\w+)",\s*\{(CUDA_\d+|CUDNN_\d+),', src))
        for m in re.finditer(pat, src):
            name = m.group(1)
            if name.endswith("SUCCESS") or name == "cudaSuccess" or name in ("CUDNN_STATUS_FULL_ERROR_CODE",
                                                                             "CUDNN_STATUS_CATEGORY",
                                                                             "CUDNN_STATUS_SPECIFIC_ERROR"):
                continue
            num = int(m.group(2)) if m.lastindex and m.lastindex >= 2 else None
            cat.add_code(name, lib, num, None, spec["repo"], spec[key], spec["ref"], _since(since.get(name)))


def _since(tag: Optional[str]) -> Optional[str]:
    """HIPIFY's CUDA_121 / CUDNN_801 -> 'CUDA 12.1' / 'cuDNN 8.0.1' (None for 'always')."""
    if not tag or tag.endswith("_0") or tag.endswith("_10") and tag.startswith("CUDNN"):
        return None
    lib, digits = tag.split("_")
    if lib == "CUDA":
        return f"CUDA {digits[:-1]}.{digits[-1]}"
    return f"cuDNN {'.'.join(digits)}"


def read_errno(cat: Catalogue) -> None:
    for num, name in sorted(errno.errorcode.items()):
        cat.add_code(name, "errno", num, os.strerror(num), "glibc", "strerror() via Python os.strerror",
                     _deb_version("libc6"))


def read_manual(cat: Catalogue, path: Path) -> None:
    for group in yaml.safe_load(path.read_text()):
        src = (group["repo"], group["path"], group["ref"])
        for t in group["templates"]:
            cat.add_template(group["lib"], t, *src)
        for c in group.get("codes", ()):
            cat.add_code(c["name"], group["lib"], c.get("num"), c.get("text"), *src, alt=c.get("alt"))


# --- output ----------------------------------------------------------------------------------

def write(cat: Catalogue, out: Path, causes: Dict) -> Dict:
    templates = [{"t": t, **e} for t, e in sorted(cat.templates.items())]
    codes = [{"name": n, **e} for n, e in sorted(cat.codes.items())]
    doc = {"about": "generated by tools/explain_catalogue/gen.py from tools/explain_catalogue/sources.yaml, "
                    "manual.yaml and causes.yaml; do not edit",
           "sources": [[repo, path, refs] for (repo, path), refs in
                       ((k, cat.sources[k]) for k in cat.order)],
           "templates": templates, "codes": codes}
    return save(apply_causes(doc, causes), out)


def save(doc: Dict, out: Path) -> Dict:
    out.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=False) + "\n")
    n_t, n_c = len(doc["templates"]), len(doc["codes"])
    caused = sum(1 for t in doc["templates"] if t.get("c")) + sum(1 for c in doc["codes"] if c.get("c"))
    print(f"gen: {out.relative_to(ROOT)}: {n_t} templates, {n_c} codes, {caused} with causes, "
          f"{len(doc['sources'])} source files, {out.stat().st_size // 1024} KiB")
    return doc


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--wheels", type=Path, default=Path("/work/.cache/explain-sources"),
                    help="where the release wheels sources.yaml names were downloaded to")
    ap.add_argument("--causes-only", action="store_true", help="re-apply causes.yaml to catalogue.json")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    causes = yaml.safe_load((HERE / "causes.yaml").read_text())
    if args.causes_only:
        save(apply_causes(json.loads(args.out.read_text()), causes), args.out)
        return 0
    spec = yaml.safe_load((HERE / "sources.yaml").read_text())
    cat = Catalogue()
    read_local(cat, spec["local"])
    read_pip_cuda(cat, spec.get("pip_cuda", []), args.wheels)
    read_pip_nvrtc(cat, spec.get("pip_nvrtc", []), args.wheels)
    read_pynvml(cat, spec["pynvml"])
    read_hipify(cat, spec["hipify"], args.mirrors)
    nccl_codes(cat, spec["nccl_codes"], args.mirrors)
    read_errno(cat)
    read_snapshots(cat, spec["snapshots"], args.mirrors)
    read_wheels(cat, spec["wheels"], args.wheels)
    torch_names.from_sources(spec["wheels"], args.wheels, OUT.with_name("torch_names.json"))
    read_manual(cat, HERE / "manual.yaml")
    write(cat, args.out, causes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
