"""Fabric's Connection writes to the config it is given (invoke's DataProxy turns `self.inline_ssh_env
= ...` into a config modification, which re-merges the config from an empty dict), so connections
made in parallel threads (every fan-out) must not share one config object: a thread reading
`gateway` or `connect_kwargs` while another re-merged got "No attribute or config key found for
'gateway'", and that host was reported unreachable (CI, tests/install/test_install_cluster.py).
No network here: fabric.Connection() only builds the object; open() is what connects."""
from __future__ import annotations

import sys
import threading

import fabric
import pytest

from envcheck.hosts.ssh import _fabric_config


def _build_in_threads(config_for, threads=16, each=200):
    errors = []

    def work():
        for i in range(each):
            try:
                fabric.Connection(f"node{i:02d}", user="u", port=22, config=config_for(),
                                  connect_kwargs={"banner_timeout": 5})
            except Exception as e:  # noqa: BLE001 - what we look for
                errors.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)      # switch threads as often as the interpreter can
    try:
        ts = [threading.Thread(target=work) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(old)
    return errors


def test_each_connection_gets_its_own_config_with_fabrics_ssh_config_loading_off():
    a, b = _fabric_config(), _fabric_config()
    assert a is not b
    assert a.load_ssh_configs is False and b.load_ssh_configs is False


def test_connections_built_in_parallel_threads_never_see_a_half_merged_config():
    assert _build_in_threads(_fabric_config) == []


def test_the_race_is_real_with_one_shared_config():
    """The control: with one config shared by every thread the same construction fails, so the test
    above can fail (on this machine 15 of 16 threads hit it; a GIL scheduling that never interleaves
    there would make this a skip, not a pass)."""
    shared = fabric.Config(overrides={"load_ssh_configs": False})
    errors = _build_in_threads(lambda: shared)
    if not errors:
        pytest.skip("no interleaving happened this run: the control could not show the race")
    assert any("No attribute or config key found" in e for e in errors), errors[:3]
