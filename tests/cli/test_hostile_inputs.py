"""Careless or hostile input, one CLI call each through the installed console script: every one
is a one-line error naming the input and the fix, exit 2, nothing written and nothing started;
endless input is bounded. (Inputs that need a node are tested on private nodes or the simulated
cluster: tests/install/test_install_cudnn.py, test_envblock.py, test_staging_cluster.py.)"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import envcheck_exe, run_cli

# "At once" is held by memory, not by the clock (a loaded CI machine made 15 s bounds fail): the
# commands run with their address space capped at CAP MiB, so work that grows with the hostile
# input (expanding an alias bomb, building 10^10 host names, reading /dev/zero) dies with a
# MemoryError instead of a one-line error; the run's timeout bounds a hang.
CAP = 1024


def one_line_usage_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envcheck: "), r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


# --- endless input is bounded ------------------------------------------------------------
@pytest.mark.parametrize("argv,named", [
    (["check", "/dev/zero"], "character device"),
    (["matrix", "validate", "/dev/zero"], "character device"),
    (["audit", "--hosts-file", "/dev/zero"], "character device"),
    (["check", "/"], "is a directory"),
])
def test_endless_or_odd_files_are_refused_without_reading_them(argv, named):
    r = run_cli(*argv, timeout=30, memory_mib=CAP)
    one_line_usage_error(r, named)


def test_explain_reads_at_most_its_cap_from_stdin():
    r = run_cli("explain", "-", input="x" * (17 * 1024 * 1024), timeout=60)
    one_line_usage_error(r, "stdin", "more than 16 MiB")


def test_a_pipe_of_facts_is_still_read(tmp_path):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps({"schema": 1, "cuda": {"version": "10.0"}}))
    r = run_cli("check", str(f))
    assert r.returncode in (0, 1), r.stderr


# --- hostlists: capped on the total, before anything is built ---------------------------------
@pytest.mark.parametrize("hosts", [["node[1-100000][1-100000]"], ["a[1-60000],b[1-60000]"],
                                   ["a[1-40000]", "b[1-40000]"], ["n[1-99999999999]"]])
def test_huge_hostlists_are_refused_on_their_total_at_once(hosts):
    r = run_cli("audit", *hosts, timeout=60, memory_mib=CAP)
    one_line_usage_error(r, "more than 65536 hosts" if "99999999999" not in hosts[0] else "9 digits")


def test_a_hosts_file_adds_up_with_the_arguments(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("\n".join(f"r{i}n[1-3000]" for i in range(30)) + "\n")
    one_line_usage_error(run_cli("audit", "--hosts-file", str(f), timeout=60), "more than 65536 hosts")


def test_a_300_character_host_name_is_a_usage_error():
    one_line_usage_error(run_cli("audit", "a" * 300), "longer than DNS allows")


# --- only NO host arguments means this machine -------------------------------------------------
@pytest.mark.parametrize("argv,named", [
    (["install-cuda", "12.4", "", "--dry-run"], "HOSTS is empty"),
    (["audit", ""], "HOSTS is empty"),
    (["audit", "@"], "names no host"),
    (["audit", "user@"], "names no host"),
    (["env", "--cuda-home", "/usr/local/cuda", "   ", "--dry-run"], "HOSTS is empty"),
])
def test_an_empty_or_invalid_host_argument_never_means_this_machine(argv, named):
    one_line_usage_error(run_cli(*argv), named)


def test_an_empty_hosts_file_never_means_this_machine(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("# nothing yet\n\n")
    one_line_usage_error(run_cli("audit", "--hosts-file", str(f)), "lists no hosts")


# --- tracebacks become one line ---------------------------------------------------------------
def test_a_version_of_thousands_of_digits_is_a_usage_error():
    one_line_usage_error(run_cli("check", "--cuda", "1" * 5000), "--cuda")
    one_line_usage_error(run_cli("matrix", "show", "1" * 5000))


def test_deeply_nested_json_is_refused(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text("[" * 100000 + "]" * 100000)
    one_line_usage_error(run_cli("check", str(f)), "nested more than")


def test_a_yaml_alias_bomb_and_deep_nesting_in_a_playbook_are_refused_quickly(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append("name: *a9")
    bomb.write_text("\n".join(lines) + "\n")
    one_line_usage_error(run_cli("provision", str(bomb), "--dry-run", timeout=60, memory_mib=CAP), "aliases")
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    r = run_cli("provision", str(deep), "--dry-run")
    one_line_usage_error(r, str(deep))
    assert "nest" in r.stderr      # ours, or the YAML parser's own depth limit: one line either way


def test_a_malformed_url_is_a_usage_error():
    one_line_usage_error(run_cli("install-cuda", "12.4", "--url", "http://[bad", "--dry-run"), "--url")


@pytest.mark.parametrize("flag,path", [("--junit", "/proc/version"), ("--prometheus", "/proc/x.prom")])
def test_doctor_reports_an_unwritable_output_before_or_instead_of_a_traceback(flag, path):
    r = run_cli("doctor", "--local", "--quick", "--no-expect-gpus", flag, path, timeout=120)
    one_line_usage_error(r, path)


# --- silently accepted values are refused --------------------------------------------------------
@pytest.mark.parametrize("argv,named", [
    (["check", "--cuda", "10..0"], "--cuda"),
    (["check", "--driver", "1e9"], "--driver"),
    (["check", "--cuda", "10.0; x"], "--cuda"),
    (["check", "--cuda", "10.0\n"], "--cuda"),
    (["check", "--cuda", "１０.０"], "--cuda"),
    (["check", "--torch", "2.1.0junk"], "torch"),
    (["install-cuda", "12.4; x", "--dry-run"], "VERSION"),
    (["install-cudnn", "x.tgz", "--cuda", "abc"], "--cuda"),
    (["install-cuda", "12.4", "--install-timeout", "0", "--dry-run"], "--install-timeout"),
    (["install-cuda", "12.4", "--install-timeout", "-5", "--dry-run"], "--install-timeout"),
    (["install-cuda", "12.4", "--install-timeout", "nan", "--dry-run"], "--install-timeout"),
    (["nccl-test", "--rendezvous-timeout", "inf"], "--rendezvous-timeout"),
    (["nccl-test", "--run-timeout", "0"], "--run-timeout"),
    (["nccl-test", "--connect-timeout", "inf"], "--connect-timeout"),
    (["nccl-test", "--min-busbw", "nan"], "--min-busbw"),
    (["nccl-test", "--max-bytes", "99999999999999999999G"], "size"),
    (["nccl-test", "--max-bytes", "1000G"], "above 256G"),
    (["nccl-test", "--nproc-per-node", "100000"], "--nproc-per-node"),
    (["nccl-test", "--warmup", "1000000000"], "--warmup"),
    (["doctor", "--collective-timeout", "nan"], "--collective-timeout"),
    (["doctor", "--master-port", "70000"], "--master-port"),
    (["doctor", "--max-bytes", "1e20G"], "size"),
    (["install-cuda", "12.4", "--prefix", "", "--dry-run"], "--prefix"),
    (["install-cuda", "12.4", "--prefix", "usr/local", "--dry-run"], "--prefix"),
    (["install-cuda", "12.4", "--tmpdir", "", "--dry-run"], "--tmpdir"),
    (["install-cudnn", "x.tgz", "--tmpdir", "scratch"], "--tmpdir"),
    (["env", "--cuda-home", "/usr/local/cuda", "--file", "/etc/passwd", "--dry-run"], "/etc/passwd"),
    (["env", "--cuda-home", "/usr/local/cuda", "--file", "/dev/zero", "--dry-run"], "/dev/zero"),
])
def test_values_that_were_silently_accepted_are_usage_errors(argv, named, tmp_path):
    r = run_cli(*argv, env={"TMPDIR": str(tmp_path)}, timeout=60)
    one_line_usage_error(r, named)
    assert os.listdir(tmp_path) == []        # no worker, no run directory: nothing started


@pytest.mark.parametrize("doc,named", [({"torch": 5}, "'torch' is int"),
                                       ({"schema": 999, "cuda": {"version": "10.0"}}, "schema")])
def test_check_refuses_malformed_facts_instead_of_finding_nothing(tmp_path, doc, named):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    one_line_usage_error(run_cli("check", str(f)), named)


# --- playbooks: files stay inside --files; every step is valid before any runs -------------------
def _playbook(tmp_path, steps):
    import yaml
    from envcheck.provision.playbooks import find_playbook
    pb = yaml.safe_load(find_playbook("cuda10.0-cudnn7.6-torch1.1").read_text())
    pb["name"], pb["steps"] = "hostile", steps
    path = tmp_path / "pb" / "hostile.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(pb, sort_keys=False))
    return path


@pytest.mark.parametrize("runfile", ["../../../../../../etc/passwd", "/etc/passwd"])
def test_a_playbook_runfile_outside_files_is_refused_even_without_checksum(tmp_path, runfile):
    files = tmp_path / "files"
    files.mkdir()
    pb = _playbook(tmp_path, [{"install-cuda": {"version": "10.0.130", "runfile": runfile}}])
    r = run_cli("provision", str(pb), "--files", str(files), "--no-checksum", "--dry-run")
    one_line_usage_error(r, "steps[0].install-cuda.runfile", "outside")


def test_a_later_invalid_step_stops_the_playbook_before_the_first_step_writes(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    pb = _playbook(tmp_path, [{"env": {"cuda_home": "/usr/local/cuda-10.0"}},
                              {"pip": {"packages": ["demo-pkg >=> 1"]}}])
    r = run_cli("provision", str(pb), env={"HOME": str(home)})
    one_line_usage_error(r, "demo-pkg >=> 1")
    assert os.listdir(home) == []          # the env step never wrote ~/.bashrc


# --- second round (issue 24): launch bounds, names and directories; env's file and values -------
@pytest.mark.parametrize("argv,named", [
    (["launch", "--nproc-per-node", "100000"], "--nproc-per-node 100000"),
    (["launch", "--nproc-per-node", "1e20"], "--nproc-per-node '1e20'"),
    (["launch", "--grace", "inf"], "--grace inf"),
    (["launch", "--grace", "100000000"], "--grace 100000000"),
    (["launch", "--run-timeout", "1e400"], "--run-timeout"),
    (["launch", "--env", "A B=1"], "--env 'A B=1'"),
    (["launch", "--env", "1A=x"], "--env '1A=x'"),
    (["launch", "--env", "A\nB=1"], "--env"),
    (["launch", "--env", "RANK=3"], "--env RANK"),
    (["launch", "--log-dir", ""], "--log-dir is empty"),
    (["launch", "--log-dir", "/dev/null"], "character device"),
    (["launch", "--log-dir", "/proc/x/logs"], "does not exist"),
    (["launch", "--log-dir", "/proc/sys"], "cannot write"),
    (["launch", "--sync", "/nonexistent/x"], "--sync"),
])
def test_launch_refuses_at_once_before_any_preflight(argv, named, tmp_path):
    r = run_cli(*argv, "--", "train.py", env={"TMPDIR": str(tmp_path)}, timeout=60, memory_mib=CAP)
    one_line_usage_error(r, named)
    assert os.listdir(tmp_path) == []


def test_launch_log_dir_that_is_a_file_or_a_dangling_symlink_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    one_line_usage_error(run_cli("launch", "--log-dir", str(f), "--", "t.py"), "a file, not a directory")
    one_line_usage_error(run_cli("launch", "--log-dir", str(tmp_path / "link"), "--", "t.py"), "does not exist")
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize("file", ["~/.netrc", ".npmrc", "~/.pypirc", ".wgetrc", "/etc/passwd", "~/notes.sh"])
def test_env_writes_only_to_shell_startup_files_it_knows(file, tmp_path):
    r = run_cli("env", "--cuda-home", "/usr/local/cuda", "--file", file, "--dry-run",
                env={"HOME": str(tmp_path)})
    one_line_usage_error(r, "not a shell start-up file", "--file-anything")


def test_env_file_anything_writes_where_it_is_told(tmp_path):
    r = run_cli("env", "--cuda-home", "/usr/local/cuda", "--file", "~/.cuda.env", "--file-anything",
                env={"HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert "export CUDA_HOME=/usr/local/cuda" in (tmp_path / ".cuda.env").read_text()


@pytest.mark.parametrize("home", ["", None])
def test_env_with_home_unset_or_empty_is_an_error_never_slash_bashrc(home, tmp_path):
    env = dict(os.environ, HOME=home) if home is not None else {k: v for k, v in os.environ.items() if k != "HOME"}
    r = subprocess.run([envcheck_exe(), "env", "--cuda-home", "/usr/local/cuda"], capture_output=True,
                       text=True, env=env, timeout=60, cwd=tmp_path)
    assert r.returncode == 1 and "HOME is unset or empty" in r.stdout, (r.stdout, r.stderr)
    assert not os.path.exists("/.bashrc") or "envcheck" not in open("/.bashrc").read()


@pytest.mark.parametrize("argv,named", [
    ([b"env", b"--cuda-home", b"/usr/local/cuda-12.4\nexport X=1", b"--dry-run"], "--cuda-home"),
    ([b"env", b"--cuda-home", b"/usr/local/cuda-\xff", b"--dry-run"], "not UTF-8"),
    ([b"install-cuda", b"12.4", b"--url", b"https://x/cuda_12.4.1_\xff.run", b"--dry-run"], "not UTF-8"),
    ([b"install-cudnn", b"x.tgz", b"--cuda-home", b"/opt/\xfe"], "not UTF-8"),
    ([b"install-cudnn", b"x.tgz", b"--cuda-home", b"opt/cuda"], "not an absolute path"),
])
def test_control_characters_and_non_utf8_bytes_are_usage_errors(argv, named, tmp_path):
    r = subprocess.run([envcheck_exe().encode(), *argv], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, HOME=str(tmp_path)))
    one_line_usage_error(r, named)
    assert os.listdir(tmp_path) == []


# --- YAML aliases of scalars count; messages quote a short excerpt only ---------------------------
def _scalar_bomb(path, key="name"):
    # a 1 MiB string anchored once and aliased 20000 times: 20 GB if anything renders it whole
    path.write_text(f"big: &s {'x' * (1 << 20)}\n{key}: [" + ", ".join(["*s"] * 20000) + "]\n")
    return path


@pytest.mark.parametrize("argv", [["matrix", "validate", "BOMB"], ["provision", "BOMB", "--dry-run"],
                                  ["check", "--matrix", "BOMB", "--cuda", "10.0"]])
def test_a_yaml_file_aliasing_one_big_string_thousands_of_times_is_refused_at_once(argv, tmp_path):
    bomb = _scalar_bomb(tmp_path / "bomb.yaml")
    r = run_cli(*[str(bomb) if a == "BOMB" else a for a in argv], timeout=60, memory_mib=CAP)
    one_line_usage_error(r, "aliases (*name) expand it to more than 16 MiB")
    assert len(r.stderr) < 600


@pytest.mark.parametrize("value,words", [('"' + "9" * 1_000_000 + '"', "(1000000 characters)"),
                                         ("9" * 1_000_000, "a value YAML cannot read")])
def test_a_bad_value_of_a_megabyte_is_quoted_as_an_excerpt(tmp_path, value, words):
    m = tmp_path / "matrix.yaml"
    m.write_text(open(os.path.join(os.path.dirname(__file__), "..", "..", "compat_matrix.yaml")).read()
                 .replace("schema: 1", "schema: " + value, 1))
    r = run_cli("matrix", "validate", str(m))
    one_line_usage_error(r, words)
    assert len(r.stderr) < 400


# --- matrix show reads the whole version ----------------------------------------------------------
@pytest.mark.parametrize("kind,what", [("cuda", "12.4junk"), ("cuda", "12.4; rm -rf /"), ("cudnn", "8.9.7x"),
                                       ("torch", "2.1.0junk")])
def test_matrix_show_refuses_a_version_it_would_read_by_its_prefix(kind, what):
    r = run_cli("matrix", "show", kind, what)
    one_line_usage_error(r, "cannot parse version")
    assert r.stdout == ""


def test_matrix_show_refuses_a_non_utf8_byte():
    r = subprocess.run([envcheck_exe(), "matrix", "show", "cuda", b"12.4\xff"], capture_output=True,
                       text=True, timeout=60)
    one_line_usage_error(r, "not UTF-8")


# --- facts files: nested values are type-checked --------------------------------------------------
@pytest.mark.parametrize("doc,words", [
    ({"cuda": {"version": "10.0"}, "gpus": [5, None]}, "gpus["),
    ({"python": {"version": 3.7}, "cuda": {"version": "10.0"}}, "python.version is a number 3.7"),
    ({"schema": True, "cuda": {"version": "10.0"}}, "schema is True"),
    ({"cuda": {"version": "10.0", "toolkits": "none"}}, "cuda.toolkits is a string"),
    ({"driver": {"version": "535.104.05"}, "gpus": [{"name": "A100", "index": 10 ** 12}]}, "gpus[0].index"),
    ({"packages": {"torch": {"version": 2}}}, "packages.torch.version"),
])
def test_check_refuses_facts_whose_nested_values_have_the_wrong_type(doc, words, tmp_path):
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    one_line_usage_error(run_cli("check", str(f)), words)
    one_line_usage_error(run_cli("plan", str(f)), words)


def test_saved_facts_of_this_machine_pass_the_schema(tmp_path):
    r = run_cli("audit", "--save", str(tmp_path / "facts"), timeout=180)
    assert r.returncode in (0, 1), r.stderr
    [saved] = (tmp_path / "facts").iterdir()
    r = run_cli("check", str(saved))
    assert r.returncode in (0, 1), r.stderr
