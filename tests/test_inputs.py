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


# ---- whole messages and fixes; exact bounds (each seen to fail on a planted change: bench/mutation.py)

def refused(fn, *args, **kw):
    with pytest.raises(UsageError) as e:
        fn(*args, **kw)
    return e.value.message, e.value.fix


def test_a_refused_read_says_what_path_and_cap_and_keeps_the_callers_fix(tmp_path):
    p = tmp_path / "facts.json"
    p.write_bytes(b"x" * (3 * 1024 * 1024 + 1))
    mib = 3 * 1024 * 1024
    assert refused(inputs.read_bytes, str(p), "facts file", "pass a smaller file", limit=mib) == (
        f"facts file {p}: more than 3 MiB; not reading further", "pass a smaller file")
    # read_text hands its name, fix and limit on to read_bytes
    assert refused(inputs.read_text, str(p), "matrix", "give a matrix", limit=mib) == (
        f"matrix {p}: more than 3 MiB; not reading further", "give a matrix")
    assert inputs.read_text(str(p), "matrix", "fix", limit=mib + 1) == "x" * (mib + 1)
    p.write_bytes(b"ok\n\xc3")
    assert refused(inputs.read_text, str(p), "hosts file", "save it as UTF-8") == (
        f"hosts file {p}: not UTF-8 text (unexpected end of data at byte 3)", "save it as UTF-8")
    assert refused(inputs.read_text, str(tmp_path), "hosts file", "name a file") == (
        f"hosts file {tmp_path}: is a directory", "name a file")


def test_a_bounded_read_stops_one_byte_past_the_cap():
    # "not reading further": a runaway stream is read limit + 1 bytes, never to its end
    raw = io.TextIOWrapper(io.BytesIO(b"x" * 100))
    assert refused(inputs.read_stream, raw, "stdin", "pipe less", limit=10) == (
        "stdin: more than 0 MiB; not reading further", "pipe less")
    assert raw.buffer.tell() == 11
    text = io.StringIO("y" * 100)
    assert refused(inputs.read_stream, text, "stdin", "pipe less", limit=10) == ("stdin: more than 0 MiB", "pipe less")
    assert text.tell() == 11
    exact = io.StringIO("z" * 10)
    assert inputs.read_stream(exact, "stdin", "fix", limit=10) == "z" * 10


def test_every_read_closes_what_it_opened(tmp_path):
    # the lowest free descriptor is the one the next open gets: a leaked one would shift it
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    probe = os.open(os.devnull, os.O_RDONLY)
    os.close(probe)
    assert inputs.read_bytes(str(p), "f", "fix") == b"abc"
    for path in (str(tmp_path), "/dev/null"):
        with pytest.raises(UsageError):
            inputs.read_bytes(path, "f", "fix")
    with pytest.raises(UsageError):
        inputs.read_bytes(str(p), "f", "fix", limit=2)
    again = os.open(os.devnull, os.O_RDONLY)
    os.close(again)
    assert again == probe


def test_a_read_closes_its_file_even_when_it_got_descriptor_0(tmp_path):
    # stdin closed by the caller (`envcheck ... <&-`): the file opened is then fd 0
    saved = os.dup(0)
    try:
        os.close(0)
        with pytest.raises(UsageError):
            inputs.read_bytes(str(tmp_path), "f", "fix")     # a directory: refused after the open
        with pytest.raises(OSError):
            os.fstat(0)
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_a_pipe_is_read_until_its_writer_closes_it():
    # <(cmd) whose command writes slowly: read to its end, not just what was there at the open
    import threading
    r, w = os.pipe()
    os.write(w, b"node01\n")
    got = []
    t = threading.Thread(target=lambda: got.append(inputs.read_text(f"/proc/self/fd/{r}", "hosts file", "fix")),
                         daemon=True)
    t.start()
    t.join(0.2)            # the reader is waiting on the open pipe (a non-blocking read would return now)
    os.write(w, b"node02\n")
    os.close(w)
    t.join(30)
    os.close(r)
    assert got == ["node01\nnode02\n"]


