"""The pure parts of install-cuda: source/checksum choice, the probe's sections read into the
plan's facts, planning from facts."""
from __future__ import annotations

from typing import Optional

import pytest

from envcheck.errors import UsageError
from envcheck.install.cuda import InstallArgs, plan_install
from envcheck.install.cuda_facts import cuda_facts, probe_request
from envcheck.install.cuda_source import choose_source
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.matrix.load import load_matrix

M = load_matrix()


def facts(version: str = "12.4", gcc: str = "12.2.0", file_version: Optional[str] = None,
          nvcc: Optional[str] = None, exists: bool = False, link: Optional[str] = None,
          path_nvcc: Optional[str] = None, path_release: Optional[str] = None):
    """The plan's facts from a probe document as a clean H100 node's probe prints it (the
    sections and places install-cuda asks for), with the target and the symlink as given."""
    spec, args = toolkit_spec(M, version), InstallArgs()
    target = args.target(spec)
    disk = [{"path": p, "kind": None, "link": None, "uid": None, "writable": p == "/var/log",
             "free_kb": 104857600} for p in probe_request(spec, args).paths]
    for d in disk:
        if d["path"] == target and exists:
            d["kind"] = "dir"
        if d["path"] == args.link() and link:
            d.update(kind="link", link=link)
    doc = {"schema": 1, "origin": "probe", "privilege": {"uid": 0, "mode": "root"}, "os": {"arch": "x86_64"},
           "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}],
           "gcc": {"version": gcc}, "tools": {"curl": "/usr/bin/curl", "wget": None}, "disk": disk,
           "toolkit": [{"path": target, "exists": exists, "version_file": {"name": "version.json", "version": file_version}
                        if file_version else None, "nvcc": {"release": nvcc} if nvcc else None}]}
    if path_nvcc:   # the cuda section: the nvcc first on a non-interactive PATH
        doc["cuda"] = {"nvcc": {"path": path_nvcc, "release": path_release}}
    return cuda_facts(doc, spec, args)


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
    plan = plan_install("n1", facts(), toolkit_spec(M, "12.4"),
                        InstallArgs(expect_sha256="a" * 64))
    assert not plan.problems, plan.problems
    assert [s.kind for s in plan.steps] == ["fetch", "probe", "install"]
    assert "--defaultroot=/usr/local/cuda-12.4 --no-drm --no-man-page" in plan.steps[2].text
    assert "--driver" not in plan.steps[2].command


def test_plan_refuses_cuda_10_on_an_h100_unless_forced():
    spec = toolkit_spec(M, "10.0")
    f = facts("10.0", gcc="7.5.0")
    plan = plan_install("n1", f, spec, InstallArgs(expect_sha256="a" * 64))
    assert any("H100 80GB HBM3 (sm_90) is not supported by CUDA 10.0" in p for p in plan.problems)
    forced = plan_install("n1", f, spec, InstallArgs(expect_sha256="a" * 64, force=True))
    assert not forced.problems and any("installing anyway" in n for n in forced.notes)


def test_an_installed_toolkit_with_a_missing_symlink_plans_only_the_link():
    plan = plan_install("n1", facts(exists=True, file_version="12.4.1", nvcc="12.4"), toolkit_spec(M, "12.4"),
                        InstallArgs())
    assert [s.kind for s in plan.steps] == ["link"] and "mv -T" in plan.steps[0].command
    done = facts(exists=True, file_version="12.4.20240405", nvcc="12.4", link="/usr/local/cuda-12.4")
    assert plan_install("n1", done, toolkit_spec(M, "12.4"), InstallArgs()).noop


def test_a_toolkit_without_version_file_is_named_by_its_nvcc(tmp_path):
    """Like this machine's /usr/local/cuda-13.0 (assembled without the runfile: nvcc, no
    version.json): preflight says what it found instead of calling it a partial install."""
    plan = plan_install("n1", facts("13.0", exists=True, nvcc="13.0"), toolkit_spec(M, "13.0"), InstallArgs())
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
    f = facts(link="/usr/local/cuda-11.8", path_nvcc="/usr/bin/nvcc", path_release="11.8")
    plan = plan_install("n1", f, toolkit_spec(M, "12.4"), InstallArgs(runfile=None, url="http://x/c.run"))
    notes = " | ".join(plan.notes)
    assert "today /usr/local/cuda points to /usr/local/cuda-11.8; the install points it to /usr/local/cuda-12.4" in notes
    assert ("/usr/bin/nvcc (release 11.8) is the nvcc first on PATH in a non-interactive shell, and stays first "
            "after the install") in notes and "--cuda-home /usr/local/cuda-12.4" in notes
    none = plan_install("n1", facts(), toolkit_spec(M, "12.4"), InstallArgs(url="http://x/c.run"))
    assert any(n.startswith("no nvcc on PATH") for n in none.notes), none.notes


def test_the_staging_directory_is_made_only_under_an_existing_tmpdir(tmp_path):
    import subprocess

    from envcheck.install import staging
    missing = tmp_path / "no" / "tmp"
    r = subprocess.run(["sh", "-c", staging.open_command(str(missing), "node01")], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and "is not a directory on this node" in r.stderr
    assert not (tmp_path / "no").exists()
    ok = subprocess.run(["sh", "-c", staging.open_command(str(tmp_path), "node01")], capture_output=True,
                        text=True, timeout=30)
    stage = staging.parse_open(ok.stdout, str(tmp_path))
    assert stage and (tmp_path / stage.rsplit("/", 1)[1]).is_dir()
