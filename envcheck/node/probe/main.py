# envcheck probe, part main: arguments, the document, printing it
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

USAGE = "usage: probe.py [--deep] [--timeout SECONDS]"


def usage_error(message):
    sys.stderr.write("%s\nprobe.py: error: %s\n" % (USAGE, message))
    raise SystemExit(2)  # argparse's code for a usage error


def parse_args(argv):
    """(deep, timeout) from the command line; argparse alone would cost ~7 ms of start-up."""
    deep, timeout, args = False, TIMEOUT, list(argv)
    while args:
        a = args.pop(0)
        if a == "--deep":
            deep = True
        elif a == "--timeout" or a.startswith("--timeout="):
            value = a.partition("=")[2] if "=" in a else (args.pop(0) if args else "")
            try:
                timeout = float(value)
            except ValueError:
                timeout = -1.0
            if not timeout > 0:
                usage_error("--timeout needs a number of seconds > 0, got %r" % value)
        elif a in ("-h", "--help"):
            sys.stdout.write("%s\n\n%s\n" % (USAGE, __doc__.strip()))
            raise SystemExit(0)
        else:
            usage_error("unknown argument %r" % a)
    return deep, timeout


def main(argv=None):
    global TIMEOUT
    deep, TIMEOUT = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        facts = collect(deep)
    finally:
        reap()  # nothing the probe started outlives it, even when it crashes
    sys.stdout.write(json.dumps(facts, default=str) + "\n")
    return 0


def collect(deep):
    start = time.time()
    for cmd in (ldconfig_argv(), gcc_argv(), ip_argv()):  # these run while the driver is read
        if cmd:
            safely("start", lambda: prestart(cmd))
    facts = {"schema": 1, "origin": "probe",
             "probe": {"deep": deep, "seconds": None}}
    facts["hostname"] = safely("hostname", lambda: os.uname()[1])  # = gethostname()
    facts["machine_id"] = safely("machine_id", lambda: (read("/etc/machine-id") or "").strip() or None)
    facts["os"] = safely("os", collect_os)
    facts["python"] = {"version": sys.version.split()[0], "executable": sys.executable,
                       "prefix": sys.prefix}
    facts["driver"], facts["gpus"] = safely("driver", collect_driver, ({"version": None}, []))
    facts["cuda"] = safely("cuda", collect_cuda, {})
    ldc = ldconfig_argv()
    res = safely("ldconfig", lambda: run(ldc) if ldc else None)
    libs = parse_ldconfig(res[1]) if res and res[0] == 0 else []
    facts["cudnn"] = safely("cudnn", lambda: collect_cudnn(facts["cuda"] or {"toolkits": []}, libs))
    facts["packages"] = safely("packages", collect_packages, {})
    torch_pkg = (facts["packages"] or {}).get("torch")
    facts["torch"] = parse_torch_version(torch_pkg["version"]) if torch_pkg else None
    if deep:
        facts["deep"] = safely("deep", collect_deep)
        if facts["torch"] and facts["deep"] and facts["deep"].get("torch_cuda"):
            facts["torch"]["cuda"] = facts["deep"]["torch_cuda"]
            facts["torch"]["cuda_source"] = "deep"
    facts["nccl"] = safely("nccl", lambda: collect_nccl(facts.get("deep"), libs,
                                                        facts["packages"] or {}))
    facts["gcc"] = safely("gcc", collect_gcc)
    facts["env"] = dict((k, v) for k, v in os.environ.items()
                        if k in ENV_NAMES or k.startswith(ENV_PREFIXES))
    facts["interfaces"] = safely("interfaces", collect_interfaces, [])
    for key, fn in SECTIONS:
        facts[key] = safely(key, lambda: fn(facts))
    reap()
    facts["errors"] = ERRORS
    facts["probe"]["seconds"] = round(time.time() - start, 3)
    return facts


if __name__ == "__main__":
    sys.exit(main())
