"""envcheck/rules/common.py, the helpers the rule modules share, each answer compared whole. The
expected values come from the docstrings (which torch build a host has, resolving a plain
`torch==X` to the variant PyPI served; the exact pip command per era; the toolkit that contains a
path, through the /usr/local/cuda symlink and Debian's packaged toolkit in /usr; what each named
fact is and the flag that gives it), docs/check-and-matrix.md and compat_matrix.yaml (torch
releases' `pypi`, variants and torchvision), not from what the code printed."""
from __future__ import annotations

import copy

import pytest

from envcheck.model import Skipped
from envcheck.rules.common import (TorchBuild, gpu_ccs, gpu_skip, installed_gcc, installed_toolkit, missing, needs,
                                   needs_text, norm_path, src, toolkit_of, toolkit_step, torch_build, torch_install_cmd,
                                   variant_for_cuda)

IDX = "https://download.pytorch.org/whl"


def host(torch=None, local=None, cuda=None, cuda_source=None, package=None, deep_cuda=None, **sections):
    """Facts with torch's own section (version, local tag, CUDA and where it came from), the torch
    package's version and --deep's torch CUDA."""
    f = dict({"schema": 1, "origin": "probe", "hostname": "n1"}, **sections)
    if torch or local or cuda:
        f["torch"] = {"version": torch, "local": local, "cuda": cuda, "cuda_source": cuda_source}
    if package:
        f["packages"] = {"torch": {"version": package}}
    if deep_cuda:
        f["deep"] = {"torch_cuda": deep_cuda}
    return f


# ---------------------------------------------------------------- src, TorchBuild
def test_src_is_the_named_source_or_nothing(m):
    assert src(m, "install_guide") == m.data["sources"]["install_guide"] != ""
    assert src(m, "no_such_source") == ""
    bare = type(m)(dict(copy.deepcopy(m.data), sources=None), m.path)
    assert src(bare, "install_guide") == ""


def test_a_build_s_label_and_pypi_note():
    assert TorchBuild("2.4.1", "cu121", "12.1", "local-tag", None).label() == "2.4.1+cu121"
    assert TorchBuild("2.4.1", "cpu", None, "cpu", None).label() == "2.4.1+cpu"
    assert TorchBuild("2.4.1", None, None, "unknown", None).label() == "2.4.1"
    pypi = TorchBuild("2.4.1", "cu121", "12.1", "pypi-default", None)
    assert pypi.label() == "2.4.1"
    assert pypi.pypi_note() == " (a plain torch==2.4.1 from PyPI is the cu121 build)"
    assert TorchBuild("2.4.1", "cu121", "12.1", "deep", None).pypi_note() == ""


# ---------------------------------------------------------------- torch_build
@pytest.mark.parametrize("facts,want", [
    # the local tag, with torch's own CUDA where the section has it
    (host(package="2.4.1+cu121"), ("2.4.1", "cu121", "12.1", "local-tag")),
    (host("2.4.1", "cu121", "12.1.105", package="2.4.1+cu121"), ("2.4.1", "cu121", "12.1", "local-tag")),
    # the package metadata carries the tag the torch section dropped, in any case
    (host("2.4.1", package="2.4.1+CU118"), ("2.4.1", "cu118", "11.8", "local-tag")),
    (host("2.4.1+cpu"), ("2.4.1", "cpu", None, "cpu")),
    (host("2.4.1", "cu118"), ("2.4.1", "cu118", "11.8", "local-tag")),   # the section's own tag, no package
    # no tag: the CUDA torch reports, and where it came from
    (host("2.4.1", cuda="12.4", cuda_source="flag"), ("2.4.1", "cu124", "12.4", "flag")),
    (host("2.4.1", cuda="11.8.89"), ("2.4.1", "cu118", "11.8", "deep")),
    (host(package="2.4.1", deep_cuda="12.4"), ("2.4.1", "cu124", "12.4", "deep")),
    # nothing read from the host: the variant plain PyPI serves (2.4.1: cu121)
    (host(package="2.4.1"), ("2.4.1", "cu121", "12.1", "pypi-default")),
    (host("2.4.1", cuda="twelve"), ("2.4.1", "cu121", "12.1", "pypi-default")),
    (host(package="2.4.1+cuda"), ("2.4.1", None, None, "unknown")),  # not a cuXYZ tag, and no PyPI wheel
    # a pre-release, a source or vendor build: no PyPI wheel
    (host(package="2.5.0rc1"), ("2.5.0", None, None, "unknown")),
    (host("2.1.0a0", package="2.1.0a0+git32f93b1"), ("2.1.0", None, None, "unknown")),
    (host(package="9.9.0"), ("9.9.0", None, None, "unknown")),     # a release the matrix lacks
])
def test_which_torch_build_a_host_has(m, facts, want):
    tb = torch_build(facts, m)
    assert (tb.version, tb.tag, tb.cuda, tb.how) == want
    assert tb.record == m.torch(want[0])