def test_json_nesting_is_refused_with_its_name_and_fix():
    n = inputs.MAX_NESTING
    deep = "[" * (n + 1) + "]" * (n + 1)
    assert refused(inputs.parse_json, deep, "facts file f.json", "flatten it") == (
        f"facts file f.json: nested more than {n} levels deep", "flatten it")
    assert refused(inputs.parse_json, "{", "facts file f.json", "fix the JSON") == (
        "facts file f.json: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "fix the JSON")


def test_json_depth_counts_brackets_outside_strings_only():
    n = inputs.MAX_NESTING

    def too_deep(text):
        return refused(inputs.parse_json, text, "facts", "fix")[0] == f"facts: nested more than {n} levels deep"

    deeper = "[" * (n + 1) + "]" * (n + 1)
    # a string that ends (plainly, after an escape, after an escaped backslash) leaves the count
    # to what follows it
    for s in ('"a"', '"]]]"', '"\\n"', '"x\\"y"', '"\\\\"', '"a", "b"'):
        assert too_deep(f"[{s}, {deeper}]"), s
    # whitespace, commas, numbers and words close nothing
    assert too_deep("[ " * (n + 1) + "]" * (n + 1))
    assert too_deep("[1, " * n + "[true]" + "]" * n)
    # a closing bracket closes one level: going back down and up again is counted again
    assert too_deep("[" * n + "0]" + ", [[0]]" + "]" * (n - 1))
    assert inputs.parse_json("[" * n + "0]" + ", [0]" + "]" * (n - 1), "facts", "fix") is not None
    # letters are not brackets: a document of junk at depth n is "not JSON", one of depth n + 1
    # is refused for its depth before it is parsed
    assert refused(inputs.parse_json, "[" * n + "X" + "]" * n, "facts", "fix")[0].startswith("facts: not JSON (")
    assert too_deep("X" + deeper)


FIX = "fix the playbook"


def test_yaml_refusals_name_the_document_and_keep_the_fix():
    n, k = inputs.MAX_NESTING, inputs.MAX_YAML_ALIASES
    assert refused(inputs.parse_yaml, "[" * (n + 1) + "]" * (n + 1), "playbook p.yaml", FIX) == (
        f"playbook p.yaml: nested more than {n} levels deep", FIX)
    bomb = "a: &x [1]\nb: [" + ", ".join(["*x"] * (k + 1)) + "]\n"
    assert refused(inputs.parse_yaml, bomb, "playbook p.yaml", FIX) == (
        f"playbook p.yaml: more than {k} YAML aliases (*name) of lists or mappings", FIX)


def test_yaml_syntax_errors_come_from_the_c_parser_where_there_is_one():
    import yaml
    # libyaml's parser (10x faster) by default, for the events and for the load; its wording
    # differs from the pure-Python parser's
    c = hasattr(yaml, "CSafeLoader")
    assert refused(inputs.parse_yaml, "a: 1\nb: c: d\n", "playbook", FIX) == (
        "playbook: not valid YAML at line 2: mapping values are not allowed "
        + ("in this context" if c else "here"), FIX)
    assert refused(inputs.parse_yaml, "a: 1\nb: c: d\n", "playbook", FIX, loader=yaml.SafeLoader)[0] == (
        "playbook: not valid YAML at line 2: mapping values are not allowed here")


def test_yaml_errors_without_a_line_say_the_whole_reason():
    import yaml
    # a reader error has no problem_mark and no `problem`: its text, on one line
    c = "control" if hasattr(yaml, "CSafeLoader") else "special"
    assert refused(inputs.parse_yaml, "a: \x00", "playbook", FIX) == (
        f'playbook: not valid YAML: unacceptable character #x0000: {c} characters are not allowed '
        'in "<unicode string>", position 3', FIX)
    assert refused(inputs.parse_yaml, "a: *nowhere", "playbook", FIX) == (
        "playbook: not valid YAML at line 1: found undefined alias", FIX)


def test_a_yaml_error_embeds_at_most_200_characters_of_what_it_quotes():
    tag = "!" + "t" * 300
    msg, fix = refused(inputs.parse_yaml, f"{tag} x", "playbook", FIX)
    head = "playbook: not valid YAML at line 1: "
    problem = "could not determine a constructor for the tag '" + tag
    assert (msg, fix) == (head + problem[:200], FIX)


def test_a_value_yaml_cannot_construct_is_a_usage_error_with_the_first_clause_of_why():
    assert refused(inputs.parse_yaml, "a: 2001-13-45", "playbook", FIX) == (
        "playbook: a value YAML cannot read (month must be in 1..12)", FIX)
    # int()'s text up to its first ';', words single-spaced, at most 120 characters
    assert refused(inputs.parse_yaml, 'a: !!int "x;  y"', "playbook", FIX) == (
        "playbook: a value YAML cannot read (invalid literal for int() with base 10: 'x)", FIX)
    why = "invalid literal for int() with base 10: '" + "x" * 200
    assert refused(inputs.parse_yaml, "a: !!int " + "x" * 200, "playbook", FIX) == (
        f"playbook: a value YAML cannot read ({why[:120]})", FIX)
    assert refused(inputs.parse_yaml, 'a: !!int "p  q"', "playbook", FIX)[0] == (
        "playbook: a value YAML cannot read (invalid literal for int() with base 10: 'p q')")


MIB16 = inputs.MAX_YAML_EXPANDED


def expand_msg(what):
    return f"{what}: its YAML aliases (*name) expand it to more than 16 MiB"


def test_yaml_written_out_at_exactly_the_cap_is_read_and_one_character_more_is_refused():
    # the size counted (docstring of _check_yaml_events): every scalar its length + 1, every
    # list or mapping 1, every alias the size of what it names (an alias of what has not ended
    # yet, as in a recursive list: 1)
    assert MIB16 == 16 * 1024 * 1024

    def scalars(t):         # [&a S, *a x 4094, &c [T, *c]]: 1 + 4095 * 4096 + 1 + (t + 1) + 1
        return "[&a " + "S" * 4095 + ", " + "*a, " * 4094 + "&c [" + "T" * t + ", *c]]"
    assert 1 + 4095 * 4096 + 1 + (4092 + 1) + 1 == MIB16
    doc = inputs.parse_yaml(scalars(4092), "matrix", FIX)
    assert len(doc) == 4096 and doc[4094] == "S" * 4095 and doc[-1][0] == "T" * 4092 and doc[-1][1] is doc[-1]
    assert refused(inputs.parse_yaml, scalars(4093), "matrix", FIX) == (expand_msg("matrix"), FIX)

    def collections(t):     # [&b [S], *b x 16, [T]]: 1 + 17 * (1 + 986893) + 1 + (t + 1)
        return "[&b [" + "S" * 986892 + "], " + "*b, " * 16 + "[" + "T" * t + "]]"
    assert 1 + 17 * (1 + 986893) + 1 + (15 + 1) == MIB16
    assert len(inputs.parse_yaml(collections(15), "matrix", FIX)) == 18
    assert refused(inputs.parse_yaml, collections(16), "matrix", FIX) == (expand_msg("matrix"), FIX)


# ---- --file: the shell start-up files envcheck writes to (check_rc_file)

RC_FIX = ("pass --file ~/.bashrc (or another start-up file of the login shell: ~/.bashrc, ~/.bash_profile, "
          "~/.bash_login, ~/.profile, ~/.zshenv, ~/.zshrc …, /etc/profile.d/NAME.sh), or --file-anything "
          "for a file your start-up file sources")


@pytest.mark.parametrize("name", ["~/.bashrc", "~/.zshrc", ".profile", "/root/.bash_profile", "/home/ann/.shrc",
                                  "/etc/profile", "/etc/zsh/zshenv", "/etc/profile.d/cuda.sh",
                                  "~/.bashrc.d/cuda-12.4.sh", "/home/ann/.bashrc.d/x.sh"])
def test_the_start_up_files_envcheck_knows_are_taken(name):
    assert inputs.check_rc_file(name) is None


@pytest.mark.parametrize("name", ["~/.netrc", "~/.npmrc", "/etc/passwd", "/tmp/.bashrc", "~/bashrc",
                                  "/etc/profile.d/cuda.csh", "/home/a/b/.bashrc"])
def test_other_files_are_refused_unless_file_anything(name):
    assert refused(inputs.check_rc_file, name) == (
        f"--file {name!r} is not a shell start-up file envcheck knows", RC_FIX)
    assert inputs.check_rc_file(name, anything=True) is None


@pytest.mark.parametrize("name", ["", "   ", "~/", "/etc/profile.d/", "~/.bashrc\n", "a\x00b", "x\x7f", "\tx"])
def test_what_is_not_a_file_name_is_refused_even_with_file_anything(name):
    for anything in (False, True):
        assert refused(inputs.check_rc_file, name, anything=anything) == (f"--file {name!r} is not a file name", RC_FIX)


@pytest.mark.parametrize("name", ["/dev/null", "/proc/self/environ", "/sys/kernel/x"])
def test_devices_proc_and_sys_are_refused_even_with_file_anything(name):
    assert refused(inputs.check_rc_file, name, anything=True) == (
        f"--file {name!r} is not a shell start-up file", RC_FIX)


def test_a_long_file_name_is_quoted_to_60_characters():
    name = "/opt/" + "d" * 100 + "/.bashrc"
    assert refused(inputs.check_rc_file, name)[0] == f"--file {name[:60]!r} is not a shell start-up file envcheck knows"
    assert refused(inputs.check_rc_file, name + "\n")[0] == f"--file {name[:60]!r} is not a file name"
    assert refused(inputs.check_rc_file, "/dev/" + "d" * 100, anything=True)[0] == (
        f"--file {('/dev/' + 'd' * 100)[:60]!r} is not a shell start-up file")


def test_yaml_is_read_where_pyyaml_was_built_without_libyaml(monkeypatch):
    import yaml
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    assert inputs.parse_yaml("a: [1, 2]\n", "playbook", FIX) == {"a": [1, 2]}
    assert refused(inputs.parse_yaml, "a: 1\nb: c: d\n", "playbook", FIX)[0] == (
        "playbook: not valid YAML at line 2: mapping values are not allowed here")


# ---- compiled(): the wheel's JSON beside a YAML (hatch_build.py), written here in the format that
# build writes, against the source tree's YAML, so the test needs no built wheel (mutmut's venv has
# none); tests/test_wheel.py checks the wheel's own files

import json  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

SOURCE = Path(__file__).resolve().parent.parent


def _encode(x):
    """hatch_build._encode: a mapping with a key that is not text becomes {INT_KEYS: [[k, v], ...]}."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {k: _encode(v) for k, v in x.items()}
        return {inputs.INT_KEYS: [[k, _encode(v)] for k, v in x.items()]}
    return [_encode(v) for v in x] if isinstance(x, list) else x


def _compile(path, raw, **override):
    head = {"yaml_size": len(raw), "yaml_crc32": zlib.crc32(raw), "data": _encode(yaml.safe_load(raw))}
    head.update(override)
    path.with_suffix(".json").write_text(json.dumps(head))


@pytest.mark.parametrize("rel", ["envcheck/rules/health_catalog.yaml", "compat_matrix.yaml"])
def test_compiled_reads_the_json_beside_an_unchanged_yaml(tmp_path, rel):
    raw = (SOURCE / rel).read_bytes()
    p = tmp_path / "x.yaml"
    p.write_bytes(raw)
    _compile(p, raw)
    assert inputs.compiled(p) == yaml.safe_load(raw)
    assert inputs.compiled(str(p)) == yaml.safe_load(raw)


def test_compiled_restores_mappings_with_number_keys_and_leaves_the_others(tmp_path):
    raw = b"a: {1: one, 2: two}\nb: {x: [1, {3: three}]}\n"
    p = tmp_path / "x.yaml"
    p.write_bytes(raw)
    _compile(p, raw)
    assert inputs.compiled(p) == {"a": {1: "one", 2: "two"}, "b": {"x": [1, {3: "three"}]}}
    raw = b"a: {x: 1}\n"                      # no number key: read without the hook, the same
    p.write_bytes(raw)
    _compile(p, raw)
    assert inputs.compiled(p) == {"a": {"x": 1}}


@pytest.mark.parametrize("change", ["edited", "resized", "no-json", "bad-json", "not-an-object", "no-yaml", "no-data"])
def test_compiled_is_none_unless_the_json_was_made_from_this_very_yaml(tmp_path, change):
    raw = b"a: 1\nb: [2, 3]\n"
    p = tmp_path / "x.yaml"
    p.write_bytes(raw)
    _compile(p, raw)
    j = p.with_suffix(".json")
    if change == "edited":                    # same size, another CRC
        p.write_bytes(raw.replace(b"1", b"9"))
    elif change == "resized":
        _compile(p, raw, yaml_size=len(raw) + 1)
    elif change == "no-json":
        j.unlink()
    elif change == "bad-json":
        j.write_text("{")
    elif change == "not-an-object":
        j.write_text(json.dumps([len(raw), zlib.crc32(raw)]))
    elif change == "no-yaml":
        p.unlink()
    else:
        j.write_text(json.dumps({"yaml_size": len(raw), "yaml_crc32": zlib.crc32(raw)}))
    assert inputs.compiled(p) is None
