"""Rules over a table of stacks, judged against the real compat_matrix.yaml: the clean stacks
produce no error and no warning, and each failure class is caught with its component and code."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, INFO, WARNING
from envcheck.rules import REGISTRY, evaluate
from envcheck.rules import judge as judge_stack
from envcheck.facts.from_flags import stack_facts


# the stack of the original setup notes (shared/origin-notes): CUDA 10.0.130 runfile with driver
# 410.48, cuDNN 7.6.5.32 for CUDA 10.0, torch 1.1.0 built for CUDA 10.0, torchvision 0.3.0
ORIGIN = dict(driver="410.48", cuda="10.0.130", cudnn="7.6.5.32", torch="1.1.0+cu100",
              torchvision="0.3.0", gcc="7.5.0")
MODERN = dict(driver="550.54.15", cuda="12.4", cudnn="9.1.0.70", torch="2.4.0+cu124",
              torchvision="0.19.0", torchaudio="2.4.0", python="3.11", gpu="NVIDIA H100 80GB HBM3",
              gcc="11.4.0")


def judge(m, **kw):
    return evaluate(stack_facts(matrix=m, **kw), m)


def serious(findings):
    return [f for f in findings if f.severity in (ERROR, WARNING)]


@pytest.mark.parametrize("python", ["3.6", "3.7"])
@pytest.mark.parametrize("gpu", ["GeForce GTX 1080 Ti", "Tesla V100-SXM2-16GB", "sm_61", "7.0"])
def test_the_original_setup_notes_stack_is_clean(m, python, gpu):
    assert serious(judge(m, python=python, gpu=gpu, **ORIGIN)) == []


def test_the_original_stack_with_a_newer_driver_is_clean(m):
    assert serious(judge(m, **dict(ORIGIN, driver="418.87.00"), python="3.7", gpu="V100")) == []


def test_a_modern_stack_is_clean(m):
    assert serious(judge(m, **MODERN)) == []


def test_rules_say_nothing_without_facts(m):
    assert evaluate({"schema": 1, "origin": "flags"}, m) == []


def _one(findings, code):
    hits = [f for f in findings if f.code == code]
    assert hits, f"no {code} in {[f.code for f in findings]}"
    return hits[0]


# (flags, code, component, severity, words the message must contain)
FAILURES = [
    (dict(driver="396.26", cuda="10.0.130"), "driver-too-old-for-toolkit", "driver", ERROR,
     ["CUDA driver version is insufficient for CUDA runtime version", "410.48"]),
    # 535.86.10 < 535.104.05: a string compare would get this wrong
    (dict(driver="535.86.10", cuda="12.2.2"), "driver-too-old-for-toolkit", "driver", WARNING,
     ["minor-version", "535.104.05", "12.x minimum 525"]),
    (dict(driver="520.61.05", cuda="12.2.2"), "driver-too-old-for-toolkit", "driver", ERROR,
     ["CUDA driver version is insufficient", "12.x minimum 525"]),
    (dict(driver="410.48", torch="1.5.0"), "driver-too-old-for-torch", "driver", ERROR,
     ["cu102 build", "440.33"]),
    (dict(driver="525.60.13", torch="2.4.0+cu124"), "driver-too-old-for-torch", "driver", WARNING,
     ["550.54.14"]),
    (dict(driver="550.54.15", gpu="K80"), "driver-too-new-for-gpu", "driver", ERROR, ["R470"]),
    (dict(driver="410.48", gpu="A100"), "driver-too-old-for-gpu", "driver", ERROR, ["No devices were found"]),
    (dict(torch="1.8.0+cu102", gpu="A100"), "gpu-no-kernel", "gpu", ERROR,
     ["no kernel image is available for execution on the device", "sm_80"]),
    (dict(torch="2.4.0+cu121", gpu="B200"), "gpu-no-kernel", "gpu", ERROR, ["sm_100"]),
    (dict(torch="1.2.0", gpu="A100"), "gpu-ptx-only", "gpu", WARNING, ["compute_50"]),
    (dict(cuda="10.0", gpu="A100"), "gpu-arch-too-new-for-toolkit", "gpu", ERROR,
     ["Unsupported gpu architecture 'compute_80'", "11.0"]),
    (dict(cuda="13.0", gpu="V100"), "gpu-arch-dropped-by-toolkit", "gpu", ERROR, ["12.9"]),
    (dict(cuda="11.8", cudnn="7.6.5"), "cudnn-cuda-mismatch", "cudnn", ERROR,
     ["cudnn-linux-x86_64-9.10.2.21_cuda11-archive.tar.xz"]),
    (dict(cuda="12.4", cudnn="8.5.0"), "cudnn-cuda-mismatch", "cudnn", ERROR, ["another CUDA major"]),
    (dict(cuda="10.2", cudnn="7.5.0"), "cudnn-cuda-mismatch", "cudnn", ERROR, ["own minor"]),
    (dict(torch="1.1.0+cu100", torchvision="0.4.0"), "torchvision-mismatch", "torchvision", ERROR,
     ["torchvision::nms", "0.3.0"]),
    (dict(torch="2.4.0+cu124", torchvision="0.19.0+cu118"), "torchvision-cuda-mismatch", "torchvision", ERROR,
     ["compiled with different CUDA major versions"]),
    (dict(torch="2.4.0", torchaudio="2.3.0"), "torchaudio-mismatch", "torchaudio", ERROR, ["2.4.0"]),
    (dict(torch="1.1.0+cu100", python="3.8"), "python-no-torch-wheel", "python", ERROR,
     ["No matching distribution found", "3.7"]),
    (dict(torch="2.9.0", python="3.9"), "python-no-torch-wheel", "python", ERROR, ["3.10"]),
    (dict(cuda="10.0.130", gcc="9.4.0"), "gcc-too-new", "gcc", ERROR,
     ["unsupported GNU version! gcc versions later than 7 are not supported", "gcc-7"]),
    (dict(cuda="12.4.1", gcc="14.2.0"), "gcc-too-new", "gcc", ERROR, ["later than 13", "-allow-unsupported-compiler"]),
    (dict(cuda="11.8", torch="1.1.0+cu100"), "nvcc-torch-major-mismatch", "cuda", ERROR,
     ["The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (10.0)"]),
    (dict(cuda="10.1", torch="1.1.0+cu100"), "nvcc-torch-minor-mismatch", "cuda", ERROR, ["minor-version"]),
    (dict(cuda="12.4", torch="2.4.0+cu121"), "nvcc-torch-minor-mismatch", "cuda", WARNING,
     ["minor version mismatch"]),
    # a plain torch==1.1.0 is PyPI's CUDA 9.0 build, not the local 10.0 toolkit's
    (dict(cuda="10.0.130", torch="1.1.0"), "torch-pypi-default-variant", "torch", WARNING, ["cu90", "cu100"]),
    (dict(cuda="10.0.130", torch="1.1.0"), "nvcc-torch-major-mismatch", "cuda", ERROR,
     ["plain torch==1.1.0 from PyPI is the cu90 build"]),
    (dict(cuda="12.4", torch="2.4.0"), "torch-pypi-default-variant", "torch", WARNING,
     ["--index-url https://download.pytorch.org/whl/cu124"]),
    (dict(cuda="12.7"), "cuda-unknown", "cuda", WARNING, ["does not know CUDA 12.7"]),
    (dict(cudnn="7.9.9"), "cudnn-unknown", "cudnn", WARNING, ["does not know cuDNN 7.9.9"]),
    (dict(torch="3.0.0"), "torch-unknown", "torch", WARNING, ["does not know torch 3.0.0"]),
    (dict(torch="2.4.0+cu117"), "torch-variant-unknown", "torch", WARNING, ["cu117"]),
    (dict(torchvision="0.99.0"), "torchvision-unknown", "torchvision", WARNING, ["does not know torchvision"]),
    (dict(gpu="Radeon RX 7900"), "gpu-unknown", "gpu", WARNING, ["does not know the GPU"]),
    (dict(torch="2.4.0+cpu", gpu="A100"), "torch-cpu-build", "torch", ERROR, ["Torch not compiled with CUDA"]),
]


@pytest.mark.parametrize("flags,code,component,severity,words", FAILURES,
                         ids=[f"{c}-{i}" for i, (_, c, *_r) in enumerate(FAILURES)])
def test_each_failure_class_is_caught(m, flags, code, component, severity, words):
    f = _one(judge(m, **flags), code)
    assert (f.component, f.severity) == (component, severity)
    for w in words:
        assert w in f.message + " " + f.fix, (w, f.message, f.fix)
    assert f.source.startswith("https://")
    assert f.fix


# ---------------------------------------------------------------- probe-shaped facts
def probe_facts(**over):
    """A facts document shaped like the probe's (envcheck/facts/schema.py), for one host."""
    f = {
        "schema": 1, "origin": "probe", "hostname": "n1",
        "python": {"version": "3.7.3"},
        "driver": {"version": "410.48", "source": "nvidia-smi", "cuda": "10.0", "error": None},
        "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": None}],
        "cuda": {"toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130", "source": "version.txt"}],
                 "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-10.0"},
                 "nvcc": {"path": "/usr/local/cuda-10.0/bin/nvcc", "version": "10.0.130"},
                 "version": "10.0.130"},
        "cudnn": {"version": "7.6.5", "headers": [{"path": "/usr/local/cuda-10.0/include/cudnn.h", "version": "7.6.5"}],
                  "libs": [{"path": "/usr/local/cuda-10.0/lib64/libcudnn.so.7", "version": "7.6.5"}]},
        "packages": {"torch": {"version": "1.1.0"}, "torchvision": {"version": "0.3.0"}},
        "torch": {"version": "1.1.0", "local": None, "cuda": "10.0.130", "cuda_source": "deep"},
        "gcc": {"version": "7.5.0"},
        "env": {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin:/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
                "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"},
    }
    for k, v in over.items():
        f[k] = v
    return f