def test_no_torch_or_an_unreadable_one_is_no_build(m):
    assert torch_build(host(), m) is None
    assert torch_build(host(package="latest"), m) is None


# ---------------------------------------------------------------- torch_install_cmd
@pytest.mark.parametrize("version,tag,cmd", [
    ("2.4.1", "cu121", "pip install torch==2.4.1 torchvision==0.19.1"),                 # plain PyPI's variant
    ("1.1.0", "cu90", "pip install torch==1.1.0 torchvision==0.3.0"),
    ("1.1.0", "cu100", f"pip install --no-index torch==1.1.0 torchvision==0.3.0 -f {IDX}/cu100/torch_stable.html"),
    ("1.2.0", "cu92", f"pip install torch==1.2.0+cu92 torchvision==0.4.0+cu92 -f {IDX}/torch_stable.html"),
    ("1.10.0", "cu113", f"pip install torch==1.10.0+cu113 torchvision==0.11.1+cu113 -f {IDX}/torch_stable.html"),
    ("1.11.0", "cu113", f"pip install torch==1.11.0+cu113 torchvision==0.12.0+cu113 --extra-index-url {IDX}/cu113"),
    ("1.13.1", "cu116", f"pip install torch==1.13.1+cu116 torchvision==0.14.1+cu116 --extra-index-url {IDX}/cu116"),
    ("2.0.0", "cu118", f"pip install torch==2.0.0 torchvision==0.15.1 --index-url {IDX}/cu118"),
    ("2.4.1", "cu118", f"pip install torch==2.4.1 torchvision==0.19.1 --index-url {IDX}/cu118"),
    ("9.9.0", "cu130", f"pip install torch==9.9.0 --index-url {IDX}/cu130"),          # no record: no torchvision
    ("1.5.2", "cu101", f"pip install torch==1.5.2+cu101 -f {IDX}/torch_stable.html"),
    # a version written with fewer parts is that release, in that release's era
    ("1.2", "cu92", f"pip install torch==1.2+cu92 torchvision==0.4.0+cu92 -f {IDX}/torch_stable.html"),
    ("1.11", "cu113", f"pip install torch==1.11+cu113 torchvision==0.12.0+cu113 --extra-index-url {IDX}/cu113"),
    ("2", "cu118", f"pip install torch==2 torchvision==0.15.1 --index-url {IDX}/cu118"),
])
def test_the_pip_command_for_each_era(m, version, tag, cmd):
    assert torch_install_cmd(m, version, tag) == cmd
    assert torch_install_cmd(m, version, tag, installed="0.4.1") == cmd   # another release installed


@pytest.mark.parametrize("version,tag,installed,cmd", [
    # the same release installed: a pin without +tag is 'Requirement already satisfied'
    ("2.4.1", "cu118", "2.4.1+cu121", f"pip install --force-reinstall torch==2.4.1 torchvision==0.19.1 "
                                      f"--index-url {IDX}/cu118"),
    ("2.4.1", "cu121", "2.4.1+cu118", "pip install --force-reinstall torch==2.4.1 torchvision==0.19.1"),
    ("1.1.0", "cu100", "1.1.0", f"pip install --force-reinstall --no-index torch==1.1.0 torchvision==0.3.0 "
                                f"-f {IDX}/cu100/torch_stable.html"),
    # a pin with +tag installs it anyway
    ("1.13.1", "cu116", "1.13.1+cu117", f"pip install torch==1.13.1+cu116 torchvision==0.14.1+cu116 "
                                        f"--extra-index-url {IDX}/cu116"),
    # what is installed cannot be read: no force
    ("2.4.1", "cu118", "2.4.x", f"pip install torch==2.4.1 torchvision==0.19.1 --index-url {IDX}/cu118"),
    ("2.4.1", "cu118", "", f"pip install torch==2.4.1 torchvision==0.19.1 --index-url {IDX}/cu118"),
])
def test_reinstalling_another_build_of_the_installed_release_is_forced(m, version, tag, installed, cmd):
    assert torch_install_cmd(m, version, tag, installed=installed) == cmd


