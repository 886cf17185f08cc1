"""What envcheck writes: a report file is replaced atomically, a device, a FIFO or /dev/stdout is
written in place and never replaced, a directory or an unwritable place is refused before any
work; a failed write (stdout on a full disk or closed, a FIFO nobody reads) is one line on stderr
and a non-zero exit, never a silent 0; Ctrl-C while the CLI loads and a huge $COLUMNS are one
line and a bounded run."""
from __future__ import annotations

import os
import stat
import subprocess
import threading

import pytest

from envcheck.errors import OutputError, UsageError
from envcheck.paths import out_dir, out_file, write_output
from tests.conftest import envcheck_exe, run_cli


def _one_line(r, *words, code=2):
    assert r.returncode == code, (r.returncode, r.stdout[-300:], r.stderr[-1000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envcheck: "), r.stderr[-1000:]
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture
def char_device(tmp_path):
    """A scratch character device (the same numbers as /dev/null): what `--junit /dev/null` as root
    used to replace with a file."""
    dev = tmp_path / "scratch-null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root")
    return dev


# ---- the writer -------------------------------------------------------------------------------
def test_a_regular_file_is_replaced_atomically_keeping_its_mode_and_its_symlink(tmp_path):
    target = tmp_path / "report.xml"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "latest.xml"
    link.symlink_to(target)
    write_output(out_file(str(link), "--junit", "fix"), "new\n", "--junit")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.xml", "report.xml"]   # no temp left


def test_a_new_report_is_readable_by_all(tmp_path):
    write_output(out_file(str(tmp_path / "m.prom"), "--prometheus", "fix"), "x 1\n", "--prometheus")
    assert stat.S_IMODE((tmp_path / "m.prom").stat().st_mode) == 0o644


def test_a_character_device_is_written_in_place_never_replaced(char_device):
    write_output(out_file(str(char_device), "--junit", "fix"), "<testsuites/>\n", "--junit")
    assert stat.S_ISCHR(char_device.stat().st_mode)


def test_a_fifo_is_written_in_place_and_one_nobody_reads_is_one_error(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="no process reads"):
        write_output(out_file(str(fifo), "--junit", "fix"), "x\n", "--junit")
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    for _ in range(200):     # until the reader has it open
        try:
            write_output(str(fifo), "through the pipe\n", "--junit")
            break
        except OutputError:
            threading.Event().wait(0.01)
    reader.join(10)
    assert got == ["through the pipe\n"] and stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("bad,words", [
    ("", "is empty"), ("/", "is a directory"), ("/proc/version", "cannot write in"),
    ("/nonexistent/dir/x.xml", "does not exist"), ("DANGLING", "which does not exist")])
def test_what_cannot_be_a_report_file_is_refused_before_any_work(tmp_path, bad, words):
    if bad == "DANGLING":
        bad = str(tmp_path / "link")
        os.symlink(tmp_path / "nowhere" / "x", bad)
    with pytest.raises(UsageError, match=words):
        out_file(bad, "--junit", "fix")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("bad,words", [
    ("", "is empty"), ("/dev/null", "character device"), ("/proc/x/logs", "does not exist"),
    ("/proc/sys", "cannot write"), ("FILE", "not a directory"), ("DANGLING", "does not exist")])
def test_what_cannot_be_an_output_directory_is_refused(tmp_path, bad, words):
    if bad == "FILE":
        bad = str(tmp_path / "f")
        open(bad, "w").close()
    if bad == "DANGLING":
        bad = str(tmp_path / "link")
        os.symlink(tmp_path / "nowhere", bad)
    with pytest.raises(UsageError, match=words):
        out_dir(bad, "--log-dir", "fix")


# ---- through the console script -----------------------------------------------------------------
def test_doctor_junit_onto_a_character_device_leaves_it_a_character_device(char_device):
    r = run_cli("doctor", "--local", "--quick", "--no-expect-gpus", "--junit", str(char_device),
                "--prometheus", "/dev/stdout", timeout=180)
    assert r.returncode in (0, 1), r.stderr[-1000:]
    assert stat.S_ISCHR(char_device.stat().st_mode)
    assert "# TYPE envcheck_doctor" in r.stdout          # /dev/stdout: written through, in place


@pytest.mark.parametrize("flag,target,words", [("--junit", "/tmp", "is a directory"),
                                               ("--prometheus", "/proc/x.prom", "cannot write in")])
def test_doctor_refuses_a_directory_or_an_unwritable_place_before_it_runs(flag, target, words):
    r = run_cli("doctor", "--local", "--quick", flag, target, timeout=60)
    _one_line(r, flag, words)
    assert r.stdout == ""


def test_audit_json_to_a_full_disk_is_never_exit_0():
    with open("/dev/full", "w") as full:
        r = subprocess.run([envcheck_exe(), "audit", "--json"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=180)
    assert r.returncode == 2, r.stderr
    # the audit's own note may come first; the lost report is one line, and the last
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("envcheck: cannot write the output to stdout: No space left on device")
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr


@pytest.mark.parametrize("argv", [["check", "--cuda", "10.0", "--json"], ["--help"], ["version"]])
def test_any_output_to_a_full_disk_or_a_closed_stdout_is_one_line(argv):
    with open("/dev/full", "w") as full:
        r = subprocess.run([envcheck_exe(), *argv], stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    _one_line(r, "No space left on device", code=2)
    closed = subprocess.run(["sh", "-c", '"$0" "$@" >&-', envcheck_exe(), *argv], stderr=subprocess.PIPE,
                            text=True, timeout=60)
    _one_line(closed, "stdout", "closed", code=2)
    assert "Exception ignored" not in r.stderr + closed.stderr



@pytest.mark.parametrize("argv", [["check", "--cuda", "10.0", "--json"], ["--help"], ["version"]])
def test_a_pipe_whose_reader_has_gone_is_a_quiet_non_zero_exit(argv):
    # `envcheck … | head`: the reader stopped reading (EPIPE), as every Unix filter treats it: no
    # line for a reader that is gone, and still never exit 0 with the output lost
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([envcheck_exe(), *argv], stdout=w, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (2, "")

def test_ctrl_c_while_the_cli_loads_is_one_line_and_130(tmp_path):
    # a KeyboardInterrupt raised by the import of typer, as a Ctrl-C during start-up would be
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'typer':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n")
    r = run_cli("check", "--cuda", "10.0", env={"PYTHONPATH": str(tmp_path)})
    _one_line(r, "interrupted", code=130)
    assert "Traceback" not in r.stderr


def test_a_huge_columns_is_bounded():
    r = run_cli("doctor", "--help", env={"COLUMNS": "2000000000"}, timeout=60)
    assert r.returncode == 0 and r.stderr == ""
    assert max(len(line) for line in r.stdout.splitlines()) <= 100
    r = run_cli("check", "--driver", "410.48", "--cuda", "12.4", env={"COLUMNS": "2000000000"}, timeout=60)
    assert r.returncode == 1 and max(len(line) for line in r.stdout.splitlines()) <= 1000


def test_help_puts_the_shared_host_options_under_their_own_heading_with_real_metavars():
    r = run_cli("audit", "--help", env={"COLUMNS": "80"})
    assert "Hosts and SSH:" in r.stdout and "--connect-timeout SECONDS" in r.stdout
    own, shared = r.stdout.split("Hosts and SSH:")
    assert "--forks" in shared and "--forks" not in own and "--deep" in own
    assert "<bool>" not in r.stdout and "<str>" not in r.stdout and "list[" not in r.stdout
    # the description column starts by column 34 and takes the rest of the 80
    assert any(line.startswith("  --save DIR") and len(line) > 60 for line in r.stdout.splitlines())


def test_the_old_timeout_name_still_works_and_says_what_it_now_is():
    for argv, new in ((["launch", "--timeout", "0", "--", "x.py"], "--run-timeout 0"),
                      (["nccl-test", "--timeout=nan"], "--collective-timeout nan"),
                      (["audit", "--timeout", "-1"], "--command-timeout -1")):
        r = run_cli(*argv)
        note, error = r.stderr.strip().splitlines()
        assert r.returncode == 2 and "is the older name of " + new.split()[0] in note, r.stderr
        assert error.startswith("envcheck: " + new), r.stderr
