"""How the harness starts and stops a host's launcher (envcheck/ranks/start.py): the run's own
directory on the node and the command that stops the launcher and its ranks. Pure strings, no
node needed; tests/allreduce and tests/launch run them on simulated hosts."""
from envcheck.ranks.start import kill_cmd, launcher_cmd, run_dir


def test_the_run_directory_and_the_kill_command_name_the_run():
    assert run_dir("envcheck-ar-ab", 3) == "${TMPDIR:-/tmp}/envcheck-ar-ab-3"
    cmd = kill_cmd("envcheck-ar-ab", 3, wait_s=2.0)
    assert cmd.startswith('d="${TMPDIR:-/tmp}/envcheck-ar-ab-3"; p=$(cat "$d/launcher.pid" 2>/dev/null); ')
    assert "[ $i -lt 20 ]" in cmd and 'kill -KILL -- -"$p"' in cmd and cmd.endswith('rm -rf "$d"; true')


def test_the_launcher_starts_in_that_directory_which_expands_on_the_node():
    cmd = launcher_cmd("python3", "allreduce_launcher.py", "envcheck-ar-ab", 1, ["--nproc", 2, "--", "a b"])
    assert cmd.startswith("python3 -c ")
    assert cmd.endswith(" launch --dir \"${TMPDIR:-/tmp}/envcheck-ar-ab-1\" --nproc 2 -- 'a b'")