# ---------------------------------------------------------------- variant_for_cuda
@pytest.mark.parametrize("version,cuda,tag", [
    ("2.4.1", "12.4.1", "cu124"),     # the same major.minor
    ("2.4.1", "12.1.1", "cu121"),     # ... though a newer variant of the major follows it
    ("1.10.0", "11.1", "cu111"),
    ("2.4.1", "11.8", "cu118"),
    ("2.4.1", "12.6.0", "cu124"),     # else the newest of the same major (cu121, cu124)
    ("2.4.1", "12.0", "cu124"),
    ("1.10.0", "11.4", "cu113"),      # cu111, cu113
    ("1.10.0", "10.1", "cu102"),
    ("2.4.1", "10.2", None),          # no variant of that major
    ("9.9.0", "12.4", None),          # no such release
])
def test_the_variant_built_for_a_cuda(m, version, cuda, tag):
    assert variant_for_cuda(m, version, cuda) == tag


# ---------------------------------------------------------------- gpu_ccs
def gpus(*pairs):
    return {"gpus": [{"name": n, "compute_capability": cc} for n, cc in pairs]}


@pytest.mark.parametrize("listed,want", [
    # the driver's compute capability first, in any spelling it takes
    ([("NVIDIA Mystery", "8.0")], [("NVIDIA Mystery", (8, 0))]),
    ([("Tesla V100-SXM2-16GB", "8.9")], [("Tesla V100-SXM2-16GB", (8, 9))]),
    ([("NVIDIA Mystery", "sm_90a")], [("NVIDIA Mystery", (9, 0))]),
    # else the name through the matrix (an unreadable capability counts as none)
    ([("Tesla V100-SXM2-16GB", None)], [("Tesla V100-SXM2-16GB", (7, 0))]),
    ([("Tesla V100-SXM2-16GB", "seven")], [("Tesla V100-SXM2-16GB", (7, 0))]),
    ([("NVIDIA Mystery", None)], [("NVIDIA Mystery", None)]),
    # no name: shown by its architecture, or as "GPU"
    ([(None, "8.6"), ("", None)], [("sm_86", (8, 6)), ("GPU", None)]),
    # each distinct model once, in the driver's order
    ([("A100-SXM4-40GB", "8.0"), ("Tesla V100-SXM2-16GB", None), ("A100-SXM4-40GB", "8.0"),
      ("Tesla V100-SXM2-16GB", "7.0")], [("A100-SXM4-40GB", (8, 0)), ("Tesla V100-SXM2-16GB", (7, 0))]),
    ([], []),
])
def test_gpu_ccs_one_entry_per_distinct_model(m, listed, want):
    assert gpu_ccs(gpus(*listed), m) == want


def test_gpu_ccs_without_a_driver_list_or_a_bus_is_empty(m):
    assert gpu_ccs({}, m) == []


# ---------------------------------------------------------------- gpu_skip
def test_a_gpu_a_check_could_not_judge():
    assert gpu_skip("gpu_vs_torch", "gpu", "Mystery GPU", None) == Skipped(
        "gpu_vs_torch", "gpu", "compute capability of 'Mystery GPU' unknown",
        "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")
    assert gpu_skip("gpu_vs_toolkit", "cuda", "sm_97", (9, 7)) == Skipped(
        "gpu_vs_toolkit", "cuda", "architecture 9.7 not in the matrix", "update envcheck (or --matrix FILE)")


# ---------------------------------------------------------------- paths and toolkits
def cuda(*toolkits, link=None):
    return {"cuda": {"toolkits": list(toolkits), "symlink": {"path": "/usr/local/cuda", "target": link}}}


RUNFILE_118 = {"path": "/usr/local/cuda-11.8", "version": "11.8.0"}
RUNFILE_124 = {"path": "/usr/local/cuda-12.4/", "version": "12.4.1"}
DEBIAN = {"path": "/usr", "version": "12.0.140", "layout": "distro", "include": "/usr/include",
          "lib": "/usr/lib/x86_64-linux-gnu"}


@pytest.mark.parametrize("path,want", [
    ("/usr/local/cuda/bin", "/usr/local/cuda-12.4/bin"),          # through the symlink
    ("/usr/local/cuda", "/usr/local/cuda-12.4"),
    ("/usr/local/cuda/", "/usr/local/cuda-12.4"),
    (" /usr/local/cuda//lib64/ ", "/usr/local/cuda-12.4/lib64"),
    ("/usr/local/cuda-11.8/bin/../lib64", "/usr/local/cuda-11.8/lib64"),
    ("/usr/local/cudatools", "/usr/local/cudatools"),               # not under the link
    ("", ""),
    ("   ", ""),
])
def test_norm_path_resolves_the_cuda_symlink(path, want):
    assert norm_path(path, cuda(link="/usr/local/cuda-12.4")) == want