def test_the_original_stack_as_the_probe_sees_it_is_clean(m):
    assert serious(evaluate(probe_facts(), m)) == []


def test_no_driver_and_no_gpu_is_a_warning_not_a_crash(m):
    f = probe_facts(driver={"version": None, "source": None, "error": "nvidia-smi not found"}, gpus=[])
    found = evaluate(f, m)
    d = _one(found, "driver-not-found")
    assert d.severity == WARNING and "No NVIDIA driver found" in d.message and "nvidia-smi not found" in d.message
    assert not [x for x in found if x.severity == ERROR]


def test_a_bare_machine_gives_notes_only(m):
    f = {"schema": 1, "origin": "probe", "driver": {"version": None}, "gpus": [],
         "cuda": {"toolkits": [], "symlink": {"path": "/usr/local/cuda", "target": None},
                  "nvcc": {"path": None, "version": None}, "version": None},
         "env": {"PATH": "/usr/bin"}, "python": {"version": "3.11.2"}}
    found = evaluate(f, m)
    assert {x.code for x in found} == {"driver-not-found", "cuda-not-found"}
    assert _one(found, "cuda-not-found").severity == INFO


def test_cuda_home_naming_a_missing_toolkit(m):
    env = {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-11.0",
           "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"}
    f = _one(evaluate(probe_facts(env=env), m), "env-missing-toolkit")
    assert f.severity == ERROR and f.component == "env" and "CUDA_HOME=/usr/local/cuda-11.0" in f.message


