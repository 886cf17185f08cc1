"""The runfile stand-ins behave like NVIDIA's where it matters to install-cuda."""
from __future__ import annotations

import subprocess

from tests.provision import standins


def _sh(*args, cwd=None):
    return subprocess.run(["sh", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=60)


def test_the_patched_header_passes_unknown_flags_on_and_keeps_its_line_count(tmp_path, monkeypatch):
    monkeypatch.setattr(standins, "_patch_header", lambda p: None)
    plain = standins.cuda_runfile(tmp_path / "plain", "12.4.1")
    monkeypatch.undo()
    patched = standins.cuda_runfile(tmp_path / "patched", "12.4.1")
    # Debian's header refuses what NVIDIA's hands on
    refused = _sh(plain, "--silent", "--toolkit", f"--toolkitpath={tmp_path}/t1")
    assert refused.returncode != 0 and "Unrecognized flag : --silent" in refused.stderr
    # the header finds its payload `skip` lines down: same skip, and the patched file still checks
    import re
    skip = [re.search(rb'skip="(\d+)"', f.read_bytes()).group(1) for f in (plain, patched)]
    assert skip[0] == skip[1]
    header = patched.read_bytes().split(b"\n")[:int(skip[1])]
    assert b"\tbreak" in b"\n".join(header) and b"Unrecognized flag" not in b"\n".join(header)
    assert _sh(patched, "--check").returncode == 0


def test_each_generation_rejects_the_other_generations_flags(tmp_path):
    perl = standins.cuda_runfile(tmp_path, "10.0.130")
    new = standins.cuda_runfile(tmp_path, "12.4.1")
    r = _sh(perl, "--silent", "--toolkit", f"--toolkitpath={tmp_path}/p", "--no-drm")
    assert r.returncode == 1 and "Unknown option: --no-drm" in r.stderr
    r = _sh(new, "--silent", "--toolkit", f"--toolkitpath={tmp_path}/n", "--verbose")
    assert r.returncode == 1 and "Unknown option: --verbose" in r.stderr
    assert not (tmp_path / "p").exists() and not (tmp_path / "n").exists()


def test_a_flipped_byte_fails_makeselfs_own_check(tmp_path):
    run = standins.cuda_runfile(tmp_path, "12.4.1")
    standins.flip_byte(run)
    r = _sh(run, "--check")
    assert r.returncode != 0
