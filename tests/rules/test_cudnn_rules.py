"""envcheck/rules/cudnn.py rule by rule, each finding compared whole (severity, code, component,
message, fix, source) with its remedies, the rule called alone. Expected values come from the
rules' docstrings and compat_matrix.yaml: the cuDNN records (version, CUDA builds, archives,
source), torch's variants (the cuDNN each was built with) and torch.cudnn_check, torch's own test
of the loaded cuDNN by era (0.x: the same minor; 1.0 on: the same major and a minor not older,
before cuDNN 7 the same minor; printed as M*1000+m*100+p until 1.12.1, as a tuple since)."""
from __future__ import annotations

import copy


from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules import cudnn
from envcheck.rules.common import src
from tests.rules.test_rules import probe_facts


def remedies(finding):
    return [(r.label, r.fix, r.edits, r.why) for r in finding.remedies]


def era(m, version):
    return next(e for e in m.data["torch"]["cudnn_check"] if e["from"] == version)


# ------------------------------------------------ cudnn_unknown
def test_a_cudnn_the_matrix_lacks_or_cannot_read_is_a_warning(m):
    assert cudnn.cudnn_unknown(stack_facts(cudnn="7.9.9", matrix=m), m) == [Finding(
        WARNING, "cudnn-unknown", "cudnn",
        "The matrix does not know cuDNN 7.9.9; which CUDA it was built for was not checked.",
        "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)", src(m, "cudnn_sm"))]
    f = stack_facts(matrix=m)
    f["cudnn"] = {"version": "x.y"}
    assert cudnn.cudnn_unknown(f, m) == [Finding(
        WARNING, "cudnn-unknown", "cudnn", "cuDNN version 'x.y' cannot be read; cuDNN checks were skipped.",
        "check CUDNN_MAJOR/MINOR/PATCHLEVEL in cudnn_version.h (cudnn.h for 7.x)", src(m, "cudnn_sm"))]
    assert cudnn.cudnn_unknown(stack_facts(cudnn="8.9.7", matrix=m), m) == []
    assert cudnn.cudnn_unknown(stack_facts(matrix=m), m) == []


# ------------------------------------------------ cudnn_vs_toolkit
def archive_fix(m, version, cuda):
    a = m.cudnn_archive(version, cuda)
    return (f"install cuDNN {version} for CUDA {cuda}: {a['name']} ({a['url']}); copy {a['include']}/* into "
            f"<toolkit>/include and {a['lib']}/* into <toolkit>/lib64")


def best_for(m, cuda):
    return m.cudnn_for_cuda(cuda)[-1]["version"]


def mismatch(m, rec, why, fix):
    return Finding(ERROR, "cudnn-cuda-mismatch", "cudnn",
                   f"cuDNN {rec['version']} has {why}: programs fail to load it ('cannot open shared object file' "
                   f"for the CUDA libraries it links) or its calls return CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING.",
                   fix, rec["source"])


def test_a_cudnn_of_another_cuda_major_is_an_error_with_the_newest_cudnn_for_the_toolkit(m):
    rec = m.cudnn("7.6.5")      # builds for CUDA 9.0 .. 10.2
    (e,) = cudnn.cudnn_vs_toolkit(stack_facts(cuda="11.8", cudnn="7.6.5", matrix=m), m)
    best = best_for(m, "11.8")
    fix = archive_fix(m, best, "11.8")
    assert e == mismatch(m, rec, f"builds for CUDA {', '.join(rec['cuda'])} only, another CUDA major than the "
                                 f"toolkit's 11.8", fix)
    assert rec["cuda"] == ["9.0", "9.2", "10.0", "10.1", "10.2"]
    assert remedies(e) == [(f"install cuDNN {best}", fix, (("cudnn", best),), "CUDA 11.8 needs a cuDNN built for it")]


def test_before_cuda_11_a_build_of_the_same_major_but_another_minor_is_an_error_too(m):
    rec = m.cudnn("7.5.0")      # 9.0, 9.2, 10.0, 10.1: no 10.2 build
    (e,) = cudnn.cudnn_vs_toolkit(stack_facts(cuda="10.2.89", cudnn="7.5.0", matrix=m), m)
    assert e == mismatch(m, rec, f"builds for CUDA {', '.join(rec['cuda'])}, none for CUDA 10.2 (before CUDA 11 a "
                                 f"build serves only its own minor)", archive_fix(m, best_for(m, "10.2"), "10.2"))