def test_dangling_cuda_symlink(m):
    cuda = dict(probe_facts()["cuda"], symlink={"path": "/usr/local/cuda", "target": "/usr/local/cuda-9.0"})
    f = _one(evaluate(probe_facts(cuda=cuda), m), "env-missing-toolkit")
    assert "/usr/local/cuda points at /usr/local/cuda-9.0" in f.message


def test_path_and_cuda_home_on_different_toolkits(m):
    cuda = {"toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130"},
                         {"path": "/usr/local/cuda-11.8", "version": "11.8.0"}],
            "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-11.8"},
            "nvcc": {"path": "/usr/local/cuda/bin/nvcc", "version": "11.8.0"}, "version": "11.8.0"}
    env = {"PATH": "/usr/local/cuda/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
           "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"}
    found = evaluate(probe_facts(cuda=cuda, env=env), m)
    f = _one(found, "env-toolkits-disagree")
    assert f.severity == ERROR and "CUDA 10.0" in f.message and "CUDA 11.8" in f.message
    # torch was built for 10.0, so the fix points everything at the 10.0 toolkit
    assert "CUDA_HOME=/usr/local/cuda-10.0" in f.fix


def test_nvcc_not_on_path(m):
    cuda = dict(probe_facts()["cuda"], nvcc={"path": None, "version": None})
    env = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64", "CUDA_HOME": "/usr/local/cuda-10.0"}
    f = _one(evaluate(probe_facts(cuda=cuda, env=env), m), "env-nvcc-not-on-path")
    assert "nvcc: command not found" in f.message and "/usr/local/cuda-10.0/bin" in f.fix


