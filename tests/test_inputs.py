"""Reading what a user hands envcheck (envcheck/inputs.py): bounded reads, refused devices and
directories, JSON and YAML with bounded nesting and aliases. Real files in a temp dir."""
import io
import os

import pytest

from envcheck import inputs
from envcheck.errors import UsageError


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 1024)
    assert inputs.read_bytes(str(p), "facts file", "fix", limit=1024) == b"x" * 1024
    with pytest.raises(UsageError, match=r"^facts file .*/f: more than 0 MiB; not reading further$"):
        inputs.read_bytes(str(p), "facts file", "fix", limit=1023)
    assert inputs.MAX_FILE_BYTES == 16 * 1024 * 1024


def test_directories_devices_and_missing_files_are_usage_errors(tmp_path):
    for path, why in ((str(tmp_path), "is a directory"), ("/dev/null", "is a device or socket, not a file"),
                      (str(tmp_path / "none"), "cannot read: No such file or directory")):
        with pytest.raises(UsageError) as e:
            inputs.read_bytes(path, "hosts file", "give a file")
        assert e.value.message == f"hosts file {path}: {why}" and e.value.fix == "give a file"


def test_a_pipe_is_read_whole_and_bounded(tmp_path):
    r, w = os.pipe()
    os.write(w, b"node01\nnode02\n")
    os.close(w)
    assert inputs.read_text(f"/proc/self/fd/{r}", "hosts file", "fix") == "node01\nnode02\n"
    os.close(r)


def test_text_must_be_utf8(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"ok\xff")
    with pytest.raises(UsageError, match=r"not UTF-8 text \(invalid start byte at byte 2\)"):
        inputs.read_text(str(p), "matrix", "fix")


def test_a_stream_is_bounded_with_or_without_a_byte_buffer():
    assert inputs.read_stream(io.StringIO("abc"), "stdin", "fix", limit=3) == "abc"
    with pytest.raises(UsageError, match="^stdin: more than"):
        inputs.read_stream(io.StringIO("abcd"), "stdin", "fix", limit=3)
    raw = io.TextIOWrapper(io.BytesIO(b"ab\xffc"), encoding="utf-8")
    assert inputs.read_stream(raw, "stdin", "fix", limit=4) == "ab\ufffdc"
    with pytest.raises(UsageError):
        inputs.read_stream(io.TextIOWrapper(io.BytesIO(b"abcde")), "stdin", "fix", limit=4)


def test_json_nesting_at_the_limit_and_one_deeper():
    n = inputs.MAX_NESTING
    assert inputs.parse_json("[" * n + "]" * n, "facts", "fix") is not None
    with pytest.raises(UsageError, match=f"nested more than {n} levels deep"):
        inputs.parse_json("[" * (n + 1) + "]" * (n + 1), "facts", "fix")
    # brackets inside strings (and escaped quotes) are not nesting
    deep_text = '"' + "[" * (n + 5) + '\\"' + '"'
    assert inputs.parse_json(f"[{deep_text}]", "facts", "fix") == ["[" * (n + 5) + '"']
    with pytest.raises(UsageError, match=r"^facts: not JSON \("):
        inputs.parse_json("{", "facts", "fix")


def test_yaml_nesting_and_aliases_of_collections_at_the_limit_and_one_more():
    n = inputs.MAX_NESTING
    assert inputs.parse_yaml("[" * n + "]" * n, "playbook", "fix") is not None
    with pytest.raises(UsageError, match=f"nested more than {n} levels deep"):
        inputs.parse_yaml("[" * (n + 1) + "]" * (n + 1), "playbook", "fix")
    k = inputs.MAX_YAML_ALIASES

    def doc(aliases):
        return "a: &x [1, 2]\nb: [" + ", ".join(["*x"] * aliases) + "]\n"
    assert inputs.parse_yaml(doc(k), "playbook", "fix")["b"] == [[1, 2]] * k
    with pytest.raises(UsageError, match=f"more than {k} YAML aliases"):
        inputs.parse_yaml(doc(k + 1), "playbook", "fix")


def test_bad_yaml_names_the_line():
    with pytest.raises(UsageError, match=r"^playbook: not valid YAML at line 2: mapping values are not allowed"):
        inputs.parse_yaml("a: 1\nb: c: d\n", "playbook", "fix")


def test_a_fifo_nobody_writes_to_is_read_as_empty_not_waited_on(tmp_path):
    # opened non-blocking (a blocking open of a FIFO waits for a writer forever)
    import threading
    p = tmp_path / "fifo"
    os.mkfifo(p)
    got = []
    t = threading.Thread(target=lambda: got.append(inputs.read_bytes(str(p), "hosts file", "fix")), daemon=True)
    t.start()
    t.join(10)
    assert got == [b""]


def test_a_block_device_and_a_socket_are_refused(tmp_path):
    import socket
    import stat
    if os.geteuid() == 0:
        blk = tmp_path / "blk"
        os.mknod(blk, stat.S_IFBLK | 0o600, os.makedev(7, 250))
        with pytest.raises(UsageError) as e:
            inputs.read_bytes(str(blk), "matrix", "fix")
        assert e.value.message.endswith(": is a device or socket, not a file") or "cannot read" in e.value.message
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "sock"))
    with pytest.raises(UsageError):
        inputs.read_bytes(str(tmp_path / "sock"), "matrix", "fix")
    s.close()


def test_the_cap_is_said_in_mib():
    two = 2 * 1024 * 1024
    with pytest.raises(UsageError) as e:
        inputs.read_stream(io.StringIO("x" * (two + 1)), "stdin", "fix", limit=two)
    assert (e.value.message, e.value.fix) == ("stdin: more than 2 MiB", "fix")
    raw = io.TextIOWrapper(io.BytesIO(b"x" * (two + 1)))
    with pytest.raises(UsageError) as e:
        inputs.read_stream(raw, "stdin", "fix", limit=two)
    assert e.value.message == "stdin: more than 2 MiB; not reading further"


def test_nesting_counts_what_is_open_not_what_was_ever_opened():
    many = "[" + "[], " * 200 + "{}]"
    assert len(inputs.parse_json(many, "facts", "fix")) == 201
    assert len(inputs.parse_yaml(many, "playbook", "fix")) == 201
    # an escaped quote does not end a string: the brackets after it are still text
    n = inputs.MAX_NESTING
    text = '["\\"' + "[" * (n + 5) + '"]'
    assert inputs.parse_json(text, "facts", "fix") == ['"' + "[" * (n + 5)]
    text = '["\\\\", ' + "[" * 3 + "]" * 3 + "]"    # an escaped backslash ends its escape
    assert inputs.parse_json(text, "facts", "fix") == ["\\", [[[]]]]


def test_aliases_of_scalars_are_not_counted_as_collections():
    doc = "a: &x https://example.org/source\nb: [" + ", ".join(["*x"] * 40) + "]\n"
    assert inputs.parse_yaml(doc, "matrix", "fix")["b"][39] == "https://example.org/source"


def test_yaml_errors_without_a_problem_mark_still_say_what():
    import yaml
    with pytest.raises(UsageError) as e:
        inputs.parse_yaml("a: [1", "playbook", "do this", loader=yaml.SafeLoader)
    assert e.value.message.startswith("playbook: not valid YAML at line ") and e.value.fix == "do this"