def test_a_toolkit_the_matrix_has_no_cudnn_for_gets_no_remedy(m):
    rec = m.cudnn("9.1.0")
    (e,) = cudnn.cudnn_vs_toolkit(stack_facts(cuda="8.0", cudnn="9.1.0", matrix=m), m)
    assert e == mismatch(m, rec, f"builds for CUDA {', '.join(rec['cuda'])} only, another CUDA major than the "
                                 f"toolkit's 8.0", "the matrix knows no cuDNN for CUDA 8.0")
    assert e.remedies == ()


def test_check_judges_its_cudnn_against_torchs_cuda_and_audit_against_the_toolkit(m):
    # check's --cudnn is the copy torch loads (built for torch's CUDA), audit's the system one
    assert cudnn.cudnn_vs_toolkit(stack_facts(cuda="12.4", cudnn="8.5.0", torch="2.0.1+cu118", matrix=m), m) == []
    (e,) = cudnn.cudnn_vs_toolkit(stack_facts(cuda="11.8", cudnn="8.5.0", torch="2.4.0+cu124", matrix=m), m)
    assert e.message.startswith("cuDNN 8.5.0.96 has builds for CUDA 10.2, 11 only, another CUDA major than the "
                                "toolkit's 12.4")
    f = probe_facts(cuda={"version": "12.4.1"}, cudnn={"version": "8.5.0"},
                    packages={"torch": {"version": "2.0.1+cu118"}},
                    torch={"version": "2.0.1", "local": "cu118", "cuda": "11.8"})
    (e,) = cudnn.cudnn_vs_toolkit(f, m)
    assert "another CUDA major than the toolkit's 12.4.1" in e.message


def test_the_toolkit_rule_skips_a_cudnn_the_matrix_lacks_and_passes_a_fitting_one(m):
    assert cudnn.cudnn_vs_toolkit(stack_facts(cuda="11.8", cudnn="7.9.9", matrix=m), m) == [
        Skipped("cudnn_vs_toolkit", "cudnn", "cuDNN 7.9.9 not in the matrix", "update envcheck (or --matrix FILE)")]
    assert cudnn.cudnn_vs_toolkit(stack_facts(cuda="11.8", cudnn="8.9.7", matrix=m), m) == []
    assert cudnn.cudnn_vs_toolkit(stack_facts(cudnn="8.9.7", matrix=m), m) == []


# ------------------------------------------------ cudnn_shadows_torch
def shadowed(system="8.9.7", ld="/opt/x:/usr/local/cuda/lib64:/opt/y", pip="9.1.0.70", torch="2.4.0+cu121",
             lib="/usr/local/cuda-12.4/lib64/libcudnn.so.8"):
    public, _, tag = torch.partition("+")
    return probe_facts(
        cuda={"version": "12.4.1", "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-12.4"}},
        cudnn={"version": system, "libs": [{"path": lib, "version": system},
                                           {"path": "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
                                            "version": "9.1.0"}]},
        packages={"torch": {"version": torch}, "nvidia-cudnn-cu12": {"version": pip}},
        torch={"version": public, "local": tag, "cuda": None}, env={"LD_LIBRARY_PATH": ld})


def test_a_system_cudnn_of_another_major_ahead_of_pips_is_an_error_naming_the_entry(m):
    # /usr/local/cuda is the symlink the probe saw to /usr/local/cuda-12.4, where the system cuDNN is
    (e,) = cudnn.cudnn_shadows_torch(shadowed(), m)
    fix = "drop it from LD_LIBRARY_PATH for torch jobs: export LD_LIBRARY_PATH=/opt/x:/opt/y"
    assert e == Finding(
        ERROR, "cudnn-shadows-torch", "cudnn",
        "LD_LIBRARY_PATH entry /usr/local/cuda/lib64 holds a system cuDNN 8.9.7 that is loaded instead of the "
        "nvidia-cudnn-cu12 9.1.0.70 pip's torch depends on: torch fails with 'cuDNN version incompatibility: "
        "PyTorch was compiled against (9, 1, 0) but found runtime version (8, 9, 7)'.", fix, src(m, "pypi_cudnn_cu12"))
    assert remedies(e) == [("set LD_LIBRARY_PATH", fix, (("env:LD_LIBRARY_PATH", "/opt/x:/opt/y"),),
                            "/usr/local/cuda/lib64 shadows nvidia-cudnn-cu12")]