def test_system_cudnn_shadowing_the_pip_one(m):
    f = probe_facts(
        driver={"version": "550.54.15"},
        cuda={"toolkits": [{"path": "/usr/local/cuda-12.4", "version": "12.4.1"}],
              "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-12.4"},
              "nvcc": {"path": "/usr/local/cuda-12.4/bin/nvcc", "version": "12.4.1"}, "version": "12.4.1"},
        cudnn={"version": "8.9.7", "libs": [{"path": "/usr/local/cuda/lib64/libcudnn.so.8", "version": "8.9.7"}]},
        packages={"torch": {"version": "2.4.0+cu124"}, "nvidia-cudnn-cu12": {"version": "9.1.0.70"}},
        torch={"version": "2.4.0", "local": "cu124", "cuda": "12.4", "cuda_source": "local-tag"},
        python={"version": "3.11.4"}, gcc={"version": "11.4.0"},
        env={"PATH": "/usr/local/cuda-12.4/bin:/usr/bin", "LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64:/opt/x"})
    found = evaluate(f, m)
    s = _one(found, "cudnn-shadows-torch")
    assert s.severity == ERROR and s.component == "cudnn"
    assert "PyTorch was compiled against (9, 1, 0) but found runtime version (8, 9, 7)" in s.message
    assert s.fix.endswith("export LD_LIBRARY_PATH=/opt/x")
    # the same machine without the system cuDNN on LD_LIBRARY_PATH is fine
    f["env"]["LD_LIBRARY_PATH"] = "/opt/x"
    assert not [x for x in evaluate(f, m) if x.code == "cudnn-shadows-torch"]


def test_a_cubin_runs_on_a_later_minor_of_its_major(m):
    # 2.8.0+cu129 has sm_120 (and compute_120): GB10 is 12.1, so the sm_120 cubin runs there
    assert not [x for x in judge(m, torch="2.8.0+cu129", gpu="GB10") if x.component == "gpu"]
    # Turing (7.5) runs the sm_70 cubin of the 1.8-1.12 cu102 builds
    assert not [x for x in judge(m, torch="1.12.1+cu102", gpu="T4") if x.component == "gpu"]


def test_deep_arch_list_wins_over_the_matrix(m):
    f = probe_facts(deep={"arch_list": ["sm_37", "sm_50"], "torch_cuda": "10.0.130"})
    g = _one(evaluate(f, m), "gpu-no-kernel")
    assert "torch.cuda.get_arch_list()" in g.message


