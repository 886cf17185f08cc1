# envcheck probe, part kept: the answers of version queries kept on the node, per program file
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

# `nvcc -V` and `gcc -dumpfullversion -dumpversion` print what was built into the program: the
# same file gives the same answer; `ldconfig -p` prints the loader's cache, /etc/ld.so.cache:
# the same two files, the same lines (only those of WANTED_LIBS are kept). Each run costs a node
# a process (nvcc through Debian's wrapper two; gcc once per gcc-N installed; ldconfig ~2 ms):
# ~12 ms of the probe's CPU (bench/probe_cpu.py). So a
# successful answer is kept in the directory the probe's loader keeps its code in
# ($XDG_CACHE_HOME/envcheck, else ~/.cache/envcheck; the user's own, mode 0700), keyed by the
# command line and the identity of every file that decides it (device, inode, size, mtime and
# ctime: replaced, rewritten in place or touched, it is asked again), with LD_PRELOAD and
# LD_LIBRARY_PATH. Only a program that answers by itself is kept: an ELF named nvcc or gcc, or
# the one-line `exec /path/nvcc "$@"` wrapper Debian ships, followed to that ELF, or the gcc
# wrapper Debian's nvcc.profile puts first (it runs the first g++-N of its list whose --version
# works, then execs gcc-N: the files of that g++-N and gcc-N in the key; ~3 ms of CPU a probe,
# three processes); never another script, nor ccache or distcc (they ask the compiler behind them). And nvidia-smi's failure where NVML failed to start in the same run
# (failure_key: ~16 ms a probe on a node whose driver is down, which Slurm's health check probes
# every few minutes), and NVML's own failure to start, for the same library file and the same
# state of the kernel module (nvml_failure_key: ~9 ms). ENVCHECK_PROBE_CACHE=off: nothing is
# kept or read.

import json
import os
import re
from base import which

ANSWERS_FILE = "answers-1.json"
ANSWERS_KEPT = 64
# the queries whose answer is the program's own, and the programs that give it themselves
STABLE = {("-V",): re.compile(r"^nvcc$"),
          ("-dumpfullversion", "-dumpversion"): re.compile(r"^(?:[\w.]+-)*g?cc(?:-\d+(?:\.\d+)*)?$"),
          ("-p",): re.compile(r"^ldconfig$")}
# the files besides the program that decide its answer: `ldconfig -p` prints the loader's cache
STABLE_INPUTS = {("-p",): ("/etc/ld.so.cache",)}
# the libraries the probe looks up in `ldconfig -p` (part ldconfig: cuDNN, NCCL, the libcuda
# cuda-compat follows): only their lines are parsed, and kept, not the thousands of others
WANTED_LIBS = ("libcudnn", "libnccl", "libcuda.so")
STABLE_LINES = {("-p",): WANTED_LIBS}
EXEC_WRAPPER = re.compile(r'^exec\s+(/\S+)\s+"\$@"$')
ANSWERS = {"path": None, "known": None, "new": False}


# answers_dir() and private() are the loader's _envcheck_cache_dir() and _envcheck_private():
# the loader runs before the probe and without it, the probe without the loader (a saved script,
# the tests), and neither can import the other. tests/audit/test_probe_cache.py holds them equal.
def answers_dir():
    """The private cache directory (the loader's), or None."""
    if os.environ.get("ENVCHECK_PROBE_CACHE") == "off":
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base.startswith("/"):
        home = os.environ.get("HOME", "")
        if not home.startswith("/") or home.rstrip("/") == "":
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "envcheck")


