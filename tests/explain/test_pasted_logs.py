"""Logs the way people paste them: every line carrying a logger's or launcher's prefix, messages
wrapped mid-sentence (by the program, a terminal or an issue form), colour codes, Windows paths.
The message must still be found, on the line where it starts."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from envcheck.explain.normalise import Normalised, strip_prefix

MSG = ("RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile "
       "PyTorch (11.8). Please make sure to use the same CUDA versions.")


def _wrapped(prefix: str, width: int = 48) -> str:
    words, lines, cur = MSG.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(prefix.format(i=i) + line for i, line in enumerate(lines))


PREFIXES = {
    "docker buildx": "#12 {i}.731 ",
    "docker buildx, ISO time": "#8 1{i}.02 2024-05-01T12:00:0{i}.123Z ",
    "GitHub Actions time": "2024-05-01T12:00:00.1234567Z ",
    "torchrun rank": "[rank3]:",
    "torchrun --tee": "[default0]:",
    "rank and c10 log header": "[rank0]:[W501 12:00:01.234567 ProcessGroupNCCL.cpp:123] ",
    "srun -l": "1{i}: ",
    "mpirun --tag-output": "[1,0]<stderr>:",
    "python logging time": "[2024-05-01 12:00:00,123] [ERROR] ",
    "syslog": "May  1 12:00:0{i} node07 python[4123]: ",
    "glog": "E0501 12:00:00.123456  4123 train.cc:88] ",
    "journalctl -o short-iso": "2024-05-01T12:00:0{i}+0000 node07 python3[4123]: ",
    "logging's default time format": "2024-05-01 12:00:00,123 - train - ERROR - ",
    "loguru": "2024-05-01 12:00:00.123 | ERROR    | train:main:42 - ",
    "DeepSpeed's logger": "[2024-05-01 12:00:00,123] [ERROR] [launch.py:321:sigkill_handler] ",
    "docker compose": "trainer-1  | ",
    "kubectl logs --prefix": "[pod/train-0/trainer] ",
    "pdsh": "worker-3: ",
    "none": "",
}


@pytest.mark.parametrize("name", list(PREFIXES))
def test_a_message_wrapped_over_prefixed_lines_is_found(name):
    text = "step 10 loss 0.1\n" + _wrapped(PREFIXES[name])
    found = explain(text)
    assert found and found[0].id == "toolkit-torch-mismatch", (name, [e.id for e in found])
    assert found[0].line == 2 and found[0].values == {"detected": "12.1", "torch_cuda": "11.8"}


def test_prefixes_are_removed_only_where_they_have_a_prefix_s_shape():
    assert strip_prefix("#12 3.456 error: nvcc fatal") == "error: nvcc fatal"
    assert strip_prefix("[rank1]:[E501 12:00:00.1 socket.cpp:9] x") == "x"
    assert strip_prefix("2 errors detected in the compilation") == "2 errors detected in the compilation"
    assert strip_prefix("Error 804: forward compatibility") == "Error 804: forward compatibility"
    assert strip_prefix("#include <cuda.h>") == "#include <cuda.h>"
    assert strip_prefix("[rank0]:") == "[rank0]:"        # nothing after it: kept as is


def test_a_line_cut_mid_word_at_the_terminal_width_is_joined_without_a_space():
    width = 60
    flat = ("noise " * 30) + "RuntimeError: CUDA error: no kernel image is available for execution on the device " + ("x" * 80)
    text = "\n".join(flat[i:i + width] for i in range(0, len(flat), width))
    assert "no kernel image is available for execution on the device" in Normalised(text).text
    assert explain(text)[0].id == "no-kernel-image"


def test_colour_codes_and_windows_paths_do_not_hide_the_library_name():
    text = ("\x1b[31mOSError\x1b[0m: [WinError 126] The specified module could not be found. Error loading "
            "\"C:\\Users\\me\\miniconda3\\envs\\t\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" "
            "or one of its dependencies.")
    found = explain(text)
    assert found[0].id == "windows-dll-load-failed"
    assert "C:/Users/me/miniconda3" in Normalised(text).text


def test_an_nccl_warning_keeps_its_host_prefix_and_is_found():
    text = ("node07:4123:4190 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC\n"
            "node07:4123:4190 [3] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer "
            "10.1.2.8<52130> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.1.2.7")
    found = explain(text)
    assert found[0].id == "nccl-ib-error" and found[0].line == 2


def test_a_host_prefix_is_removed_only_where_it_starts_several_lines():
    # pdsh: every host's lines carry its name, a host with one line too once its shape is known
    text = "worker-0: step 1\nworker-1: step 1\nworker-0: step 2\nworker-0: ImportError: libcudart.so.11.0: " \
           "cannot open shared object file"
    assert Normalised(text).text == "step 1 step 1 step 2 ImportError: libcudart.so.11.0: cannot open shared object file"
    # the loader's message at the start of a line, even thrice (one per rank), keeps the library's name
    text = "\n".join(["libcudart.so.11.0: cannot open shared object file: No such file or directory"] * 3)
    assert Normalised(text).text.startswith("libcudart.so.11.0: cannot open")
    assert explain(text)[0].id == "cudart-lib-missing"


def test_colour_codes_whose_escape_was_lost_are_removed():
    text = "[31mRuntimeError[0m: [1;33mCUDA error: no kernel image is available for execution on the device[0m"
    assert Normalised(text).text == "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    # a bracketed value is not colour, even in coloured text
    assert Normalised("[31mtimeout=[5m] exceeded[0m").text == "timeout=[5m] exceeded"


def test_a_blank_line_inside_a_message_adds_no_space():
    n = Normalised("!! WARNING !!\n\nYour compiler (c++) may be\n   \nABI-incompatible\n\n\n")
    assert n.text == "!! WARNING !! Your compiler (c++) may be ABI-incompatible"
    assert n.lines_of(n.text.index("ABI"), n.text.index("ABI") + 3)[0] == 5
