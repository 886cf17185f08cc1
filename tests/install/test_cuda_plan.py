"""The pure parts of install-cuda: source/checksum choice, facts parsing, planning from facts."""
from __future__ import annotations

import pytest

from envcheck.errors import UsageError
from envcheck.install.cuda import InstallArgs, parse_facts, plan_install
from envcheck.install.cuda_source import choose_source
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.matrix.load import load_matrix

M = load_matrix()
FACTS = """uid=0
priv=root
machine=x86_64
tmp_free_kb=104857600
target_free_kb=104857600
target_exists=0
link_kind=absent
gcc=12.2.0
gpu=NVIDIA H100 80GB HBM3, 9.0
varlog_writable=1
fetch=curl
end=1
"""


def test_mirror_builds_the_url_from_the_matrix_runfile_name():
    a = InstallArgs()
    assert choose_source(a, toolkit_spec(M, "12.4"), mirror="http://mirror.local/cuda/") == []
    assert a.url == "http://mirror.local/cuda/cuda_12.4.1_550.54.15_linux.run"
    assert a.expect_sha256 == "367d2299b3a4588ab487a6d27276ca5d9ead6e394904f18bccb9e12433b9c4fb"


@pytest.mark.parametrize("kw,msg", [
    ({"url": "http://x/a.run", "mirror": "http://x"}, "only one of"),
    ({"sha256": "abc"}, "not 64 hex digits"),
    ({"sha256": "a" * 64, "no_checksum": True}, "contradict"),
    ({"runfile": "/nonexistent/cuda.run"}, "no such file"),
])
def test_bad_source_options_are_one_line_usage_errors(kw, msg):
    with pytest.raises(UsageError, match=msg):
        choose_source(InstallArgs(), toolkit_spec(M, "12.4"), **kw)


def test_no_checksum_warns_and_md5_is_used_only_without_a_sha256():
    a = InstallArgs()
    assert "makeself's own check still runs" in choose_source(a, toolkit_spec(M, "12.4"), no_checksum=True)[0]
    assert a.expect_sha256 is None and a.expect_md5 is None
    b = InstallArgs()
    assert "published md5" in choose_source(b, toolkit_spec(M, "12.9.2"))[0]
    assert b.expect_sha256 is None and b.expect_md5 == "9b91ed7b1fb15f2ba42b94135dbc95b8"


def test_plan_for_a_clean_h100_node_fetches_then_installs_with_new_generation_flags():
    plan = plan_install("n1", parse_facts(FACTS), toolkit_spec(M, "12.4"),
                        InstallArgs(expect_sha256="a" * 64))
    assert not plan.problems, plan.problems
    assert [s.kind for s in plan.steps] == ["fetch", "install"]
    assert "--defaultroot=/usr/local/cuda-12.4 --no-drm --no-man-page" in plan.steps[1].text
    assert "--driver" not in plan.steps[1].command


def test_plan_refuses_cuda_10_on_an_h100_unless_forced():
    spec = toolkit_spec(M, "10.0")
    facts = parse_facts(FACTS.replace("gcc=12.2.0", "gcc=7.5.0"))
    plan = plan_install("n1", facts, spec, InstallArgs(expect_sha256="a" * 64))
    assert any("H100 80GB HBM3 (sm_90) is not supported by CUDA 10.0" in p for p in plan.problems)
    forced = plan_install("n1", facts, spec, InstallArgs(expect_sha256="a" * 64, force=True))
    assert not forced.problems and any("installing anyway" in n for n in forced.notes)


def test_an_installed_toolkit_with_a_missing_symlink_plans_only_the_link():
    facts = parse_facts(FACTS.replace("target_exists=0", "target_exists=1\nversion_json=12.4.1\nnvcc=release 12.4"))
    plan = plan_install("n1", facts, toolkit_spec(M, "12.4"), InstallArgs())
    assert [s.kind for s in plan.steps] == ["link"] and "mv -T" in plan.steps[0].command
    done = parse_facts(FACTS.replace("target_exists=0", "target_exists=1\nversion_json=12.4.20240405\n"
                                     "nvcc=release 12.4\nlink=/usr/local/cuda-12.4").replace("link_kind=absent\n", ""))
    assert plan_install("n1", done, toolkit_spec(M, "12.4"), InstallArgs()).noop


def test_a_toolkit_without_version_file_is_named_by_its_nvcc(tmp_path):
    """Like this machine's /usr/local/cuda-13.0 (assembled without the runfile: nvcc, no
    version.json): preflight says what it found instead of calling it a partial install."""
    facts = parse_facts(FACTS.replace("target_exists=0", "target_exists=1\nnvcc=release 13.0"))
    plan = plan_install("n1", facts, toolkit_spec(M, "13.0"), InstallArgs())
    assert any("without a version file (nvcc -V: release 13.0" in p for p in plan.problems)


@pytest.mark.parametrize("kw", [dict(url="not a url"), dict(url="ftp:/x.run"), dict(url="http://host/"),
                                dict(mirror="ftp://a b"), dict(mirror="mirror.local/cuda")])
def test_a_url_or_mirror_that_cannot_be_fetched_is_refused_before_any_node(kw):
    with pytest.raises(UsageError) as e:
        choose_source(InstallArgs(), toolkit_spec(M, "12.4"), **kw)
    assert next(iter(kw)) in e.value.message and "URL" in e.value.message


def test_a_file_url_is_a_valid_source():
    a = InstallArgs()
    choose_source(a, toolkit_spec(M, "12.4"), url="file:///srv/cuda_12.4.1_550.54.15_linux.run")
    assert a.url.endswith("/cuda_12.4.1_550.54.15_linux.run")


def test_the_plan_says_where_the_link_points_today_and_which_nvcc_stays_first_on_path():
    facts = parse_facts(FACTS.replace("end=1", "link=/usr/local/cuda-11.8\npath_nvcc=/usr/bin/nvcc\n"
                                               "path_nvcc_release=release 11.8\nend=1"))
    plan = plan_install("n1", facts, toolkit_spec(M, "12.4"), InstallArgs(runfile=None, url="http://x/c.run"))
    notes = " | ".join(plan.notes)
    assert "today /usr/local/cuda points to /usr/local/cuda-11.8; the install points it to /usr/local/cuda-12.4" in notes
    assert ("/usr/bin/nvcc (release 11.8) is the nvcc first on PATH in a non-interactive shell, and stays first "
            "after the install") in notes and "--cuda-home /usr/local/cuda-12.4" in notes
    none = plan_install("n1", parse_facts(FACTS), toolkit_spec(M, "12.4"), InstallArgs(url="http://x/c.run"))
    assert any(n.startswith("no nvcc on PATH") for n in none.notes), none.notes