def private(path):
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def identity(path):
    st = os.stat(path)
    return [path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def program_files(path, depth=0):
    """The files that decide what `path` prints, or None when something else may (a script)."""
    real = os.path.realpath(path)
    try:
        with open(real, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if head.startswith(b"\x7fELF"):
        return [real]
    if not head.startswith(b"#!") or depth or len(head) == 4096:
        return None
    lines = [l.strip() for l in head.decode("utf-8", "replace").splitlines()[1:]]
    lines = [l for l in lines if l and not l.startswith("#")]
    m = EXEC_WRAPPER.match(lines[0]) if len(lines) == 1 else None
    target = program_files(m.group(1), 1) if m else picked_files(lines)
    return [real] + target if target else None


# Debian's compiler-picking wrapper (nvidia-cuda-toolkit's bin/gcc and bin/g++), line by line:
# Q `prog=false`, T `if|elif NAME --version >/dev/null 2>&1; then`, P `prog=NAME`, E `echo "..." >&2`,
# X `exit 1`, L `else`, F `fi`, Z `exec $prog "$@"`: each branch picks a program or fails. Read
# with re.match only here (what a probe compiles at start-up it pays on every run).
PICKER_WORDS = {"prog=false": "Q", "exit 1": "X", "else": "L", "fi": "F", 'exec $prog "$@"': "Z"}


def picker_line(line):
    """(kind, NAME or None) of a line of the wrapper, None for any other line."""
    if line in PICKER_WORDS:
        return PICKER_WORDS[line], None
    if line.startswith('echo "') and line.endswith('" >&2') and not any(c in line[6:-5] for c in '"`$\\'):
        return "E", None
    m = re.match(r"^(?:if|elif) ([\w.+-]+) --version >/dev/null 2>&1; then$", line)
    if m:
        return "T", m.group(1)
    m = re.match(r"^prog=([\w.+-]+)$", line)
    return ("P", m.group(1)) if m else None


def picked_files(lines):
    """The files that decide what Debian's compiler-picking wrapper (its `lines`) prints: the
    first program it tests that is on PATH, then the program that branch execs (ELFs both), or
    None: another script, a branch that fails (no g++ but a clang), a program not found. (The
    first found is the one whose --version answered when the answer was kept, as the wrapper
    ran it: a program's answers are its file's, as for nvcc -V.)"""
    got = [picker_line(l) for l in lines]
    if None in got or not re.match(r"^Q?(?:T(?:P|E*X))+(?:LE*X)?FZ$", "".join(k for k, _ in got)):
        return None
    for (kind, name), (then, prog) in zip(got, got[1:]):
        tested = which(name) if kind == "T" else None
        if tested:
            files = [program_files(p, 1) for p in (tested, which(prog) if then == "P" else None) if p]
            return files[0] + files[1] if len(files) == 2 and all(files) else None
    return None


def stable_key(argv):
    """The key of argv's answer when its program answers by itself, else None."""
    name = STABLE.get(tuple(argv[1:]))
    if name is None or "/" not in argv[0] or answers_dir() is None:
        return None
    files = program_files(argv[0])
    if not files or not name.match(os.path.basename(files[-1])):
        return None
    try:
        ids = [identity(f) for f in files + list(STABLE_INPUTS.get(tuple(argv[1:]), ()))]
    except OSError:
        return None
    return json.dumps([list(argv), ids, os.environ.get("LD_PRELOAD"), os.environ.get("LD_LIBRARY_PATH")])


def kept_part(argv, res):
    """What of argv's answer is kept: the lines its readers look at (STABLE_LINES), or all of it."""
    lines = STABLE_LINES.get(tuple(argv[1:]))
    if not lines or not res:
        return res
    return res[0], "".join(l + "\n" for l in res[1].splitlines() if any(w in l for w in lines)), res[2]


def failure_key(argv, driver):
    """The key of nvidia-smi's failure when NVML failed to start in this run (the driver not
    loaded, a version mismatch): nvidia-smi starts NVML the same way and prints its fixed message
    for that failure, so its answer is decided by its own file, the library and what this run
    saw (NVML's error, the kernel module's version). A real driver that starts never gets here:
    NVML answered and nvidia-smi is not run. None when nvidia-smi is no ELF of that name."""
    if "/" not in argv[0] or answers_dir() is None:
        return None
    files = program_files(argv[0])
    library = (driver.get("userspace") or {}).get("library")
    if not files or len(files) != 1 or os.path.basename(files[0]) != "nvidia-smi" or not library:
        return None
    try:
        ids = [identity(f) for f in files + [library]]
    except OSError:
        return None
    return json.dumps([list(argv), ids, driver.get("nvml_error"), driver.get("kernel_module"),
                       os.environ.get("LD_PRELOAD"), os.environ.get("LD_LIBRARY_PATH")])


# what NVML runs to load a missing kernel module (setuid, a path fixed in the library): where it
# is there, a failure to start NVML may end at the next run without any file here changing
NVIDIA_MODPROBE = "/usr/bin/nvidia-modprobe"
NVML_DRIVER_NOT_LOADED = 9          # nvmlReturn_t codes
NVML_LIB_RM_VERSION_MISMATCH = 18


def nvml_failure_key(library, kernel_module):
    """The key of NVML's own failure to start (nvmlInit) with the library file `library` (the
    one the loader opened) and the kernel module in the state this run sees: nvmlInit answers
    from the library and the module alone, and costs ~9 ms of CPU before it fails (it sets up
    its state first). The module's state is in the key: its version (/proc/driver/nvidia/version),
    whether the kernel lists it, whether nvidia-modprobe could load it. None when nothing may be
    kept (no cache, no library)."""
    if not library or answers_dir() is None:
        return None
    try:
        ids = [identity(library)]
    except OSError:
        return None
    return json.dumps(["nvmlInit", ids, kernel_module, os.path.exists("/sys/module/nvidia"),
                       os.path.lexists(NVIDIA_MODPROBE), os.environ.get("LD_PRELOAD"),
                       os.environ.get("LD_LIBRARY_PATH")])


def nvml_failure_keepable(key, code):
    """Whether NVML's failure `code` under `key` is decided by what the key holds: "driver not
    loaded" where no module is loaded and none can be loaded by NVML itself; a version mismatch
    against a loaded module's version. Nothing else (a module loaded but its device files
    missing, a busy GPU, a timeout) is kept."""
    try:
        _, _, module, listed, modprobe = json.loads(key)[:5]
    except (TypeError, ValueError):
        return False
    if code == NVML_DRIVER_NOT_LOADED:
        return module is None and not listed and not modprobe
    return code == NVML_LIB_RM_VERSION_MISMATCH and bool(module)


def known_answers():
    if ANSWERS["known"] is None:
        folder = answers_dir()
        ANSWERS["path"] = os.path.join(folder, ANSWERS_FILE) if folder else None
        ANSWERS["known"] = {}
        if folder and private(folder):
            try:
                with open(ANSWERS["path"]) as f:
                    known = json.load(f)
                ANSWERS["known"] = known if isinstance(known, dict) else {}
            except (OSError, ValueError):
                pass
    return ANSWERS["known"]


def known_answer(key, failed=False):
    """The answer kept under `key`: (0, stdout, stderr), or with `failed` (exit code != 0,
    stdout, stderr); else None."""
    got = known_answers().get(key) if key else None
    if (isinstance(got, list) and len(got) == 3 and isinstance(got[0], int) and (got[0] != 0) == failed
            and all(isinstance(t, str) for t in got[1:])):
        return tuple(got)
    return None


def keep_answer(key, res, failed=False):
    if key and res and (res[0] != 0) == failed:
        known = known_answers()
        if known.get(key) == list(res):  # read back from the store: nothing new to write
            return
        known.pop(key, None)
        known[key] = list(res)
        ANSWERS["new"] = True


def save_answers():
    """Write the answers back (atomically, the newest ANSWERS_KEPT) when this run learnt one."""
    path = ANSWERS["path"]
    if not ANSWERS["new"] or not path:
        return
    folder = os.path.dirname(path)
    # a home shared by many nodes (NFS): the node's name too, so no two writers share a name
    tmp, made = "%s.%s.%d.tmp" % (path, os.uname()[1], os.getpid()), False
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, 0o700)
        if not private(folder):
            return
        known = list(ANSWERS["known"].items())[-ANSWERS_KEPT:]
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        made = True
        with os.fdopen(fd, "w") as f:
            json.dump(dict(known), f)
        os.replace(tmp, path)
        ANSWERS["new"] = False
    except OSError:
        try:
            if made:
                os.unlink(tmp)
        except OSError:
            pass