def test_norm_path_takes_a_symlink_path_written_with_a_trailing_slash():
    # a hand-written facts file may say "/usr/local/cuda/": what lies under it is still resolved
    f = {"cuda": {"symlink": {"path": "/usr/local/cuda/", "target": "/usr/local/cuda-12.4"}}}
    assert norm_path("/usr/local/cuda/bin/nvcc", f) == "/usr/local/cuda-12.4/bin/nvcc"


def test_norm_path_without_a_symlink_only_normalises():
    assert norm_path("/usr/local/cuda/bin/", cuda()) == "/usr/local/cuda/bin"
    assert norm_path("/usr/local/cuda/bin/", {}) == "/usr/local/cuda/bin"


@pytest.mark.parametrize("path,want", [
    ("/usr/local/cuda-11.8", RUNFILE_118),
    ("/usr/local/cuda-11.8/bin/nvcc", RUNFILE_118),
    ("/usr/local/cuda/lib64", RUNFILE_124),        # the symlink's target
    ("/usr/local/cuda-12.4", RUNFILE_124),         # a toolkit path written with a trailing /
    ("/usr/local/cuda-11.80/bin", None),           # a sibling whose name starts the same
    ("/usr/local/cuda-12", None),
    ("/usr/bin/nvcc", DEBIAN),                     # Debian's packaged toolkit: its own places in /usr
    ("/usr", DEBIAN),
    ("/usr/bin", DEBIAN),
    ("/usr/include", DEBIAN),
    ("/usr/lib/x86_64-linux-gnu", DEBIAN),
    ("/usr/lib/nvidia-cuda-toolkit/bin/nvcc", DEBIAN),
    ("/usr/lib/nvidia-cuda-toolkit", DEBIAN),
    ("/usr/local/bin/nvcc", None),                 # /usr holds everything else too
    ("/usr/lib/x86_64-linux-gnu/libcudart.so", None),
    ("/usr/share/doc", None),
])
def test_the_installed_toolkit_that_contains_a_path(path, want):
    f = cuda(RUNFILE_118, DEBIAN, RUNFILE_124, link="/usr/local/cuda-12.4")
    assert toolkit_of(path, f) == want


def test_the_innermost_toolkit_wins_and_a_toolkit_without_a_path_contains_nothing():
    outer, inner = {"path": "/opt/cuda", "version": "11.8.0"}, {"path": "/opt/cuda/12.4", "version": "12.4.1"}
    assert toolkit_of("/opt/cuda/12.4/bin", cuda(inner, outer)) == inner
    assert toolkit_of("/opt/cuda/12.4/bin", cuda(outer, inner)) == inner
    assert toolkit_of("/opt/cuda/bin", cuda(outer, inner)) == outer
    assert toolkit_of("/opt/cuda/bin", cuda({"path": None, "version": "12.4.1"}, {"path": "", "version": "1"})) is None
    # a distro toolkit's own place is claimed by the first distro toolkit that lists it
    other = dict(DEBIAN, version="11.5.1")
    assert toolkit_of("/usr/bin/nvcc", cuda(DEBIAN, other)) is DEBIAN
    assert toolkit_of("/usr/bin/nvcc", cuda(other, DEBIAN)) is other


def test_a_toolkit_listed_by_the_symlink_s_path_is_the_directory_it_points_at():
    # a hand-written facts file may list /usr/local/cuda itself as the toolkit (the probe lists real paths)
    f = cuda({"path": "/usr/local/cuda", "version": "12.4.1"}, link="/usr/local/cuda-12.4")
    assert toolkit_of("/usr/local/cuda-12.4/bin", f) == {"path": "/usr/local/cuda", "version": "12.4.1"}
    assert toolkit_of("/usr/local/cuda-11.8/bin", f) is None


def test_installed_toolkit_by_major_minor():
    f = cuda(RUNFILE_118, {"path": "/opt/x", "version": None}, RUNFILE_124, DEBIAN)
    assert installed_toolkit(f, "12.4") == RUNFILE_124
    assert installed_toolkit(f, "12.4.0") == RUNFILE_124
    assert installed_toolkit(f, "11.8.89") == RUNFILE_118
    assert installed_toolkit(f, "12.0") == DEBIAN
    assert installed_toolkit(f, "12.1") is None
    assert installed_toolkit(f, "twelve") is None
    assert installed_toolkit(cuda({"path": "/opt/y", "version": "x.y"}), "12.4") is None


