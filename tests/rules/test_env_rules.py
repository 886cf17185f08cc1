"""envcheck/rules/env.py, each rule called alone and each finding compared whole (severity, code,
component, message, fix, source). The expected values come from the module's docstring (CUDA_HOME,
PATH, LD_LIBRARY_PATH and the /usr/local/cuda symlink must point at installed toolkits, and at the same
one; only for probe facts), docs/check-and-matrix.md (`env-missing-toolkit`: an error for CUDA_HOME and
the symlink, a warning for PATH and LD_LIBRARY_PATH entries; `env-toolkits-disagree`: an error where the
majors differ; `env-nvcc-not-on-path`) and compat_matrix.yaml's `install_guide` source, not from what
the code printed."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules.env import env_nvcc_not_on_path, env_points_at_missing_toolkit, env_toolkits_disagree

INSTALLED_BOTH = "/usr/local/cuda-11.8, /usr/local/cuda-12.4"
NOT_FOUND = "nothing is found there ('nvcc: command not found', 'libcudart.so: cannot open shared object file')."


@pytest.fixture(scope="module")
def guide(m):
    return m.data["sources"]["install_guide"]


def facts(env, versions=("11.8.0", "12.4.1"), link="/usr/local/cuda-12.4", nvcc="/usr/local/cuda/bin/nvcc",
          torch=None):
    """A probed host: a toolkit per version at /usr/local/cuda-X.Y, /usr/local/cuda -> `link`, nvcc
    found at `nvcc` (None: not on PATH), this environment and torch built for CUDA `torch`."""
    tks = [{"path": f"/usr/local/cuda-{v.rsplit('.', 1)[0]}", "version": v} for v in versions]
    f = {"schema": 1, "origin": "probe", "hostname": "n1", "env": env,
         "cuda": {"toolkits": tks, "symlink": {"path": "/usr/local/cuda", "target": link},
                  "nvcc": {"path": nvcc, "version": None}, "version": None}}
    if torch:
        tag = "cu" + torch.replace(".", "")
        f["packages"] = {"torch": {"version": f"2.4.1+{tag}"}}
        f["torch"] = {"version": "2.4.1", "local": tag, "cuda": torch, "cuda_source": "deep"}
    return f


# ---------------------------------------------------------------- env_points_at_missing_toolkit
@pytest.mark.parametrize("var", ["CUDA_HOME", "CUDA_PATH"])
def test_cuda_home_or_path_naming_no_installed_toolkit_is_an_error(m, guide, var):
    assert env_points_at_missing_toolkit(facts({var: "/usr/local/cuda-12.1"}), m) == [Finding(
        ERROR, "env-missing-toolkit", "env",
        f"{var}=/usr/local/cuda-12.1 is not an installed CUDA toolkit (installed: {INSTALLED_BOTH}): extension "
        f"builds fail with 'No such file or directory: '/usr/local/cuda-12.1/bin/nvcc''.",
        f"export {var}=<one of the installed toolkits>, or install the toolkit there", guide)]


@pytest.mark.parametrize("var,entry", [
    ("PATH", "/usr/local/cuda-12.1/bin"),
    ("LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64"),
    ("PATH", "/usr/local/cuda-12.1"),     # the directory itself, no / after it
])
def test_a_path_entry_in_no_installed_toolkit_is_a_warning(m, guide, var, entry):
    env = {var: f"/usr/bin:{entry}:/usr/local/cuda-12.4/bin"}
    assert env_points_at_missing_toolkit(facts(env), m) == [Finding(
        WARNING, "env-missing-toolkit", "env",
        f"{var} entry {entry} is not inside an installed CUDA toolkit (installed: {INSTALLED_BOTH}): " + NOT_FOUND,
        f"remove {entry} from {var} (or install that toolkit)", guide)]


def test_a_dangling_cuda_symlink_is_an_error(m, guide):
    assert env_points_at_missing_toolkit(facts({"PATH": "/usr/bin"}, link="/usr/local/cuda-12.1"), m) == [Finding(
        ERROR, "env-missing-toolkit", "env",
        f"/usr/local/cuda points at /usr/local/cuda-12.1, which is not an installed toolkit (installed: "
        f"{INSTALLED_BOTH}): everything using /usr/local/cuda fails to find nvcc and the CUDA libraries.",
        "ln -sfn <installed toolkit> /usr/local/cuda", guide)]


def test_every_place_is_said_in_order_and_none_installed_is_said(m, guide):
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-10.2/lib64", "PATH": "/usr/local/cuda-10.1/bin",
           "CUDA_PATH": "/usr/local/cuda-10.0", "CUDA_HOME": "/usr/local/cuda-9.2"}
    found = env_points_at_missing_toolkit(facts(env, versions=(), link="/usr/local/cuda-9.0"), m)
    assert [(x.severity, x.message.split(" is not ")[0].split(" points at ")[0]) for x in found] == [
        (ERROR, "CUDA_HOME=/usr/local/cuda-9.2"), (ERROR, "CUDA_PATH=/usr/local/cuda-10.0"),
        (WARNING, "PATH entry /usr/local/cuda-10.1/bin"), (WARNING, "LD_LIBRARY_PATH entry /usr/local/cuda-10.2/lib64"),
        (ERROR, "/usr/local/cuda")]
    assert all("(installed: none)" in x.message for x in found)


@pytest.mark.parametrize("env", [
    # inside an installed toolkit, directly or through the symlink
    {"CUDA_HOME": "/usr/local/cuda-12.4", "PATH": "/usr/local/cuda-11.8/bin:/usr/local/cuda/bin",
     "LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/usr/local/cuda-12.4/extras/CUPTI/lib64"},
    # not where the probe looks for toolkits: a distribution's /usr/lib/cuda, /opt, a name that is
    # no /cuda[-X.Y] directory, an empty entry
    {"PATH": "/usr/lib/cuda/bin:/opt/cuda-12.1/bin:/usr/local/cudatools/bin::/usr/local/cuda-x/bin",
     "LD_LIBRARY_PATH": "/usr/lib/cuda/lib64:/usr/local/cuda_12/lib64", "CUDA_HOME": ""},
])
def test_entries_in_installed_toolkits_or_outside_the_probe_s_places_are_no_finding(m, env):
    assert env_points_at_missing_toolkit(facts(env), m) == []


def test_a_symlink_without_a_target_is_no_finding(m):
    assert env_points_at_missing_toolkit(facts({"PATH": "/usr/bin"}, link=None), m) == []


@pytest.mark.parametrize("drop", ["env", "toolkits"])
def test_nothing_is_judged_where_the_probe_did_not_look(m, drop):
    f = facts({"CUDA_HOME": "/usr/local/cuda-12.1"}, link="/usr/local/cuda-12.1", nvcc=None)
    if drop == "env":
        del f["env"]
    else:
        del f["cuda"]["toolkits"]
    assert env_points_at_missing_toolkit(f, m) == []
    assert env_nvcc_not_on_path(f, m) == []
    f["env"] = {"CUDA_HOME": "/usr/local/cuda-11.8"}
    assert env_toolkits_disagree(f, m) == []


# ---------------------------------------------------------------- env_toolkits_disagree
def disagree(severity, what, root, guide):
    return Finding(severity, "env-toolkits-disagree", "env",
                   f"The environment mixes CUDA toolkits ({what}): code compiled with one nvcc loads the other's "
                   f"libraries ('undefined symbol' or 'libcudart.so.X: cannot open shared object file'), and "
                   f"torch.utils.cpp_extension builds with CUDA_HOME's.",
                   f"use one toolkit everywhere: export CUDA_HOME={root} PATH={root}/bin:$PATH "
                   f"LD_LIBRARY_PATH={root}/lib64:$LD_LIBRARY_PATH (and remove the others)", guide)


def test_toolkits_of_two_majors_are_an_error_that_points_at_the_most_named(m, guide):
    # nvcc (through the symlink) and CUDA_PATH on 12.4; CUDA_HOME and LD_LIBRARY_PATH on 11.8, and a
    # LD_LIBRARY_PATH entry outside any toolkit (counted nowhere)
    env = {"CUDA_HOME": "/usr/local/cuda-11.8", "CUDA_PATH": "/usr/local/cuda-12.4",
           "LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64::/opt/cuda-10.0/lib64:/usr/lib/x86_64-linux-gnu",
           "PATH": "/usr/local/cuda-11.8/bin"}   # PATH itself is judged through nvcc's path only
    found = env_toolkits_disagree(facts(env), m)
    what = ("CUDA 11.8: CUDA_HOME: /usr/local/cuda-11.8, LD_LIBRARY_PATH: /usr/local/cuda-11.8; "
            "CUDA 12.4: nvcc on PATH: /usr/local/cuda-12.4, CUDA_PATH: /usr/local/cuda-12.4, "
            "/usr/local/cuda -> /usr/local/cuda-12.4")
    assert found == [disagree(ERROR, what, "/usr/local/cuda-12.4", guide)]


def test_torch_s_own_cuda_wins_then_the_most_named_then_the_last_named(m, guide):
    env = {"CUDA_HOME": "/usr/local/cuda-11.8"}
    what = "CUDA 11.8: CUDA_HOME: /usr/local/cuda-11.8; CUDA 12.4: nvcc on PATH: /usr/local/cuda-12.4, " \
           "/usr/local/cuda -> /usr/local/cuda-12.4"
    assert env_toolkits_disagree(facts(env), m) == [disagree(ERROR, what, "/usr/local/cuda-12.4", guide)]
    # torch built for 11.8: its toolkit, though fewer places name it
    assert env_toolkits_disagree(facts(env, torch="11.8"), m) == [disagree(ERROR, what, "/usr/local/cuda-11.8", guide)]
    # torch built for a CUDA no place names: the most named
    assert env_toolkits_disagree(facts(env, torch="12.1"), m) == [disagree(ERROR, what, "/usr/local/cuda-12.4", guide)]
    # one each: nvcc (no symlink) on 12.4, CUDA_HOME on 11.8: the last named, CUDA_HOME's
    what1 = "CUDA 11.8: CUDA_HOME: /usr/local/cuda-11.8; CUDA 12.4: nvcc on PATH: /usr/local/cuda-12.4"
    f = facts(env, link=None, nvcc="/usr/local/cuda-12.4/bin/nvcc")
    assert env_toolkits_disagree(f, m) == [disagree(ERROR, what1, "/usr/local/cuda-11.8", guide)]


def test_toolkits_of_one_major_are_a_warning_and_the_root_is_the_installed_toolkit(m, guide):
    # two 12.x toolkits, the older installed first: 12.1 is named three times, 12.4 twice
    f = facts({"CUDA_HOME": "/usr/local/cuda-12.1/",
               "LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64:/usr/local/cuda-12.1/extras/CUPTI/lib64"},
              versions=("12.1.1", "12.4.1"))
    what = ("CUDA 12.1: CUDA_HOME: /usr/local/cuda-12.1, LD_LIBRARY_PATH: /usr/local/cuda-12.1, "
            "LD_LIBRARY_PATH: /usr/local/cuda-12.1; "
            "CUDA 12.4: nvcc on PATH: /usr/local/cuda-12.4, /usr/local/cuda -> /usr/local/cuda-12.4")
    found = env_toolkits_disagree(f, m)
    assert found == [disagree(WARNING, what, "/usr/local/cuda-12.1", guide)]


@pytest.mark.parametrize("env,link", [
    ({"CUDA_HOME": "/usr/local/cuda-12.4", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}, "/usr/local/cuda-12.4"),
    ({"CUDA_HOME": "/usr/local/cuda-12.1"}, "/usr/local/cuda-12.4"),  # no installed toolkit there: not counted
    ({}, None),
])
def test_one_toolkit_everywhere_is_no_finding(m, env, link):
    assert env_toolkits_disagree(facts(env, link=link), m) == []


def test_a_toolkit_of_unknown_version_is_not_counted(m):
    f = facts({"CUDA_HOME": "/usr/local/cuda-11.8"})
    f["cuda"]["toolkits"][0]["version"] = None
    assert env_toolkits_disagree(f, m) == []


# ---------------------------------------------------------------- env_nvcc_not_on_path
def test_toolkits_installed_but_no_nvcc_on_path_is_a_warning_naming_the_last(m, guide):
    assert env_nvcc_not_on_path(facts({"PATH": "/usr/bin"}, nvcc=None), m) == [Finding(
        WARNING, "env-nvcc-not-on-path", "env",
        f"CUDA is installed ({INSTALLED_BOTH}) but nvcc is not on PATH in this environment: builds stop with "
        f"'nvcc: command not found' (over SSH, ~/.bashrc exports are often not applied).",
        "export PATH=/usr/local/cuda-12.4/bin:$PATH CUDA_HOME=/usr/local/cuda-12.4", guide)]


def test_no_nvcc_warning_with_nvcc_found_no_toolkit_or_nvcc_never_looked_for(m):
    assert env_nvcc_not_on_path(facts({"PATH": "/usr/bin"}), m) == []
    assert env_nvcc_not_on_path(facts({"PATH": "/usr/bin"}, versions=(), nvcc=None), m) == []
    f = facts({"PATH": "/usr/bin"}, nvcc=None)
    f["cuda"]["toolkits"] = [{"path": None, "version": "12.4.1"}]
    assert env_nvcc_not_on_path(f, m) == []
    del f["cuda"]["nvcc"]
    f["cuda"]["toolkits"] = [{"path": "/usr/local/cuda-12.4", "version": "12.4.1"}]
    assert env_nvcc_not_on_path(f, m) == []


def test_a_system_library_directory_in_ld_library_path_names_no_toolkit(m):
    # Debian's packaged CUDA 12.0 lives in /usr, and its libraries in the system's own
    # /usr/lib/x86_64-linux-gnu: that entry is no CUDA directory, so it does not count as naming 12.0
    f = facts({"CUDA_HOME": "/usr/local/cuda-12.4", "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64"},
              versions=("12.4.1",))
    f["cuda"]["toolkits"].append({"path": "/usr", "version": "12.0.140", "layout": "distro", "include": "/usr/include",
                                  "lib": "/usr/lib/x86_64-linux-gnu"})
    assert env_toolkits_disagree(f, m) == []


def test_of_three_toolkits_the_most_named_is_the_one_to_use(m, guide):
    # nvcc and the symlink on 12.4, CUDA_HOME on 11.8, LD_LIBRARY_PATH on 12.1
    f = facts({"CUDA_HOME": "/usr/local/cuda-11.8", "LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64"},
              versions=("11.8.0", "12.1.1", "12.4.1"))
    what = ("CUDA 11.8: CUDA_HOME: /usr/local/cuda-11.8; CUDA 12.1: LD_LIBRARY_PATH: /usr/local/cuda-12.1; "
            "CUDA 12.4: nvcc on PATH: /usr/local/cuda-12.4, /usr/local/cuda -> /usr/local/cuda-12.4")
    assert env_toolkits_disagree(f, m) == [disagree(ERROR, what, "/usr/local/cuda-12.4", guide)]
