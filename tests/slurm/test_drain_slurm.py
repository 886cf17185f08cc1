"""`envcheck doctor --drain-failed --resume-passed` from this machine (the audit over SSH) against
the real Slurm of the simulated cluster: the reason format and ownership rules of the hook, and,
without the rights to change nodes, the exact scontrol lines for an operator."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from tests.cluster.pci import nvidia_gpu, set_pci_devices
from tests.conftest import run_cli

OLD = "envcheck: xid-79: GPU has fallen off the bus"
PY = sys.executable   # has torch, and its prefix is bound into every host: doctor never PASSes a node without it


def doctor(s, *extra, env=None):
    return run_cli("doctor", *s.names, "--ssh-config", str(s.cluster.ssh_config), "--quick", "--no-expect-gpus",
                   "--node-python", PY, "--connect-timeout", "15", *extra, env={**s.env, **(env or {})}, timeout=300)


def reason(s, name):
    return (s.node(name).get("Reason") or "").rsplit(" [", 1)[0]


def test_a_failing_node_is_drained_one_envcheck_drained_is_resumed_an_operators_drain_kept(slurm_cluster):
    s = slurm_cluster
    s.cluster.trust_all_host_keys()
    s.run("scontrol", "update", "nodename=node01", "state=drain", f"reason={OLD}")
    s.run("scontrol", "update", "nodename=node03", "state=drain", "reason=maintenance: fan")
    set_pci_devices(s["node02"], [nvidia_gpu("0000:3b:00.0", "0x2330")])
    try:
        r = doctor(s, "--drain-failed", "--resume-passed", "--json")
        assert r.returncode == 1, r.stderr[-2000:]
        acts = {a["node"]: a for a in json.loads(r.stdout)["slurm_actions"]}
        assert (acts["node01"]["action"], acts["node01"]["done"]) == ("resume", True)
        assert (acts["node02"]["action"], acts["node02"]["done"]) == ("drain", True)
        assert acts["node03"]["action"] == "nothing" and "maintenance: fan" in acts["node03"]["why"]
        assert "DRAIN" not in s.node("node01")["State"] and not reason(s, "node01")
        assert "DRAIN" in s.node("node02")["State"]
        assert reason(s, "node02") == acts["node02"]["reason"] and acts["node02"]["reason"].startswith("envcheck: driver-not-found: ")
        assert "DRAIN" in s.node("node03")["State"] and reason(s, "node03") == "maintenance: fan"
    finally:
        s["node02"].run_local("umount /sys/bus/pci/devices", check=False)
        s.run("scontrol", "update", "nodename=node01,node02,node03", "state=resume", check=False)


def test_without_the_rights_nothing_changes_and_the_exact_lines_are_printed(slurm_cluster, tmp_path):
    s = slurm_cluster
    # the real scontrol, whose updates run as nobody: Slurm answers "Invalid user id"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text('#!/bin/sh\nif [ "$1" = update ]; then exec setpriv --reuid=65534 --regid=65534 '
                                   '--clear-groups /usr/bin/scontrol "$@"; fi\nexec /usr/bin/scontrol "$@"\n')
    (bin_ / "scontrol").chmod(0o755)
    set_pci_devices(s["node02"], [nvidia_gpu("0000:3b:00.0", "0x2330")])
    try:
        r = doctor(s, "--drain-failed", env={"PATH": f"{bin_}:{os.environ['PATH']}"})
        assert r.returncode == 1
        assert "DRAIN" not in s.node("node02")["State"]                    # nothing changed
        out = r.stdout.splitlines()
        assert any(l.startswith("slurm: node02: not drained: not allowed to change nodes") for l in out), r.stdout
        i = out.index("As a Slurm operator, run:")
        block = []   # the indented lines under the heading; the summary line follows them
        for l in out[i + 1:]:
            if not l.startswith(" "):
                break
            block.append(l.strip())
        assert len(block) == 1 and out[-1].startswith("FAIL: 3 hosts: 1 FAIL, 2 PASS"), r.stdout
        (line,) = block
        assert line.startswith("scontrol update nodename=node02 state=drain 'reason=envcheck: driver-not-found: ")
        subprocess.run(shlex.split(line), check=True, env={**os.environ, **s.env}, timeout=30)   # as an operator would
        assert "DRAIN" in s.node("node02")["State"]
        assert reason(s, "node02") == shlex.split(line)[-1][len("reason="):]
    finally:
        s["node02"].run_local("umount /sys/bus/pci/devices", check=False)
        s.run("scontrol", "update", "nodename=node02", "state=resume", check=False)
