"""`envcheck check` through the installed console script: exit codes 0/1/2, --json purity,
facts files (a saved facts document, or an audit --json output with one host)."""
from __future__ import annotations

import json

from tests.conftest import run_cli

ORIGIN = ["--driver", "410.48", "--cuda", "10.0.130", "--cudnn", "7.6.5.32", "--torch", "1.1.0+cu100",
          "--torchvision", "0.3.0", "--python", "3.7", "--gpu", "GeForce GTX 1080 Ti", "--gcc", "7.5.0"]


def test_clean_stack_exits_0_with_a_short_answer():
    r = run_cli("check", *ORIGIN)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == ("PASS: 0 errors, 0 warnings, 0 notes; nothing in this stack is known "
                                         "to break (No findings)") and r.stderr == "", r.stdout


def test_an_error_finding_exits_1_and_the_table_names_it():
    r = run_cli("check", "--driver", "396.26", "--cuda", "10.0")
    assert r.returncode == 1
    flat = " ".join(r.stdout.split())   # however the message wrapped at this terminal's width
    assert "CUDA driver version is insufficient" in flat and "fix:" in flat
    assert r.stdout.splitlines()[0].split() == ["SEVERITY", "COMPONENT", "MESSAGE"]


def test_warnings_alone_exit_0():
    r = run_cli("check", "--cuda", "12.4", "--torch", "2.4.0+cu121")
    assert r.returncode == 0 and "warning" in r.stdout


def test_json_is_the_only_thing_on_stdout():
    r = run_cli("check", "--json", "--driver", "396.26", "--cuda", "10.0", "--gpu", "A100")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert {f["component"] for f in doc["findings"]} >= {"driver", "gpu"}
    for f in doc["findings"]:
        # fix_check: what trying the fix found, on an error or warning whose rule gives its fix as data
        assert set(f) - {"fix_check"} == {"severity", "code", "component", "message", "fix", "source"}
        assert "fix_check" not in f or f["severity"] in ("error", "warning")
    assert any("fix_check" in f for f in doc["findings"])
    ok = json.loads(run_cli("check", "--json", *ORIGIN).stdout)
    assert ok == {"ok": True, "findings": [], "skipped": []}