def test_unreadable_versions_in_probe_facts_never_raise(m):
    f = probe_facts(driver={"version": "garbage"}, cuda={"version": "x.y", "toolkits": []},
                    cudnn={"version": "??"}, gcc={"version": "gcc"}, python={"version": "three"},
                    packages={"torch": {"version": "nonsense"}, "torchvision": {"version": "@"}},
                    torch={"version": "nonsense"})
    codes = {x.code for x in evaluate(f, m)}
    assert {"driver-unknown", "cuda-unknown", "cudnn-unknown", "torch-unknown", "torchvision-unknown"} <= codes


def test_every_rule_is_registered_once():
    assert len(REGISTRY) == len(set(REGISTRY)) >= 20


IFACES = [{"name": "lo", "addrs": ["127.0.0.1/8"]}, {"name": "eth0", "addrs": ["10.0.0.5/24"]},
          {"name": "ib0", "addrs": ["192.168.1.5/24"]}]


def _with_env(**env):
    base = {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
            "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"}
    return probe_facts(interfaces=IFACES, env=dict(base, **env))


@pytest.mark.parametrize("spec,ok", [("eth", True), ("eth0", True), ("=eth0", True), ("=eth", False),
                                     ("ens", False), ("^eth,ib", False), ("^docker", True), ("ib,ens", True)])
def test_nccl_socket_ifname_follows_nccl_syntax(m, spec, ok):
    found = [x for x in evaluate(_with_env(NCCL_SOCKET_IFNAME=spec), m) if x.code == "nccl-ifname-missing"]
    assert (found == []) == ok
    if found:
        assert found[0].severity == ERROR and found[0].component == "nccl"
        assert "no socket interface found" in found[0].message


def test_gloo_socket_ifname_must_be_an_exact_name(m):
    assert not [x for x in evaluate(_with_env(GLOO_SOCKET_IFNAME="eth0"), m) if x.code == "gloo-ifname-missing"]
    g = _one(evaluate(_with_env(GLOO_SOCKET_IFNAME="eth"), m), "gloo-ifname-missing")
    assert "Unable to find address for: eth" in g.message


def test_renamed_nccl_variables_on_torch_2_2_and_later(m):
    f = _with_env(NCCL_ASYNC_ERROR_HANDLING="1")
    assert not [x for x in evaluate(f, m) if x.code == "nccl-env-renamed"]  # torch 1.1.0: old name is right
    f["packages"] = {"torch": {"version": "2.4.0+cu124"}}
    f["torch"] = {"version": "2.4.0", "local": "cu124", "cuda": "12.4"}
    w = _one(evaluate(f, m), "nccl-env-renamed")
    assert w.severity == WARNING and "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1" in w.fix


def test_a_distribution_cuda_dir_on_ld_library_path_is_not_called_missing(m):
    env = {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
           "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64:/usr/lib/cuda/lib64"}
    assert serious(evaluate(probe_facts(env=env), m)) == []
    env["LD_LIBRARY_PATH"] += ":/usr/local/cuda-9.2/lib64"
    f = _one(evaluate(probe_facts(env=env), m), "env-missing-toolkit")
    assert f.severity == WARNING and "/usr/local/cuda-9.2/lib64" in f.message


@pytest.mark.parametrize("version,tag,cmd", [
    ("1.1.0", "cu90", "pip install torch==1.1.0 torchvision==0.3.0"),
    ("1.1.0", "cu100", "pip install --no-index torch==1.1.0 torchvision==0.3.0 -f "
                       "https://download.pytorch.org/whl/cu100/torch_stable.html"),
    ("1.7.1", "cu110", "pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 -f "
                       "https://download.pytorch.org/whl/torch_stable.html"),
    ("1.12.1", "cu113", "pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url "
                        "https://download.pytorch.org/whl/cu113"),
    ("2.4.0", "cu121", "pip install torch==2.4.0 torchvision==0.19.0"),
    ("2.4.0", "cu124", "pip install torch==2.4.0 torchvision==0.19.0 --index-url https://download.pytorch.org/whl/cu124"),
])
def test_install_commands_follow_each_era(m, version, tag, cmd):
    from envcheck.rules.common import torch_install_cmd
    assert torch_install_cmd(m, version, tag) == cmd


