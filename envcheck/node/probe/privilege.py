# envcheck probe, part privilege: whether commands can run as root here (root, or sudo without a password)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from base import Settings, section
from run import run, which

SUDO_SECONDS = 10.0   # sudo -n answers at once; a slow LDAP/sssd lookup must not hold the probe


@section("privilege")
def collect_privilege(facts=None):
    """{"uid", "mode"}: root | sudo-nopasswd | sudo-password | none. `sudo -n` so a missing
    NOPASSWD rule fails at once instead of waiting for a password (stdin is /dev/null too)."""
    uid = os.getuid()
    if uid == 0:
        return {"uid": uid, "mode": "root"}
    sudo = which("sudo")
    if not sudo:
        return {"uid": uid, "mode": "none"}
    res = run([sudo, "-n", "true"], timeout=min(Settings.timeout, SUDO_SECONDS))
    return {"uid": uid, "mode": "sudo-nopasswd" if res and res[0] == 0 else "sudo-password"}