def test_a_shadowing_cudnn_torch_accepts_is_a_warning_and_the_only_entry_unsets_the_variable(m):
    (w,) = cudnn.cudnn_shadows_torch(shadowed(system="9.3.0", ld="/usr/local/cuda-12.4/lib64"), m)
    fix = "drop it from LD_LIBRARY_PATH for torch jobs: unset LD_LIBRARY_PATH"
    assert w == Finding(
        WARNING, "cudnn-shadows-torch", "cudnn",
        "LD_LIBRARY_PATH entry /usr/local/cuda-12.4/lib64 holds a system cuDNN 9.3.0 that is loaded instead of the "
        "nvidia-cudnn-cu12 9.1.0.70 pip's torch depends on: torch fails with 'cuDNN version incompatibility: "
        "PyTorch was compiled against (9, 1, 0) but found runtime version (9, 3, 0)' (this one it accepts: same "
        "major, minor not older).", fix, src(m, "pypi_cudnn_cu12"))
    assert remedies(w) == [("unset LD_LIBRARY_PATH", fix, (("env:LD_LIBRARY_PATH", ""),),
                            "/usr/local/cuda-12.4/lib64 shadows nvidia-cudnn-cu12")]
    # the same minor, an older patch: accepted too; an older minor is not
    assert cudnn.cudnn_shadows_torch(shadowed(system="9.1.0"), m)[0].severity == WARNING
    assert cudnn.cudnn_shadows_torch(shadowed(system="9.0.9"), m)[0].severity == ERROR


def test_a_shadowing_cudnn_of_unknown_version_is_an_error(m):
    f = shadowed()
    f["cudnn"]["version"] = None
    f["cudnn"]["libs"][0]["version"] = None
    (e,) = cudnn.cudnn_shadows_torch(f, m)
    assert e.severity == ERROR
    assert "holds a system cuDNN (version unknown) that is loaded" in e.message
    assert e.message.endswith("but found runtime version (?)'.")
    # an unreadable version is no version torch accepts either
    f = shadowed()
    f["cudnn"]["libs"][0]["version"] = "8.x"
    assert cudnn.cudnn_shadows_torch(f, m)[0].severity == ERROR


def test_the_first_shadowing_entry_is_named_and_every_system_entry_is_dropped(m):
    f = shadowed(ld="/usr/lib/x86_64-linux-gnu:/opt/x:/usr/local/cuda-12.4/lib64")
    f["cudnn"]["libs"].append({"path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.7", "version": "7.6.5"})
    (e,) = cudnn.cudnn_shadows_torch(f, m)
    assert e.message.startswith("LD_LIBRARY_PATH entry /usr/lib/x86_64-linux-gnu holds a system cuDNN 7.6.5 ")
    assert e.fix == "drop it from LD_LIBRARY_PATH for torch jobs: export LD_LIBRARY_PATH=/opt/x"


def test_no_shadow_without_pips_cudnn_without_a_system_entry_or_with_only_pips_own_copy(m):
    f = shadowed()
    del f["packages"]["nvidia-cudnn-cu12"]
    assert cudnn.cudnn_shadows_torch(f, m) == []
    f = shadowed()
    f["packages"]["nvidia-cudnn-cu12"] = {"version": None}
    assert cudnn.cudnn_shadows_torch(f, m) == []
    assert cudnn.cudnn_shadows_torch(shadowed(ld="/opt/x:/opt/y"), m) == []
    site = "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib"
    assert cudnn.cudnn_shadows_torch(shadowed(ld=site), m) == []
    dist = shadowed(ld="/usr/lib/python3/dist-packages/nvidia/cudnn/lib",
                    lib="/usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.8")
    assert cudnn.cudnn_shadows_torch(dist, m) == []


def test_the_first_pip_cudnn_package_by_name_is_the_one_named(m):
    f = shadowed()
    f["packages"]["nvidia-cudnn-cu11"] = {"version": "8.5.0.96"}
    (e,) = cudnn.cudnn_shadows_torch(f, m)
    assert "instead of the nvidia-cudnn-cu11 8.5.0.96 pip's torch depends on" in e.message


