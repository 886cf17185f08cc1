"""Environment rules: CUDA_HOME, PATH, LD_LIBRARY_PATH and the /usr/local/cuda symlink must point
at installed toolkits, and at the same one. Only for probe facts (they carry `env` and the list
of toolkits found); over SSH this is the non-interactive environment, which is what jobs get."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules.common import CUDA_DIR, major, mm, needs, src, toolkit_of, torch_build


def _looked(f: F.Facts) -> bool:
    return F.has(f, "cuda", "toolkits") and F.has(f, "env")


def _installed(f: F.Facts) -> str:
    paths = [F.text(t.get("path")) for t in F.cuda_toolkits(f) if F.text(t.get("path"))]
    return ", ".join(paths) if paths else "none"


def _cuda_entries(f: F.Facts) -> List[Tuple[str, str]]:
    """(where, path) for every CUDA-looking place the environment names."""
    env = F.env(f)
    out = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            out.append((var, env[var]))
    for var in ("PATH", "LD_LIBRARY_PATH"):
        for e in (env.get(var) or "").split(":"):
            # only where the probe looks for toolkits: the runfile's /usr/local/cuda[-X.Y];
            # a distribution's /usr/lib/cuda is not a toolkit the probe lists
            if e.startswith("/usr/local/cuda") and CUDA_DIR.search(e):
                out.append((var, e))
    return out


@needs("env")
def env_points_at_missing_toolkit(f: F.Facts, m: Matrix) -> List[Finding]:
    if not _looked(f):
        return []
    out = []
    for where, path in _cuda_entries(f):
        if toolkit_of(path, f):
            continue
        if where in ("CUDA_HOME", "CUDA_PATH"):
            out.append(Finding(ERROR, "env-missing-toolkit", "env",
                               f"{where}={path} is not an installed CUDA toolkit (installed: {_installed(f)}): "
                               f"extension builds fail with 'No such file or directory: '{path}/bin/nvcc''.",
                               f"export {where}=<one of the installed toolkits>, or install the toolkit there",
                               src(m, "install_guide")))
        else:
            out.append(Finding(WARNING, "env-missing-toolkit", "env",
                               f"{where} entry {path} is not inside an installed CUDA toolkit (installed: "
                               f"{_installed(f)}): nothing is found there ('nvcc: command not found', "
                               f"'libcudart.so: cannot open shared object file').",
                               f"remove {path} from {where} (or install that toolkit)", src(m, "install_guide")))
    link = F.cuda_symlink(f)
    if link.get("path") and link.get("target") and not toolkit_of(link["target"], f):
        out.append(Finding(ERROR, "env-missing-toolkit", "env",
                           f"{link['path']} points at {link['target']}, which is not an installed toolkit "
                           f"(installed: {_installed(f)}): everything using {link['path']} fails to find nvcc "
                           f"and the CUDA libraries.",
                           f"ln -sfn <installed toolkit> {link['path']}", src(m, "install_guide")))
    return out


@needs("env")
def env_toolkits_disagree(f: F.Facts, m: Matrix) -> List[Finding]:
    if not _looked(f):
        return []
    seen: Dict[str, List[str]] = {}

    def note(where: str, tk: Optional[dict]) -> None:
        version = F.text(tk.get("version")) if tk else None
        if version:
            seen.setdefault(mm(version), []).append(f"{where} {F.text(tk.get('path'))}")

    nv = F.nvcc(f)
    if nv.get("path"):
        note("nvcc on PATH:", toolkit_of(nv["path"], f))
    env = F.env(f)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            note(f"{var}:", toolkit_of(env[var], f))
    link = F.cuda_symlink(f)
    if link.get("path") and link.get("target"):
        note(f"{link['path']} ->", toolkit_of(link["target"], f))
    for e in (env.get("LD_LIBRARY_PATH") or "").split(":"):
        if e and CUDA_DIR.search(e):
            note("LD_LIBRARY_PATH:", toolkit_of(e, f))
    if len(seen) < 2:
        return []
    tb = torch_build(f, m)
    pick = tb.cuda if tb and tb.cuda in seen else sorted(seen, key=lambda v: len(seen[v]))[-1]
    root = next(F.text(t.get("path")) for t in F.cuda_toolkits(f)
                if F.text(t.get("version")) and mm(F.text(t.get("version"))) == pick)
    majors = {major(v) for v in seen}
    what = "; ".join(f"CUDA {v}: {', '.join(w)}" for v, w in sorted(seen.items()))
    return [Finding(ERROR if len(majors) > 1 else WARNING, "env-toolkits-disagree", "env",
                    f"The environment mixes CUDA toolkits ({what}): code compiled with one nvcc loads the other's "
                    f"libraries ('undefined symbol' or 'libcudart.so.X: cannot open shared object file'), and "
                    f"torch.utils.cpp_extension builds with CUDA_HOME's.",
                    f"use one toolkit everywhere: export CUDA_HOME={root} PATH={root}/bin:$PATH "
                    f"LD_LIBRARY_PATH={root}/lib64:$LD_LIBRARY_PATH (and remove the others)", src(m, "install_guide"))]


@needs("env")
def env_nvcc_not_on_path(f: F.Facts, m: Matrix) -> List[Finding]:
    if not _looked(f) or not F.has(f, "cuda", "nvcc") or F.nvcc(f).get("path"):
        return []
    tks = [F.text(t.get("path")) for t in F.cuda_toolkits(f) if F.text(t.get("path"))]
    if not tks:
        return []
    root = tks[-1]
    return [Finding(WARNING, "env-nvcc-not-on-path", "env",
                    f"CUDA is installed ({_installed(f)}) but nvcc is not on PATH in this environment: builds stop "
                    f"with 'nvcc: command not found' (over SSH, ~/.bashrc exports are often not applied).",
                    f"export PATH={root}/bin:$PATH CUDA_HOME={root}", src(m, "install_guide"))]


RULES = [env_points_at_missing_toolkit, env_toolkits_disagree, env_nvcc_not_on_path]