def test_a_toolkit_listed_without_a_path_cannot_be_pointed_at():
    # a hand-written facts file: a CUDA 12.4 toolkit without its directory is no toolkit to use
    f = cuda({"path": None, "version": "12.4.1"}, {"path": "", "version": "12.4.0"}, RUNFILE_118)
    assert installed_toolkit(f, "12.4") is None
    assert toolkit_step(f, "12.4.1") == "install CUDA 12.4.1 (envcheck install-cuda 12.4)"


def test_toolkit_step_uses_an_installed_toolkit_or_installs_one():
    f = cuda(RUNFILE_118, DEBIAN)
    assert toolkit_step(f, "11.8.0") == ("use the CUDA 11.8 already installed (/usr/local/cuda-11.8): export "
                                         "PATH=/usr/local/cuda-11.8/bin:$PATH CUDA_HOME=/usr/local/cuda-11.8")
    assert toolkit_step(f, "12.0.1") == ("use the CUDA 12.0 already installed (Debian's nvidia-cuda-toolkit, in "
                                         "/usr): export PATH=/usr/bin:$PATH CUDA_HOME=/usr")
    assert toolkit_step(f, "12.4.1") == "install CUDA 12.4.1 (envcheck install-cuda 12.4)"


# ---------------------------------------------------------------- installed_gcc
def test_installed_gcc_is_the_newest_at_or_below_the_limit():
    installed = [("/usr/bin/gcc-x", "x"), ("/usr/bin/gcc-9", "9.5.0"), ("/usr/bin/gcc-12", "12.3.0"),
                 ("/usr/bin/gcc-z", None), ("/usr/bin/gcc-13", "13.2.0")]   # unreadable ones are skipped
    f = {"gcc": {"version": "14.1.0", "installed": [{"path": p, "version": v} for p, v in installed]}}
    assert [installed_gcc(f, n) for n in (8, 9, 12, 13, 20)] == [None, 9, 12, 13, 13]


# ---------------------------------------------------------------- needs
def test_needs_marks_a_rule_and_refuses_an_unknown_fact():
    def rule(f, m):
        return []
    assert needs("driver", "gpu")(rule) is rule and rule.needs == ("driver", "gpu")
    with pytest.raises(ValueError) as err:
        needs("driver", "kernel")
    assert str(err.value) == "unknown fact 'kernel'; known: driver, cuda, cudnn, torch, gpu, python, gcc, env"


@needs("driver", "cuda", "cudnn", "torch", "gpu", "python", "gcc", "env")
def _every_fact(f, m):
    return []


@pytest.mark.parametrize("facts,absent", [
    ({}, ["driver", "cuda", "cudnn", "torch", "gpu", "python", "gcc", "env"]),
    # each fact given
    ({"driver": {"version": "550.54.15"}, "cuda": {"version": "12.4.1"}, "cudnn": {"version": "9.1.0"},
      "torch": {"version": "2.4.1"}, "gpus": [{"name": "A100"}], "python": {"version": "3.11"},
      "gcc": {"version": "12.3.0"}, "env": {}}, []),
    # looked for and not found: an empty section applies, so the check is not skipped
    ({"driver": {"version": None}, "cuda": {}, "cudnn": {}, "packages": {}, "gpus": [], "python": {},
      "gcc": {}, "env": None}, []),
    # torch from the package list, gcc as nvcc's host compiler (the cuda section is then there too)
    ({"packages": {"torch": {"version": "2.4.1"}}, "cuda": {"nvcc": {"host_compiler": {"version": "12.3.0"}}}},
     ["driver", "cudnn", "gpu", "python", "env"]),
])
def test_missing_lists_the_facts_nobody_looked_for_in_the_rule_s_order(facts, absent):
    assert missing(_every_fact, facts) == absent


def test_a_rule_without_needs_misses_nothing():
    assert missing(lambda f, m: [], {}) == []


@pytest.mark.parametrize("names,want", [
    (["driver", "gpu"], ("no driver version, no GPU", "pass --driver V --gpu NAME|sm_XY, or audit the host")),
    (["torch"], ("no torch version", "pass --torch V[+cuXYZ], or audit the host")),
    (["cuda", "cudnn", "python", "gcc"], ("no CUDA toolkit (nvcc) version, no cuDNN version, no Python version, no "
                                         "host compiler (gcc) version",
                                         "pass --cuda V --cudnn V --python X.Y --gcc V, or audit the host")),
    (["env"], ("environment not collected", "audit the host")),           # no flag gives it
    (["driver", "env"], ("no driver version, environment not collected", "audit the host")),
])
def test_needs_text_says_what_is_missing_and_how_to_give_it(names, want):
    assert needs_text(names) == want