# ------------------------------------------------ torch_cudnn: what the torch process loads
def test_what_torch_loads_in_order_deep_flags_shadow_pip_bundled(m):
    f = shadowed()
    assert cudnn.torch_cudnn(f, m) == {"version": "8.9.7", "how": "shadow", "from": (
        "the system copy in /usr/local/cuda/lib64 (LD_LIBRARY_PATH), not nvidia-cudnn-cu12 9.1.0.70")}
    f["deep"] = {"cudnn": 90100}
    assert cudnn.torch_cudnn(f, m) == {"version": "9.1.0", "how": "deep",
                                       "from": "torch.backends.cudnn.version() (--deep)"}
    assert cudnn.torch_cudnn(shadowed(ld="/opt/x"), m) == {"version": "9.1.0.70", "how": "pip",
                                                           "from": "pip package nvidia-cudnn-cu12"}
    assert cudnn.torch_cudnn(stack_facts(torch="2.4.0+cu121", cudnn="9.1.0", matrix=m), m) == {
        "version": "9.1.0", "how": "flags", "from": "--cudnn"}
    assert cudnn.torch_cudnn(stack_facts(torch="2.4.0+cu121", matrix=m), m) is None
    assert cudnn.torch_cudnn(stack_facts(torch="2.4.0+cpu", cudnn="9.1.0", matrix=m), m) is None
    assert cudnn.torch_cudnn(stack_facts(cudnn="9.1.0", matrix=m), m) is None


# ------------------------------------------------ cudnn_vs_torch: torch's own test, by era
def test_from_torch_1_12_1_an_older_minor_is_refused_with_the_tuple_wording_and_the_pip_pin(m):
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="2.4.0+cu121", cudnn="9.0.0", matrix=m), m)
    assert m.torch_variant("2.4.0", "cu121")["cudnn"] == "9.1.0"
    fix = ('pip install "nvidia-cudnn-cu12==9.1.0.*" (the cuDNN torch 2.4.0+cu121 was built with), and keep other '
           "cuDNN directories out of LD_LIBRARY_PATH for torch jobs")
    assert e == Finding(
        ERROR, "cudnn-refused-by-torch", "cudnn",
        "torch 2.4.0+cu121 was built with cuDNN 9.1.0 but the process loads cuDNN 9.0.0; torch 2.4.0 refuses it on "
        "first use: 'cuDNN version incompatibility: PyTorch was compiled against (9, 1, 0) but found runtime version "
        "(9, 0, 0)'.", fix, era(m, "1.12.1")["source"])
    assert remedies(e) == [("let torch load cuDNN 9.1.0", fix, (("loaded_cudnn", "9.1.0"),),
                            "torch 2.4.0+cu121 needs cuDNN 9.x >= 9.1")]


def test_a_four_part_build_is_pinned_exactly(m):
    data = copy.deepcopy(m.data)
    rec = next(r for r in data["torch"]["releases"] if r["version"] == "2.4.0")
    rec["variants"]["cu121"]["cudnn"] = "9.1.0.70"
    m2 = Matrix(data, m.path)
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="2.4.0+cu121", cudnn="9.0.0", matrix=m2), m2)
    assert e.fix.startswith('pip install "nvidia-cudnn-cu12==9.1.0.70" (the cuDNN torch ')


def test_from_torch_1_0_an_older_minor_is_refused_with_the_integer_wording(m):
    # torch 1.1.0+cu100 bundles cuDNN 7.5.1: a loaded 7.4.1 is an older minor; torch printed 7501
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="1.1.0+cu100", cudnn="7.4.1", matrix=m), m)
    fix = ("let torch load the cuDNN it ships: take the system cuDNN's directory out of LD_LIBRARY_PATH for torch "
           "jobs, or make the loaded one cuDNN 7.x >= 7.5")
    assert e == Finding(
        ERROR, "cudnn-refused-by-torch", "cudnn",
        "torch 1.1.0+cu100 was built with cuDNN 7.5.1 but the process loads cuDNN 7.4.1; torch 1.1.0 refuses it on "
        "first use: 'cuDNN version incompatibility: PyTorch was compiled against 7501 but linked against 7401'.",
        fix, era(m, "1.0.0")["source"])
    assert remedies(e) == [("let torch load cuDNN 7.5.1", fix, (("loaded_cudnn", "7.5.1"),),
                            "torch 1.1.0+cu100 needs cuDNN 7.x >= 7.5")]
    # a newer minor of the same major is accepted from 1.0 on
    assert cudnn.cudnn_vs_torch(stack_facts(torch="1.1.0+cu100", cudnn="7.6.5", matrix=m), m) == []
    assert cudnn.cudnn_vs_torch(stack_facts(torch="1.1.0+cu100", cudnn="7.5.0", matrix=m), m) == []


