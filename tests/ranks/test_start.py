"""How the harness starts and stops a host's launcher (envcheck/ranks/start.py): the run's own
directory on the node and the command that stops the launcher and its ranks. Pure strings, no
node needed; tests/allreduce and tests/launch run them on simulated hosts."""
import subprocess

from envcheck.ranks.start import kill_cmd, launcher_cmd, run_dir


def test_the_run_directory_and_the_kill_command_name_the_run(tmp_path):
    d = run_dir("envcheck-ar-ab", 3)
    # under $TMPDIR when it is a directory, else /tmp (a TMPDIR naming nothing is never created)
    for tmpdir, want in ((str(tmp_path), f"{tmp_path}/envcheck-ar-ab-3"), (str(tmp_path / "no"), "/tmp/envcheck-ar-ab-3"),
                         ("", "/tmp/envcheck-ar-ab-3")):
        out = subprocess.run(["sh", "-c", f'printf %s "{d}"'], env={"PATH": "/usr/bin:/bin", "TMPDIR": tmpdir},
                             capture_output=True, text=True, timeout=10).stdout
        assert out == want, (tmpdir, out)
    cmd = kill_cmd("envcheck-ar-ab", 3, wait_s=2.0)
    assert cmd.startswith(f'd="{d}"; p=$(cat "$d/launcher.pid" 2>/dev/null); ')
    assert "[ $i -lt 20 ]" in cmd and 'kill -KILL -- -"$p"' in cmd and cmd.endswith('rm -rf "$d"; true')


def test_the_launcher_starts_in_that_directory_which_expands_on_the_node():
    cmd = launcher_cmd("python3", "allreduce_launcher.py", "envcheck-ar-ab", 1, ["--nproc", 2, "--", "a b"])
    assert cmd.startswith("python3 -c ")
    assert cmd.endswith(f" launch --dir \"{run_dir('envcheck-ar-ab', 1)}\" --nproc 2 -- 'a b'")
