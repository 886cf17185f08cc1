"""`doctor --dcgm N`: dcgmi's JSON (3.x and 4.x) into one check per host, and a node without
dcgmi reported as skipped, through a real LocalRemote running the real shell line."""
from __future__ import annotations

from pathlib import Path

from envcheck.doctor.dcgm import NO_DCGMI, command, parse, run_dcgm
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN
from envcheck.remote import LocalRemote

FX = Path(__file__).resolve().parent.parent / "fixtures" / "dcgm"


def test_a_3x_run_whose_tests_pass_or_skip_passes():
    status, message, _ = parse((FX / "diag-r3-3.x-skips.json").read_text(), 3)
    assert (status, message) == (PASS, "DCGM level 3: 4 test(s) passed or skipped")


def test_a_failing_test_fails_the_node_naming_the_test_gpu_and_dcgms_reason():
    status, message, fix = parse((FX / "diag-r2-3.x-fail.json").read_text(), 2)
    assert status == FAIL
    assert message == ("DCGM level 2 failed: PCIe (GPU 1): Detected 12 PCIe replays per minute for GPU 1 : 12, "
                       "which exceeds threshold of 8")
    assert "dcgmi diag -r 2" in fix


def test_the_4x_format_is_read_from_its_test_summary():
    assert parse((FX / "diag-r1-4.x-pass.json").read_text(), 1)[0] == PASS
    text = (FX / "diag-r1-4.x-pass.json").read_text().replace('"status" : "Pass"\n\t\t\t\t\t\t}', '"status" : "Fail"\n\t\t\t\t\t\t}')
    assert parse(text, 1)[0] == FAIL


def test_text_that_is_not_dcgms_json_is_unknown_not_pass():
    assert parse("Error: unable to connect to host engine", 1)[0] == UNKNOWN
    assert parse("{}", 1)[0] == UNKNOWN


def test_a_node_without_dcgmi_is_skipped_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    [c] = run_dcgm([LocalRemote()], 1)
    assert (c.check, c.status) == ("dcgm", SKIP) and "dcgmi not found" in c.message


def test_a_stand_in_dcgmi_is_run_with_the_level_and_its_json_judged(tmp_path, monkeypatch):
    fake = tmp_path / "dcgmi"
    fake.write_text(f'#!/bin/sh\n[ "$*" = "diag -r 2 -j" ] || exit 9\ncat "{FX / "diag-r2-3.x-fail.json"}"\nexit 226\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    [c] = run_dcgm([LocalRemote()], 2)
    assert c.status == FAIL and "PCIe (GPU 1)" in c.message
    assert NO_DCGMI in command(1) and "dcgmi diag -r 1 -j" in command(1)