def test_before_torch_1_0_another_minor_is_refused_even_a_newer_one(m):
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="0.4.1+cu90", cudnn="7.3.0", matrix=m), m)
    fix = ("let torch load the cuDNN it ships: take the system cuDNN's directory out of LD_LIBRARY_PATH for torch "
           "jobs, or make the loaded one cuDNN 7.1")
    assert e == Finding(
        ERROR, "cudnn-refused-by-torch", "cudnn",
        "torch 0.4.1+cu90 was built with cuDNN 7.1.2 but the process loads cuDNN 7.3.0; torch 0.4.1 refuses it on "
        "first use: 'cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7300' (torch before "
        "1.0 demanded the same minor).", fix, era(m, "0.2.0")["source"])
    assert remedies(e)[0][3] == "torch 0.4.1+cu90 needs cuDNN 7.1"


def test_another_major_is_always_refused_and_cudnn_9_prints_its_five_digit_number(m):
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="1.11.0+cu113", cudnn="7.6.5", matrix=m), m)
    assert "'cuDNN version incompatibility: PyTorch was compiled against 8200 but linked against 7605'." in e.message
    assert e.fix.endswith("or make the loaded one cuDNN 8.x >= 8.2")
    assert cudnn._cudnn_int((9, 1, 0)) == "90100" and cudnn._cudnn_int((8, 9, 7)) == "8907"
    assert cudnn._cudnn_int((7, 1, 2)) == "7102"


def test_before_cudnn_7_torch_demanded_the_same_minor_in_every_era(m):
    era1 = era(m, "1.0.0")
    assert cudnn._refused((6, 0, 21), (6, 1, 0), era1) is True       # newer minor, before cuDNN 7
    assert cudnn._refused((6, 0, 21), (6, 0, 0), era1) is False
    assert cudnn._refused((7, 1, 2), (7, 3, 0), era1) is False       # from 7 on: a newer minor is fine
    assert cudnn._refused((7, 1, 2), (7, 0, 5), era1) is True
    assert cudnn._refused((7, 1, 2), (8, 1, 2), era1) is True
    assert cudnn._refused((7, 1, 2), (7, 3, 0), era(m, "0.2.0")) is True


def test_the_era_is_the_latest_at_or_below_the_release(m):
    assert cudnn._era(m, "1.12.0")["from"] == "1.0.0"
    assert cudnn._era(m, "1.12.1")["from"] == "1.12.1"
    assert cudnn._era(m, "0.4.1")["from"] == "0.2.0"
    assert cudnn._era(m, "1.0.0")["from"] == "1.0.0"
    assert cudnn._era(m, None)["from"] == "1.12.1"           # unknown: the latest
    assert cudnn._era(m, "not a version")["from"] == "1.12.1"
    assert cudnn._era(m, "0.1.0") == {"rule": "minor-at-least", "message": "", "source": ""}


def test_a_plain_pypi_torch_is_named_as_the_build_pypi_serves(m):
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="2.4.0", cudnn="8.9.2", matrix=m), m)
    assert e.message.startswith("torch 2.4.0 (a plain torch==2.4.0 from PyPI is the cu121 build) was built with "
                                "cuDNN 9.1.0 but the process loads cuDNN 8.9.2; ")
    assert e.fix.startswith('pip install "nvidia-cudnn-cu12==9.1.0.*" (the cuDNN torch 2.4.0 was built with)')


