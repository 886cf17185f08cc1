"""Which rank `launch --launcher srun` names when srun's own words name a victim: the race CI saw
(the raising rank still tearing down, a gloo peer aborting on the closed connection first, srun
then terminating the raiser), written from srun's and torch's words. No Slurm needed: this is
the rule over srun's stderr and the ranks' labelled output (envcheck/slurm/srun_ranks.py)."""
from __future__ import annotations

from collections import deque

from envcheck.slurm.srun_ranks import _culprit, _raiser

HOSTS = ["node01", "node02", "node03"]
PEER = ["[rank{r}]: Traceback (most recent call last):",
        "[rank{r}]:   File \"/srv/train.py\", line 44, in train",
        "[rank{r}]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
        "[10.0.0.2]:37061. This is typically caused by a remote worker crashing.",
        "terminate called without an active exception"]
RAISER = ["Traceback (most recent call last):", "  File \"/srv/train.py\", line 40, in train",
          "RuntimeError: boom from rank 1"]


def _tails(**by_rank):
    return {int(k[1:]): deque((line.format(r=k[1:]) for line in v), maxlen=40) for k, v in by_rank.items()}


def test_a_victim_srun_heard_first_is_not_named_but_the_rank_that_raised():
    err = ("srun: error: node03: task 2: Aborted\nsrun: launch/slurm: _step_signal: Terminating StepId=8.1\n"
           "srun: error: node01: task 0: Terminated\nsrun: error: node02: task 1: Terminated")
    got = _raiser(_culprit(err), _tails(r0=PEER, r1=RAISER, r2=PEER), HOSTS, 1, err)
    assert (got["host"], got["rank"], got["exit_code"], got["raised"]) == ("node02", 1, None, True)
    assert got["message"] == ("rank 1 on node02 raised (its traceback is in its output above); srun heard "
                              "rank 2 on node03 first, a peer it brought down")


def test_a_victims_own_exit_code_does_not_make_it_the_culprit_and_the_raisers_code_is_kept():
    err = ("srun: error: node01: task 0: Exited with exit code 1\n"
           "srun: error: node02: task 1: Exited with exit code 1\nsrun: error: node03: task 2: Terminated")
    got = _raiser(_culprit(err), _tails(r0=PEER[:3], r1=RAISER, r2=[]), HOSTS, 1, err)
    assert (got["host"], got["rank"], got["exit_code"]) == ("node02", 1, 1)


def test_a_rank_that_exited_badly_without_a_peers_error_stays_named():
    err = "srun: error: node03: task 2: Exited with exit code 7\nsrun: error: node01: task 0: Terminated"
    c = _culprit(err)
    assert _raiser(c, _tails(r0=PEER, r1=RAISER, r2=["exit(7) asked for"]), HOSTS, 1, err) is c


def test_with_no_rank_that_raised_srun_s_words_stand():
    err = "srun: error: node03: task 2: Killed\nsrun: error: node01: task 0: Terminated"
    c = _culprit(err)
    assert _raiser(c, _tails(r0=PEER, r2=["Killed"]), HOSTS, 1, err) is c
