# envcheck probe, part rcfile: each shell start-up file at --file (env's target): where it really is, and its text
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import stat
from base import Settings, section

TEXT_LIMIT = 16 << 20   # a start-up file is small; one larger is not edited (it is not read whole)


@section("rcfile", default=[])
def collect_rcfile(facts=None):
    return [rc_file(p) for p in Settings.files]


def rc_file(given):
    """{"given", "path": where it really is (a dotfile symlink resolved: edited at its target,
    not replaced), "kind": "file"|"none"|"other"|"nohome", "link": "no"|"in"|"out" (a link
    followed, inside the home or /etc/profile.d or not), "writable": whether this login can
    replace it without root (its directory is writable), "sha256", "text" (None: not UTF-8 or
    too large, "utf8": False)}. A ~/ path with HOME unset or empty is "nohome", never /.bashrc."""
    out = {"given": given, "path": given, "kind": "none", "link": "no", "writable": False,
           "sha256": None, "text": None, "utf8": True}
    home = os.environ.get("HOME") or ""
    if given.startswith("~/"):
        if not home:
            out["kind"] = "nohome"
            return out
        given = os.path.join(home, given[2:])
    real = os.path.realpath(given)
    out["path"] = real
    out["writable"] = os.access(os.path.dirname(real), os.W_OK)
    if os.path.islink(given):
        inside = [d.rstrip("/") + "/" for d in (home, "/etc/profile.d") if d]
        out["link"] = "in" if any(real.startswith(d) for d in inside) else "out"
    try:
        st = os.stat(real)
    except OSError:
        return out if not os.path.lexists(real) else dict(out, kind="other")
    if not stat.S_ISREG(st.st_mode):
        out["kind"] = "other"
        return out
    out["kind"] = "file"
    import hashlib  # only the sections that ask pay for it
    with open(real, "rb") as f:
        data = f.read(TEXT_LIMIT + 1)
    out["sha256"] = hashlib.sha256(data).hexdigest()
    try:
        out["text"] = data.decode("utf-8") if len(data) <= TEXT_LIMIT else None
    except UnicodeDecodeError:
        out["text"] = None
    out["utf8"] = out["text"] is not None
    return out
