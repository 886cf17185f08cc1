# envcheck probe, part disk: what is at each --path (kind, link target, real path, owner, access) and the free space there
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import stat
from base import Settings, section


def path_facts(path):
    """{"path", "kind": "dir"|"file"|"link"|"other"|None (absent), "link": target of a link (as
    written), "real": the path with every link resolved, "uid" (of the path itself, a link's own),
    "writable", "executable", "free_kb"}: free_kb is on the filesystem of the nearest existing
    directory at or above `path` (where a new file there would go)."""
    out = {"path": path, "kind": None, "link": None, "real": os.path.realpath(path), "uid": None,
           "writable": False, "executable": False, "free_kb": None}
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None:
        out["kind"] = ("link" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
                       else "file" if stat.S_ISREG(st.st_mode) else "other")
        out["uid"] = st.st_uid
        out["link"] = os.readlink(path) if out["kind"] == "link" else None
        out["writable"] = os.access(path, os.W_OK)
        out["executable"] = os.access(path, os.X_OK)
    d = path
    while d and not os.path.isdir(d):
        d = os.path.dirname(d.rstrip("/")) or "/"
    try:
        vfs = os.statvfs(d or "/")
        out["free_kb"] = vfs.f_bavail * vfs.f_frsize // 1024
    except OSError:
        pass
    return out


@section("disk", default=[])
def collect_disk(facts=None):
    return [path_facts(p) for p in Settings.paths]
