# envcheck probe, part login: the login this probe runs as: its name, home and login shell
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from base import section


@section("login")
def collect_login(facts=None):
    """{"user", "uid", "home", "shell"} from the passwd database (NSS: LDAP/sssd users too). The
    shell decides which start-up file a non-interactive SSH command reads (env: bash reads
    ~/.bashrc, zsh ~/.zshenv, dash none)."""
    import pwd  # only the sections that ask pay for it
    uid = os.getuid()
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:  # a uid without a passwd entry (a container's --user 1234)
        return {"user": None, "uid": uid, "home": os.environ.get("HOME"), "shell": None}
    return {"user": entry.pw_name, "uid": uid, "home": entry.pw_dir, "shell": entry.pw_shell or None}