def test_the_pip_pin_is_offered_only_for_wheels_that_depend_on_pips_cudnn(m):
    # torch 1.12.1 bundles its cuDNN (before 1.13): the fix is to let it load that one
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="1.12.1+cu116", cudnn="8.2.0", matrix=m), m)
    assert e.fix.startswith("let torch load the cuDNN it ships")
    # 1.13.0 depends on nvidia-cudnn-cu11: the pin, of the CUDA major of the build
    (e,) = cudnn.cudnn_vs_torch(stack_facts(torch="1.13.0+cu117", cudnn="8.2.0", matrix=m), m)
    built = m.torch_variant("1.13.0", "cu117")["cudnn"]
    assert e.fix.startswith(f'pip install "nvidia-cudnn-cu11=={built}.*" (the cuDNN torch 1.13.0+cu117 was built with)')
    # what pip installed, shadowed by nothing: the pin too
    f = shadowed(ld="/opt/x", pip="9.0.0.312")
    (e,) = cudnn.cudnn_vs_torch(f, m)
    assert e.fix.startswith('pip install "nvidia-cudnn-cu12==9.1.0.*"')
    # the wheel's own bundled copy: nothing to refuse
    f = probe_facts(packages={"torch": {"version": "1.12.1+cu116"}},
                    torch={"version": "1.12.1", "local": "cu116", "cuda": None}, cudnn={"version": None})
    assert cudnn.cudnn_vs_torch(f, m) == []
    # a version read from --deep that torch refuses: not pip's to fix
    f = shadowed(ld="/opt/x")
    f["deep"] = {"cudnn": 90000}
    (e,) = cudnn.cudnn_vs_torch(f, m)
    assert e.fix.startswith("let torch load the cuDNN it ships")


def test_the_torch_rule_leaves_a_shadow_to_its_own_rule_and_skips_what_it_cannot_know(m):
    assert cudnn.cudnn_vs_torch(shadowed(), m) == []
    assert cudnn.cudnn_vs_torch(stack_facts(torch="2.4.0+cu121", matrix=m), m) == [
        Skipped("cudnn_vs_torch", "cudnn", "the cuDNN the torch process loads is unknown",
                "--cudnn V (the cuDNN the process loads), or audit --deep")]
    # the matrix lists torch 1.0.1+cu100 without the cuDNN it was built with
    assert cudnn.cudnn_vs_torch(stack_facts(torch="1.0.1+cu100", cudnn="7.4.1", matrix=m), m) == [
        Skipped("cudnn_vs_torch", "cudnn", "the cuDNN torch 1.0.1+cu100 was built with is not in the matrix",
                "update envcheck (or --matrix FILE)")]
    assert cudnn.cudnn_vs_torch(stack_facts(torch="2.4.0+cpu", cudnn="9.1.0", matrix=m), m) == []
    f = stack_facts(torch="2.4.0+cu121", matrix=m)
    f["cudnn"] = {"version": "x.y"}
    assert cudnn.cudnn_vs_torch(f, m) == []     # cudnn_unknown says so


def test_the_pip_fix_needs_a_torch_of_1_13_or_later_with_a_cuda(m):
    tb = type("TB", (), {"version": "1.13.0", "cuda": "11.7"})()
    assert cudnn._pip_cudnn_fix(tb, "8.5.0") == 'pip install "nvidia-cudnn-cu11==8.5.0.*"'
    assert cudnn._pip_cudnn_fix(tb, "8.5.0.96") == 'pip install "nvidia-cudnn-cu11==8.5.0.96"'
    tb.version = "1.12.1"
    assert cudnn._pip_cudnn_fix(tb, "8.5.0") is None
    tb.version, tb.cuda = "2.4.0", None
    assert cudnn._pip_cudnn_fix(tb, "8.5.0") is None
    assert cudnn._pip_cudnn_fix(None, "8.5.0") is None


def test_a_shadowing_lib_without_its_own_version_takes_the_cudnn_version_and_without_any_is_not_what_torch_loads(m):
    f = shadowed()
    f["cudnn"]["libs"][0]["version"] = None          # the header's 8.9.7 stands for it
    assert "holds a system cuDNN 8.9.7 that is loaded" in cudnn.cudnn_shadows_torch(f, m)[0].message
    f["cudnn"]["version"] = None                     # no version at all: what torch loads is pip's, as far as known
    assert cudnn.torch_cudnn(f, m) == {"version": "9.1.0.70", "how": "pip", "from": "pip package nvidia-cudnn-cu12"}


def test_cudnn_9_numbers_carry_the_patch():
    assert cudnn._cudnn_int((9, 1, 2)) == "90102" and cudnn._cudnn_int((8, 9, 7)) == "8907"
