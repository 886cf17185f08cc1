# envcheck probe, part packages: torch & co (and numpy) from package metadata, and NCCL
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

WANTED = re.compile(r"^(torch|torchvision|torchaudio|numpy|nvidia-.*|pynvml)$")
# metadata directories worth opening: `name-version.dist-info` / `.egg-info` of a WANTED name
# (normalised with _ or not, any case); the exact Name inside decides
META_DIR = re.compile(r"^(?:(?:torch|torchvision|torchaudio|numpy|pynvml)-|nvidia[-_.]).*\.(?:dist|egg)-info$",
                      re.IGNORECASE)


def collect_packages():
    """torch & co from package metadata, WITHOUT importing them (importing torch can take
    seconds, initialise CUDA or crash; --deep does that in a child process).

    Walks sys.path in order, as importlib.metadata does, but opens only the metadata of the
    packages we report: a full importlib.metadata scan reads every METADATA file on the node
    (and its import alone is ~20 ms of start-up), which 32 nodes sharing a machine pay 32 times."""
    found = {}

    def add(name, version, location):
        key = re.sub(r"[-_.]+", "-", name or "").lower()
        if not WANTED.match(key) or not version:
            return
        entry = {"version": version, "location": location}
        if key in found:  # the first on sys.path is what `import` gets; keep the rest visible
            found[key].setdefault("shadows", []).append(entry)
        else:
            found[key] = entry

    seen = set()
    for d in sys.path:
        location = os.path.abspath(d or ".")
        if location in seen:
            continue
        seen.add(location)
        for meta in ls(location, META_DIR):
            if os.path.isdir(meta):
                meta = os.path.join(meta, "METADATA" if meta.endswith("dist-info") else "PKG-INFO")
            text = read(meta, 1 << 16)
            if text is None:
                continue
            try:
                name, version = parse_metadata(text)
                add(name, version, location)
            except Exception as e:  # one broken install must not hide the others
                ERRORS.append("packages: %s: %s" % (meta, e))
    return found


def collect_nccl(deep, ldconfig_libs, packages):
    if deep and deep.get("nccl"):
        return {"version": deep["nccl"], "source": "torch"}
    for lib in ldconfig_libs:
        if re.match(r"^libnccl\.so(\.\d+)*$", lib["name"]):
            v = lib_version(os.path.realpath(lib["path"]), "libnccl")
            if v and v.count(".") >= 2:
                return {"version": v, "source": "libnccl", "path": lib["path"]}
    for name in sorted(packages):
        if name.startswith("nvidia-nccl-cu"):
            return {"version": packages[name]["version"], "source": "wheel"}
    return {"version": None, "source": None}
