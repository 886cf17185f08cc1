# envcheck probe loader: runs the probe that follows it from a compiled copy kept on this node.
# Node side, stdlib only, parseable by Python 2.7 (so the probe itself can say it needs >= 3.6).
# Shipped in front of the probe (envcheck/audit/probe.py: shipped_source()); the one-line
# bootstrap (probe.BOOTSTRAP) reads stdin into _envcheck_in and compiles only this loader, up to
# the "# ---- probe KEY ----" line (at _envcheck_at). Compiling the ~2,000-line probe costs
# ~28 ms of CPU on every run (bench/probe_cpu.py), unmarshalling its code ~1 ms: the code is kept in
# $XDG_CACHE_HOME/envcheck (else ~/.cache/envcheck), one file per probe text and interpreter
# magic, and used only when the source stored beside it is byte for byte the source received
# (as CPython trusts a hash-checked .pyc); anything else (no home, a foreign or open directory,
# a read-only disk, a torn or odd file, ENVCHECK_PROBE_CACHE=off) compiles the source as before.
# Run as a saved file (`python3 probe.py`, from --show-probe) there is no _envcheck_in: this
# part does nothing and the probe below runs as plain code.
import os
import sys

_ENVCHECK_HEADER = b"envcheck-probe-code 1\n"
_ENVCHECK_KEEP = 16   # compiled probes kept: a few per envcheck version (each command ships its own)


# the same as the probe's part kept (answers_dir, private), which cannot import this file
def _envcheck_cache_dir():
    """The private cache directory, or None: it must be ours, a real directory, closed to others."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base.startswith("/"):
        home = os.environ.get("HOME", "")
        if not home.startswith("/") or home.rstrip("/") == "":
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "envcheck")


def _envcheck_private(path):
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def _envcheck_read(path, magic, source):
    """The code object stored at `path` for exactly `source` under this interpreter's `magic`."""
    import marshal
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    start = len(_ENVCHECK_HEADER) + len(magic) + 12
    if blob[:start] != _ENVCHECK_HEADER + magic + b"%012d" % len(source):
        return None
    if blob[start:start + len(source)] != source:
        return None
    try:
        code = marshal.loads(blob[start + len(source):])
    except (ValueError, EOFError, TypeError):
        return None
    return code if type(code).__name__ == "code" else None


def _envcheck_write(folder, path, magic, source, code):
    """Store the code atomically (a temporary file renamed over the name), then keep the newest."""
    import marshal
    # a home shared by many nodes (NFS): the node's name too, so no two writers share a name
    tmp, made = "%s.%s.%d.tmp" % (path, os.uname()[1], os.getpid()), False
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, 0o700)
        if not _envcheck_private(folder):
            return
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        made = True
        with os.fdopen(fd, "wb") as f:
            f.write(_ENVCHECK_HEADER + magic + b"%012d" % len(source) + source + marshal.dumps(code))
        os.replace(tmp, path)
        kept = sorted((os.stat(os.path.join(folder, n)).st_mtime, n) for n in os.listdir(folder)
                      if n.startswith("probe-") and n.endswith(".code"))
        for _, name in kept[:-_ENVCHECK_KEEP]:
            os.unlink(os.path.join(folder, name))
    except OSError:
        try:
            if made:
                os.unlink(tmp)
        except OSError:
            pass


def _envcheck_code(data, at):
    """The probe's code object: `data` is all of stdin, the probe starts at `at` (its first line
    names its key: a hash of its text the controller computed)."""
    source = data[at:]
    magic = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", None)
    folder = _envcheck_cache_dir()
    key = (source[:source.find(b"\n")].split() + [b""] * 5)[3]
    if (sys.version_info < (3, 6) or not magic or folder is None or not key.isalnum()
            or os.environ.get("ENVCHECK_PROBE_CACHE") == "off"):
        return compile(source, "envcheck-probe", "exec")
    path = os.path.join(folder, "probe-%s-%s.code" % (key.decode("ascii"), magic.hex()))
    code = _envcheck_read(path, magic, source) if _envcheck_private(folder) else None
    if code is None:
        code = compile(source, "envcheck-probe", "exec")
        _envcheck_write(folder, path, magic, source, code)
    return code


if "_envcheck_in" in globals():
    # no cyclic garbage collector in a run this short: it walked the probe's objects ~8 times a
    # run, ~1.5 ms of CPU, to free next to nothing (the process ends a moment later)
    import gc
    gc.disable()
    exec(_envcheck_code(_envcheck_in, _envcheck_at))  # noqa: F821 - both set by the bootstrap