def test_a_gcc_that_passes_the_guard_but_is_known_to_break(m):
    w = _one(judge(m, cuda="11.5.2", gcc="11.2.0"), "gcc-known-broken")
    assert w.severity == WARNING and "parameter packs not expanded" in w.message and "gcc-10" in w.fix
    assert not [x for x in judge(m, cuda="11.5.2", gcc="10.3.0") if x.component == "gcc"]
    assert not [x for x in judge(m, cuda="11.8", gcc="11.4.0") if x.component == "gcc"]


def test_a_crashing_rule_becomes_a_finding_not_a_traceback(m, monkeypatch):
    import envcheck.rules as rules

    def broken_rule(facts, matrix):
        return [] if not facts.get("gpus") else facts["gpus"][0]["missing"]

    broken_rule.__module__ = "envcheck.rules.gpu"
    monkeypatch.setattr(rules, "REGISTRY", [*rules.REGISTRY, broken_rule])
    found = rules.evaluate(probe_facts(), m)
    crash = _one(found, "rule-crashed")
    assert crash.component == "gpu" and "KeyError" in crash.message and crash.severity == WARNING


def test_companion_cuda_tags(m):
    w = _one(judge(m, torch="2.4.0+cu124", torchvision="0.19.0+cu121"), "torchvision-cuda-mismatch")
    assert w.severity == WARNING and "major" not in w.message.split("refuse")[0]
    e = _one(judge(m, torch="2.4.0+cu124", torchaudio="2.4.0+cu121"), "torchaudio-cuda-mismatch")
    assert e.severity == ERROR and "PyTorch and TorchAudio were compiled with different CUDA versions" in e.message
    assert not [x for x in judge(m, torch="2.4.0+cu124", torchvision="0.19.0+cu124", torchaudio="2.4.0+cu124")
                if x.severity != INFO]


@pytest.mark.parametrize("gpu", ["sm_120", "12.0"])
def test_a_gpu_given_as_its_arch_is_not_named_twice(m, gpu):
    msgs = [f.message for f in judge(m, gpu=gpu, torch="1.1.0", cuda="10.0") if f.component == "gpu"]
    assert msgs and all("sm_120" in x for x in msgs)
    assert not [x for x in msgs if "sm_120 (sm_120" in x or "12.0 (sm_120" in x]


def test_torch_cuda_arch_list_decides_the_lower_target_case(m):
    """CUDA 11.0 on an sm_86 GPU: unset -> a warning; a list the toolkit builds and the GPU runs ->
    nothing; a list naming 8.6 -> nvcc's own error; no same-major cubin at all (CUDA 10.2) -> error."""
    def judged(cuda, arch_list):
        f = stack_facts(cuda=cuda, gpu="sm_86", matrix=m)
        if arch_list is not None:
            f["env"] = {"TORCH_CUDA_ARCH_LIST": arch_list}
        return [(x.code, x.severity) for x in evaluate(f, m) if x.component == "gpu"]
    assert judged("11.0", None) == [("gpu-arch-too-new-for-toolkit", WARNING)]
    assert judged("11.0", "7.5;8.0+PTX") == [] and judged("11.0", "Turing") == []
    assert judged("11.0", "8.0 8.6") == [("gpu-arch-too-new-for-toolkit", ERROR)]
    assert judged("10.2", None) == [("gpu-arch-too-new-for-toolkit", ERROR)]


def test_a_driver_in_the_architectures_own_branch_but_below_it_is_only_a_warning(m):
    f = stack_facts(driver="455.20", gpu="sm_86", matrix=m)
    assert [(x.code, x.severity) for x in evaluate(f, m)] == [("driver-too-old-for-gpu", WARNING)]


