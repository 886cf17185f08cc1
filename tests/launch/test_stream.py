"""The launch stream's pure parts: records split across chunks, the stack dump a rank printed at
the timeout, and which rank the outcome names first."""
from envcheck.launch.outcome import failure
from envcheck.launch.stream import HostStream, RankState, stack_dump, waits_in_torch

WAITING = """step 0 loss 1.0
Current thread 0x00007f9ace21cb80 (most recent call first):
  File "/v/lib/python3.11/site-packages/torch/autograd/graph.py", line 979 in _engine_run_backward
  File "/v/lib/python3.11/site-packages/torch/_tensor.py", line 623 in backward
  File "ddp_tiny.py", line 44 in train
  File "<string>", line 6 in <module>""".splitlines()
HUNG = """step 0 loss 1.0
Thread 0x00007f0000000700 (most recent call first):
  File "/v/lib/python3.11/threading.py", line 331 in wait

Current thread 0x00007f6981463b80 (most recent call first):
  File "ddp_tiny.py", line 42 in train
  File "<string>", line 6 in <module>
after""".splitlines()


def test_a_dump_is_cut_from_the_output_and_read_by_its_main_thread():
    assert stack_dump(WAITING) == WAITING[1:]
    assert stack_dump(HUNG) == HUNG[1:7]
    assert waits_in_torch(stack_dump(WAITING)) is True
    assert waits_in_torch(stack_dump(HUNG)) is False   # the other thread's wait does not count
    assert stack_dump(["no dump here"]) == []


class _NoStop:
    reasons = []

    def controller(self):
        return None


def test_records_split_anywhere_between_chunks_are_read_whole():
    ranks = {0: RankState(0, "n1", 0), 1: RankState(1, "n1", 1)}
    lines, recs = [], []
    s = HostStream("n1", ranks, lambda h, r, x: lines.append((h, r, x)),
                   lambda h, rec: recs.append(type(rec).__name__), None)
    data = (b'{"type": "start", "rank": 0, "pid": 7, "time": 1.0}\n\n'
            b'{"type": "out", "rank": 0, "line": "h\\u00e9llo"}\n'
            b'{"type": "exit", "rank": 0, "code": 0, "time": 2.0, "stopped": false}\n')
    for i in range(0, len(data), 7):
        s.feed(data[i:i + 7])
    s.close()
    assert lines == [("n1", 0, "h\u00e9llo")] and recs == ["Start", "Exit"]
    assert (ranks[0].pid, ranks[0].status, ranks[1].status) == (7, "ok", "not started")


def test_the_first_rank_to_fail_is_named_not_the_peers_that_failed_after_it():
    st = {k: RankState(k, "n%d" % (k // 2), k % 2) for k in range(4)}
    for k, code, end, stopped in ((0, 0, 9.0, False), (1, 1, 5.2, False), (2, 1, 5.0, False),
                                  (3, -15, 5.5, True)):
        st[k].exit_code, st[k].end, st[k].stopped, st[k].arrived = code, end, stopped, 1.0
    f = failure(st, [], _NoStop(), 60)
    assert (f.kind, f.rank, f.host, f.exit_code) == ("rank_failed", 2, "n1", 1)
