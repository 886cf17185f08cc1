"""The rank protocol is defined once on the node side (envcheck/node/rank_protocol.py) and parsed
once on the controller (envcheck/ranks/records.py): the two must name the same record types, and
every record a node file writes must be one of them."""
import ast
import importlib.util
import json
import subprocess
import sys

import pytest

from envcheck.ranks import records as rr
from tests.conftest import REPO

NODE = REPO / "envcheck" / "node"


def _protocol():
    spec = importlib.util.spec_from_file_location("rank_protocol", NODE / "rank_protocol.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _written_types(path):
    """Record types a node file writes: the "type" of a dict literal, or rank_protocol's
    write(KIND, …) and its named helpers."""
    helpers = {"started": "start", "output": "out", "exited": "exit", "launcher": "launcher", "beat": "beat"}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == "type" and isinstance(v, ast.Constant):
                    found.add(v.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "rp"
              and node.func.attr == "write" and isinstance(node.args[0], ast.Constant)):
            found.add(node.args[0].value)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "rp" and node.attr in helpers):   # called, or handed on (rp.beat)
            found.add(helpers[node.attr])
    return found


def test_the_node_protocol_and_the_controller_parser_name_the_same_records():
    p = _protocol()
    assert set(p.LAUNCHER_RECORDS) | set(p.WORKER_RECORDS) == set(rr.PARSERS)


def test_every_record_a_node_file_writes_is_in_the_protocol():
    p = _protocol()
    known = set(p.LAUNCHER_RECORDS) | set(p.WORKER_RECORDS)
    # a rank's exit is written by the supervision both launchers share
    for name, expect in (("allreduce_launcher.py", {"start", "launcher", "beat"}),
                         ("script_launcher.py", {"start", "out", "launcher", "beat"}),
                         ("rank_supervisor.py", {"exit"}),
                         ("allreduce_worker.py", set(p.WORKER_RECORDS) - {"pair"}),
                         ("allreduce_pairs.py", {"pair"})):
        written = _written_types(NODE / name)
        assert written - known == set(), name
        assert written == expect, name


def test_the_detector_sees_a_record_outside_the_protocol():
    planted = NODE.parent.parent / "tests" / "ranks" / "_planted.py"
    try:
        planted.write_text('emit({"type": "rank_exit", "rank": 1})\nrp.write("hello")\n')
        assert _written_types(planted) == {"rank_exit", "hello"}
    finally:
        planted.unlink()


def test_what_the_node_writes_the_controller_reads_back_as_typed_records(tmp_path):
    """The protocol module for real, in a child process: its output parsed by the controller."""
    code = ("import sys; sys.path.insert(0, %r); import rank_protocol as rp\n"
            "rp.started(3, 1, 99, 5.0); rp.output(3, 'hi'); rp.exited(3, 1, -9, 6.0, False)\n"
            "rp.launcher('deadline', why='ran past 1s', host='n1', running=[3]); rp.beat()\n" % str(NODE))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    recs = rr.parse_text(out)
    assert recs == [rr.Start(3, 1, 99, 5.0), rr.Out(3, "hi"), rr.Exit(3, 1, -9, 6.0, False),
                    rr.Launcher("deadline", "ran past 1s", "n1", (3,)), rr.Beat()]
    assert recs[2].signal == 9
    assert all(json.loads(line) for line in out.splitlines())


@pytest.mark.parametrize("line", ['{"type": "exit", "rank": "x", "code": 1}', '{"type": "exit", "rank": 1}',
                                  '{"type": "out"}', '["type"]', 'NCCL INFO ring', '{"type": 3}'])
def test_a_malformed_record_is_noise_not_a_crash(line):
    assert rr.parse_line(line) is None


def test_a_record_type_the_controller_does_not_know_is_kept_for_the_workload():
    assert rr.parse_line('{"type": "triple", "round": 1}') == rr.Other("triple", {"type": "triple", "round": 1})


def test_a_launcher_s_stdout_is_its_records_in_order_without_the_noise_between():
    recs = rr.parse_text('x\n{"type": "rank", "rank": 0, "pid": 7}\n{"no": 1}\n{"type": "done", "world_size": 1}\n')
    assert recs == [rr.Joined(0, {}), rr.Done(1)]
    assert recs[0].data == {"type": "rank", "rank": 0, "pid": 7}   # the report keeps the record as written
