"""What heldout7's negatives showed answered too surely, fixed where the emitters say why: a CUDA
description found inside a longer catalogued one (cudaErrorNotPermitted's "operation not
permitted" inside cudaErrorStreamCaptureUnsupported's "operation not permitted when stream is
capturing"), a CUDA description that is also strerror's text (EPERM), gloo's two-word "Connect
timeout" in an HTTP client's error, and c10d's messages that its store prints whatever kept the
server from answering. Each tried with texts other than the corpus's."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain


def _answers(text: str):
    return {e.id: e.confidence for e in explain(text) if e.kind == "environment"}


def _confident(text: str):
    return [i for i, c in _answers(text).items() if c in ("exact", "likely")]


@pytest.mark.parametrize("text", [
    # driver_types.h: cudaErrorStreamCaptureUnsupported = 900, "operation not permitted when
    # stream is capturing" (a graph capture calling a synchronising API: the program's)
    "RuntimeError: CUDA error: operation not permitted when stream is capturing\n"
    "Exception raised from synchronize at ../c10/cuda/CUDAStream.h:120",
    "cudaStreamSynchronize failed: operation not permitted when stream is capturing (900)",
    # cudaErrorStreamCaptureImplicit's sibling 907: "operation not permitted on an event last
    # recorded in a capturing stream"
    "CUDA error: operation not permitted on an event last recorded in a capturing stream",
    # glibc strerror(EPERM): not the GPU's device nodes
    "chown: changing ownership of '/data/ckpt': Operation not permitted",
    # urllib3/requests: an HTTP connect timeout, not gloo's
    "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='cdn.example.org', port=443): "
    "Max retries exceeded (Caused by ConnectTimeoutError(..., 'Connection to cdn.example.org timed "
    "out. (connect timeout=10)'))",
    # c10d: any store socket error; a timed-out connect whatever kept rank 0 from listening
    "torch.distributed.DistNetworkError: Broken pipe",
    "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while "
    "trying to connect to (node7, 41000).",
])
def test_no_confident_environment_cause(text):
    assert _confident(text) == [], text


@pytest.mark.parametrize("text, cause", [
    # the short description still names its code where the longer one is absent
    ("RuntimeError: CUDA error: operation not permitted\nCUDA kernel errors might be asynchronously "
     "reported", "device-permission"),
    ("cudaErrorNotPermitted: operation not permitted", "device-permission"),
    # gloo's pair.cc in a distributed run
    ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] Connect timeout "
     "[10.1.2.3]:29400\ntorch.distributed.init_process_group(backend='gloo')", "rendezvous-refused"),
])
def test_the_shorter_or_shared_words_still_answer_in_their_own_context(text, cause):
    assert cause in _confident(text), _answers(text)


def test_a_timed_out_connect_still_names_the_rendezvous_as_possible():
    text = "[E socket.cpp:860] [c10d] The client socket has timed out after 90s while trying to connect to (10.9.8.7, 1234)."
    assert _answers(text).get("rendezvous-refused") == "possible"