def test_unparsable_version_is_one_line_and_exit_2():
    for flag, value in (("--driver", "latest"), ("--cuda", "ten"), ("--torch", "1.1.0+cu10x"),
                        ("--gpu", ""), ("--python", "py3")):
        r = run_cli("check", flag, value)
        if flag == "--gpu":
            assert r.returncode == 2  # nothing to judge
            continue
        assert r.returncode == 2, (flag, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and flag in r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_no_arguments_is_a_usage_error():
    r = run_cli("check")
    assert r.returncode == 2 and "nothing to judge" in r.stderr


def test_matrix_option_is_used(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("schema: 1\n")
    r = run_cli("check", "--matrix", str(bad), "--cuda", "10.0")
    assert r.returncode == 2 and f"{bad}: cuda: missing" in r.stderr


def _facts():
    return {"schema": 1, "origin": "probe", "driver": {"version": "410.48"},
            "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}],
            "cuda": {"version": "10.0.130"}, "packages": {"torch": {"version": "1.1.0"}},
            "torch": {"version": "1.1.0", "local": None, "cuda": None}, "python": {"version": "3.7.3"}}


def test_a_saved_facts_file(tmp_path):
    p = tmp_path / "n1.json"
    p.write_text(json.dumps(_facts()))
    r = run_cli("check", str(p), "--json")
    doc = json.loads(r.stdout)
    codes = {f["code"] for f in doc["findings"]}
    # plain torch 1.1.0 is PyPI's cu90 build: another CUDA major than nvcc 10.0
    assert r.returncode == 1 and "nvcc-torch-major-mismatch" in codes
    # flags override the file: with the cu100 build the stack is clean
    r = run_cli("check", str(p), "--torch", "1.1.0+cu100")
    assert r.returncode == 0, r.stdout


def test_an_audit_json_with_one_host(tmp_path):
    p = tmp_path / "audit.json"
    p.write_text(json.dumps({"ok": True, "hosts": [{"host": "n1", "facts": _facts(), "findings": []}]}))
    assert run_cli("check", str(p)).returncode == 1
    p.write_text(json.dumps({"hosts": [{"host": "a", "facts": _facts()}, {"host": "b", "facts": _facts()}]}))
    r = run_cli("check", str(p))
    assert r.returncode == 2 and "2 hosts" in r.stderr


def test_a_broken_facts_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    r = run_cli("check", str(p))
    assert r.returncode == 2 and "not JSON" in r.stderr
    r = run_cli("check", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and "missing.json': no such file" in r.stderr


def test_every_check_option_is_documented():
    from tests.conftest import REPO
    doc = (REPO / "docs" / "check-and-matrix.md").read_text()
    help_text = run_cli("check", "--help", env={"COLUMNS": "200"}).stdout
    import re
    opts = set(re.findall(r"(--[a-z][a-z-]+)", help_text)) - {"--help"}
    assert {"--driver", "--torch", "--gpu", "--json", "--matrix"} <= opts
    missing = [o for o in sorted(opts) if o not in doc]
    assert missing == []


def test_a_saved_audit_of_this_machine_is_judged_like_the_audit(tmp_path):
    r = run_cli("audit", "--json", timeout=120)
    assert r.returncode in (0, 1), r.stderr
    audit = json.loads(r.stdout)
    p = tmp_path / "audit.json"
    p.write_text(r.stdout)
    c = run_cli("check", str(p), "--json")
    assert c.returncode == r.returncode
    assert json.loads(c.stdout)["findings"] == audit["hosts"][0]["findings"]


def test_a_malformed_python_or_compute_capability_is_a_usage_error_not_a_finding():
    # "--python 3" once became Python 3.0 and a false "no torch wheel" error; "sm_xx" a GPU model
    for flag, value in (("--python", "3"), ("--python", "3.7.1.2"), ("--gpu", "sm_xx"),
                        ("--gpu", "compute_1000")):
        r = run_cli("check", "--torch", "1.1.0+cu100", flag, value)
        assert r.returncode == 2, (flag, value, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and flag in r.stderr and "fix:" in r.stderr
        assert r.stdout == ""
    assert run_cli("check", "--torch", "1.1.0+cu100", "--python", "3.7.4", "--gpu", "sm_70").returncode == 0


def _probe_like(env, **over):
    f = dict(_facts(), env=env,
             cuda={"toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130"}],
                   "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-10.0"},
                   "nvcc": {"path": "/usr/local/cuda-10.0/bin/nvcc", "version": "10.0.130"},
                   "version": "10.0.130"},
             torch={"version": "1.1.0", "local": "cu100", "cuda": "10.0", "cuda_source": "local-tag"},
             packages={"torch": {"version": "1.1.0+cu100"}})
    f.update(over)
    return f


def test_the_environment_classes_reach_check_through_a_facts_file(tmp_path):
    """--driver … cannot say what PATH or LD_LIBRARY_PATH hold; a saved facts file can."""
    p = tmp_path / "n1.json"
    good = {"PATH": "/usr/local/cuda-10.0/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-10.0",
            "LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"}
    p.write_text(json.dumps(_probe_like(good)))
    r = run_cli("check", str(p), "--json")
    assert r.returncode == 0, r.stdout
    bad = dict(good, CUDA_HOME="/usr/local/cuda-11.0")
    p.write_text(json.dumps(_probe_like(bad)))
    r = run_cli("check", str(p), "--json")
    found = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    assert r.returncode == 1 and found["env-missing-toolkit"]["component"] == "env"
    # a system cuDNN on LD_LIBRARY_PATH in front of the one pip's torch bundles
    shadow = _probe_like(
        {"PATH": "/usr/local/cuda-12.4/bin:/usr/bin", "LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64"},
        driver={"version": "550.54.15"}, python={"version": "3.11.4"}, gpus=[],
        cuda={"toolkits": [{"path": "/usr/local/cuda-12.4", "version": "12.4.1"}],
              "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-12.4"},
              "nvcc": {"path": "/usr/local/cuda-12.4/bin/nvcc", "version": "12.4.1"}, "version": "12.4.1"},
        cudnn={"version": "8.9.7", "libs": [{"path": "/usr/local/cuda-12.4/lib64/libcudnn.so.8", "version": "8.9.7"}]},
        torch={"version": "2.4.0", "local": "cu124", "cuda": "12.4", "cuda_source": "local-tag"},
        packages={"torch": {"version": "2.4.0+cu124"}, "nvidia-cudnn-cu12": {"version": "9.1.0.70"}})
    p.write_text(json.dumps(shadow))
    r = run_cli("check", str(p), "--json")
    found = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    assert r.returncode == 1 and found["cudnn-shadows-torch"]["component"] == "cudnn", found.keys()


