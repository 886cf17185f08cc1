"""envcheck/paths.py: a path a user names is refused in one line saying what is there instead."""
import os

import pytest

from envcheck.errors import UsageError
from envcheck.paths import local_dir, local_file, local_path


def _refused(fn, path):
    with pytest.raises(UsageError) as e:
        fn(str(path), "--x", "fix it")
    assert e.value.fix == "fix it"
    return e.value.message


def test_what_each_check_takes_and_what_it_says_of_the_rest(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    assert local_file(str(f), "--x", "") == str(f) and local_file(str(fifo), "--x", "") == str(fifo)
    assert local_path(str(f), "--x", "") == str(f) and local_path(str(tmp_path), "--x", "") == str(tmp_path)
    assert local_dir(str(tmp_path), "--x", "") == str(tmp_path)
    assert _refused(local_file, tmp_path / "no") == f"--x '{tmp_path / 'no'}': no such file"
    assert _refused(local_file, tmp_path) == f"--x '{tmp_path}' is a directory, not a file"
    assert _refused(local_path, tmp_path / "no") == f"--x '{tmp_path / 'no'}': no such file or directory"
    assert _refused(local_path, fifo) == f"--x '{fifo}' is a FIFO, not a file or directory"
    assert _refused(local_path, "/dev/null") == "--x '/dev/null' is a character device, not a file or directory"
    assert _refused(local_dir, f) == f"--x '{f}': a file, not a directory"
    dangling = tmp_path / "d"
    dangling.symlink_to(tmp_path / "gone")
    assert _refused(local_file, dangling).endswith("which does not exist")
