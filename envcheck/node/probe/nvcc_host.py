# envcheck probe, part nvcc_host: the host compiler nvcc will really run
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

# nvcc picks its host compiler in this order: -ccbin / --compiler-bindir (here: from the
# NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS it adds to every command line), then NVCC_CCBIN, then
# `gcc` on the PATH it builds from the nvcc.profile beside the real nvcc binary. Debian's and
# Ubuntu's nvidia-cuda-toolkit puts /usr/lib/nvidia-cuda-toolkit/bin (gcc/g++ wrappers that run
# g++-11 ...) first there, so the first gcc on the user's PATH is not what nvcc runs.

CCBIN_FLAG = re.compile(r"(?:^|\s)(?:-ccbin|--compiler-bindir)(?:=|\s+)(\S+)")
NVCC_EXEC = re.compile(r"\bexec\s+[\"']?(/[^\s\"']*/nvcc)[\"']?")


def nvcc_real(nvcc_path):
    """The nvcc binary behind nvcc_path: symlinks resolved, and a shell wrapper that execs another
    nvcc (Debian's /usr/bin/nvcc: `exec /usr/lib/nvidia-cuda-toolkit/bin/nvcc "$@"`) followed."""
    path = os.path.realpath(nvcc_path)
    for _ in range(3):
        head = read(path, 4096)
        found = NVCC_EXEC.search(head) if head and head.startswith("#!") else None
        if not found:
            break
        path = os.path.realpath(found.group(1))
    return path


def profile_path(nvcc_bin, env_path):
    """(PATH as nvcc builds it, the entries nvcc.profile put there). Profile syntax: `X = v`
    assigns, `X ?= v` assigns when unset, `X += v` prepends, `X =+ v` appends; $(NAME) expands
    profile variables, _HERE_ (the profile's directory) and the environment."""
    here = os.path.dirname(nvcc_bin)
    text = read(os.path.join(here, "nvcc.profile"), 1 << 16)
    vals = {"_HERE_": here, "_SPACE_": " ", "PATH": env_path}
    added = []
    for line in (text or "").splitlines():
        m = re.match(r"^\s*(\w+)\s*(\+=|=\+|\?=|=)\s*(.*?)\s*$", line.split("#", 1)[0])
        if not m:
            continue
        name, op, value = m.groups()
        value = re.sub(r"\$\((\w+)\)", lambda v: vals.get(v.group(1), os.environ.get(v.group(1), "")), value)
        old = vals.get(name, os.environ.get(name, ""))
        new = {"+=": value + old, "=+": old + value, "?=": old or value, "=": value}[op]
        if name == "PATH":
            added += [p for p in value.split(os.pathsep) if p]
        vals[name] = new
    return vals["PATH"], added


def compiler_in(directory_or_name, path):
    """-ccbin takes a directory (nvcc runs the gcc in it) or a compiler, by path or by name."""
    if os.path.isdir(directory_or_name):
        for name in ("gcc", "g++"):
            p = os.path.join(directory_or_name, name)
            if os.access(p, os.X_OK):
                return p
        return None
    if os.sep in directory_or_name:
        return directory_or_name
    return which_in(directory_or_name, path)


def which_in(name, path):
    for d in path.split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.access(p, os.X_OK) and not os.path.isdir(p):
            return p
    return None


def host_compiler(nvcc_path):
    """{"path", "version", "how"} of the compiler nvcc runs, or None when none is found."""
    env_path = os.environ.get("PATH", os.defpath)
    real = nvcc_real(nvcc_path)
    nvcc_path_var, added = profile_path(real, env_path)
    chosen, how = None, None
    for var in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"):  # the later one on the command line first
        m = CCBIN_FLAG.search(os.environ.get(var, ""))
        if m:
            chosen, how = compiler_in(m.group(1), nvcc_path_var), "-ccbin in " + var
            break
    if chosen is None and os.environ.get("NVCC_CCBIN"):
        chosen, how = compiler_in(os.environ["NVCC_CCBIN"], nvcc_path_var), "NVCC_CCBIN"
    if chosen is None and how is None:
        chosen = which_in("gcc", nvcc_path_var)
        inside = chosen and any(os.path.dirname(chosen) == os.path.normpath(a) for a in added)
        how = "nvcc.profile PATH" if inside else "PATH"
    if chosen is None:
        return {"path": None, "version": None, "how": how}
    res = run([chosen, "-dumpfullversion", "-dumpversion"])
    version = res[1].strip().splitlines()[0] if res and res[0] == 0 and res[1].strip() else None
    return {"path": chosen, "version": version, "how": how}