def test_a_partial_stack_says_which_checks_were_skipped_instead_of_no_findings():
    r = run_cli("check", "--torch", "1.1.0+cu100")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "No findings" not in r.stdout
    last = r.stdout.splitlines()[-1]   # the summary line, the same shape in every command
    assert last.startswith("WARN: 0 errors, 0 warnings, 0 notes; ") and "checks skipped" in last and "no GPU" in last
    assert "skipped gpu_vs_torch" in r.stdout and "--gpu NAME|sm_XY" in r.stdout


def test_strict_makes_a_skipped_check_exit_1_and_json_lists_it():
    r = run_cli("check", "--strict", "--json", "--torch", "1.1.0+cu100", "--gpu", "V100")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and doc["findings"] == []
    checks = {s["check"] for s in doc["skipped"]}
    assert "driver_vs_torch" in checks and "gpu_vs_torch" not in checks
    for s in doc["skipped"]:
        assert set(s) == {"check", "component", "reason", "needs"} and s["reason"]
    assert run_cli("check", "--strict", *ORIGIN).returncode == 0


def test_a_finding_code_and_a_fix_command_are_never_split_across_lines():
    r = run_cli("check", "--driver", "410.48", "--cuda", "10.0", "--torch", "1.1.0", "--torchvision", "0.3.0",
                env={"COLUMNS": "60"})
    out = r.stdout
    assert "[nvcc-torch-major-mismatch]" in out      # was `[nvcc-torch-major-` ⏎ `mismatch]`
    fixes = [line.strip() for line in out.splitlines() if line.strip().startswith("fix: pip install")]
    assert fixes and fixes[0].endswith("torch_stable.html"), out   # one line, the whole command
    assert out.splitlines()[-1].startswith("FAIL: 1 error")


def test_versions_users_really_have_are_accepted():
    """Issue 21 item 5: pre-releases and dev builds are versions; nvcc's build number is its release."""
    r = run_cli("check", "--json", "--numpy", "2.1.0rc1", "--torch", "2.4.0.dev20240501+cu121", "--gpu", "sm_86")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert not [f for f in doc["findings"] if f["code"] == "torch-unknown"]
    r = run_cli("check", "--json", "--cuda", "12.2.140", "--driver", "535.54.03")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and not [f for f in doc["findings"] if f["code"] == "cuda-unknown"], r.stdout
    # judged as the 12.2 toolkit: a driver below 12.2's minimum is named against CUDA 12.2
    low = json.loads(run_cli("check", "--json", "--cuda", "12.2.140", "--driver", "530.30.02").stdout)
    assert any("CUDA 12.2" in f["message"] for f in low["findings"] if f["code"] == "driver-too-old-for-toolkit")
    # a source or vendor build is accepted and said to be one; a typo in +cuXYZ is still refused
    src = json.loads(run_cli("check", "--json", "--torch", "2.1.0a0+git32f93b1", "--gpu", "A100").stdout)
    assert [f["code"] for f in src["findings"]] == ["torch-variant-unknown"]
    assert run_cli("check", "--torch", "2.1.0+cu12x").returncode == 2


def test_the_verdict_classes_of_issue_21():
    """Same-major lower-minor targets warn with the TORCH_CUDA_ARCH_LIST fix (exit 0); a driver a
    whole branch older than the GPU's architecture, and a CPU-only torch with GPUs, are errors."""
    r = run_cli("check", "--json", "--cuda", "11.0", "--gpu", "sm_86")
    assert r.returncode == 0, r.stdout
    (w,) = json.loads(r.stdout)["findings"]
    assert w["severity"] == "warning" and "TORCH_CUDA_ARCH_LIST" in w["fix"] and "sm_80" in w["message"]
    r = run_cli("check", "--json", "--driver", "450.80.02", "--gpu", "RTX 3090")
    assert r.returncode == 1
    (e,) = json.loads(r.stdout)["findings"]
    assert e["code"] == "driver-too-old-for-gpu" and e["severity"] == "error" and "455.23" in e["fix"]
    # a driver that cannot drive the GPU is not told to "stay at CUDA <= X" instead
    r = run_cli("check", "--json", "--driver", "410.48", "--cuda", "11.1", "--gpu", "RTX 3090")
    assert all("stay at CUDA" not in f["fix"] for f in json.loads(r.stdout)["findings"]), r.stdout
    r = run_cli("check", "--torch", "2.4.0+cpu", "--gpu", "A100")
    assert r.returncode == 1 and "torch-cpu-build" in r.stdout