def test_issue_21_item_9_pip_cudnn_is_judged_as_torch_loads_it(m):
    # --cudnn is the cuDNN the torch process loads (pip's, built for torch's CUDA): not nvcc's business
    f = stack_facts(torch="2.1.2+cu121", cudnn="8.9.2", cuda="10.2", matrix=m)
    assert not [x for x in evaluate(f, m) if x.component == "cudnn"]
    # a refused pip cuDNN: the fix names the pip package pinned to torch's build
    f = stack_facts(torch="2.4.0+cu121", cudnn="9.0.0", matrix=m)
    (e,) = [x for x in evaluate(f, m) if x.code == "cudnn-refused-by-torch"]
    assert 'pip install "nvidia-cudnn-cu12==9.1.0.*"' in e.fix


def test_issue_21_item_9_a_system_cudnn_of_a_lower_minor_shadowing_pips_is_an_error(m):
    f = probe_facts(
        cudnn={"version": "9.0.0", "libs": [{"path": "/usr/local/cuda/lib64/libcudnn.so.9", "version": "9.0.0"}]},
        packages={"torch": {"version": "2.4.0+cu124"}, "nvidia-cudnn-cu12": {"version": "9.1.0.70"}},
        torch={"version": "2.4.0", "local": "cu124", "cuda": "12.4", "cuda_source": "local-tag"},
        env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"})
    assert _one(evaluate(f, m), "cudnn-shadows-torch").severity == ERROR
    f["cudnn"]["libs"][0]["version"] = f["cudnn"]["version"] = "9.3.0"  # a newer minor: torch accepts it
    assert _one(evaluate(f, m), "cudnn-shadows-torch").severity == WARNING


def test_issue_21_item_9_the_installed_userspace_driver_is_judged_against_torch(m):
    f = probe_facts(driver={"version": None, "state": "module-not-loaded", "userspace": {"version": "470.182.03"}},
                    pci_gpus=[{"address": "0000:3b:00.0", "vendor_id": "0x10de", "device_id": "0x2204"}],
                    gpus=[],
                    packages={"torch": {"version": "2.4.0+cu124"}},
                    torch={"version": "2.4.0", "local": "cu124", "cuda": "12.4", "cuda_source": "local-tag"})
    assert _one(evaluate(f, m), "driver-too-old-for-torch").severity == ERROR


@pytest.mark.parametrize("torch,loaded,refused", [
    ("0.4.1", "7.3.1", True), ("0.4.1", "7.1.2", False),    # 0.x: the same minor, even a newer one refused
    ("1.0.0", "7.5.0", False), ("1.0.0", "7.3.1", True)])   # 1.0 on: a newer minor is fine, an older one not
def test_issue_21_item_6_torchs_cudnn_rule_is_the_releases_own(m, torch, loaded, refused):
    f = stack_facts(torch=torch, cudnn=loaded, matrix=m)
    found = [x for x in evaluate(f, m) if x.code == "cudnn-refused-by-torch"]
    assert bool(found) == refused
    if found and torch.startswith("0."):
        assert "cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7301" in found[0].message


def test_issue_21_item_7_numpy_older_than_the_c_api_torch_was_built_against(m):
    f = stack_facts(torch="1.11.0+cu113", python="3.10", numpy="1.21.5", matrix=m)
    e = _one(evaluate(f, m), "torch-numpy-too-old")
    assert e.severity == ERROR and "module compiled against API version 0xf but this version of numpy is 0xe" in e.message
    assert e.fix == 'pip install "numpy>=1.22.0,<2"'
    for ok in (dict(numpy="1.22.4"), dict(numpy="1.21.5", python="3.9")):  # new enough, or another Python's wheel
        args = {**dict(torch="1.11.0+cu113", python="3.10", numpy="1.21.5"), **ok}
        assert not [x for x in evaluate(stack_facts(matrix=m, **args), m) if x.code == "torch-numpy-too-old"]


@pytest.mark.parametrize("numpy,python,refused", [("1.12.1", "3.6", True), ("1.11.3", "2.7", True),
                                                  ("1.13.1", "3.6", False), ("1.14.0", "3.5", False)])
def test_a_release_older_than_the_matrix_is_judged_by_the_numpy_its_build_scripts_installed(m, numpy, python, refused):
    # builder's 0.2.0 scripts installed an unpinned numpy in August 2017: a 1.13.x, C API 0xb, for every Python
    found = [x for x in evaluate(stack_facts(torch="0.2.0", numpy=numpy, python=python, matrix=m), m)
             if x.code == "torch-numpy-too-old"]
    assert bool(found) == refused
    if found:
        assert "torch 0.2.0's builds were compiled against numpy's C API 0xb" in found[0].message
        assert "this version of numpy is 0xa" in found[0].message and found[0].fix == 'pip install "numpy>=1.13.0,<2"'


@pytest.mark.parametrize("torch", ["1.9.0a0+git2a178d3", "2.4.0.dev20240501+cu121", "2.1.0a0+32f93b1", "1.11.0+git1234abc"])
def test_a_source_or_nightly_builds_numpy_is_unknown_and_said_so(m, torch):
    f = stack_facts(torch=torch, numpy="1.21.5", python="3.10", matrix=m)
    verdict = judge_stack(f, m)
    assert "torch-numpy-too-old" not in {x.code for x in verdict.findings}
    (skip,) = [s for s in verdict.skipped if s.check == "numpy_older_than_build"]
    assert "source, nightly or vendor build" in skip.reason


@pytest.mark.parametrize("gpu,severity", [("A10", WARNING), ("Tesla T4", WARNING), ("RTX 3090", ERROR)])
def test_a_forward_compatible_branch_on_a_data_center_gpu_is_a_warning(m, gpu, severity):
    # vllm-project/vllm#7943: A10 on driver 470.129.06 runs a CUDA 12.1 torch inside an NGC container
    # (cuda-compat); GeForce boards get no forward compatibility
    found = _one(evaluate(stack_facts(driver="470.129.06", torch="2.4.0+cu121", gpu=gpu, matrix=m), m),
                 "driver-too-old-for-torch")
    assert found.severity == severity
    if severity == WARNING:
        assert "cuda-compat" in found.fix and "forward" in found.message


@pytest.mark.parametrize("cuda,driver,gpu,severity", [
    ("10.1", "384.111", "Tesla V100-SXM2-16GB", WARNING),   # NGC 19.03/19.10: R384 >= 384.111 on Tesla
    ("10.1", "384.81", "Tesla V100-SXM2-16GB", ERROR),      # below the branch's minimum
    ("10.1", "384.111", "NVIDIA A100-SXM4-80GB", ERROR),    # CUDA 10 does not know Ampere; R384 cannot drive it
    ("11.8", "418.67", "Tesla V100-SXM2-16GB", ERROR),      # R418 left the list before 11.7
    ("13.0", "545.23.08", "NVIDIA A100-SXM4-80GB", ERROR),  # R545 is not in CUDA 13.0's list
    ("13.0", "535.104.05", "NVIDIA A100-SXM4-80GB", WARNING),
    ("9.2", "384.111", "Tesla V100-SXM2-16GB", ERROR),      # forward compatibility begins with CUDA 10
    ("9.0", "384.111", "Tesla V100-SXM2-16GB", None)])      # CUDA 9.0 needs 384.81: no finding
def test_forward_compatibility_follows_the_cuda_release(m, cuda, driver, gpu, severity):
    found = [x for x in evaluate(stack_facts(cuda=cuda, driver=driver, gpu=gpu, matrix=m), m)
             if x.code == "driver-too-old-for-toolkit"]
    assert [x.severity for x in found] == ([severity] if severity else [])
