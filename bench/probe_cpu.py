#!/usr/bin/env python3
"""Where one node's probe goes, in CPU: the probe as envcheck ships it (`python3 - < probe.py`)
on a simulated node with NVIDIA's packaged userspace (Debian's libnvidia-ml1, nvidia-smi and
nvidia-cuda-toolkit, as tests/nvidia_userspace.sh installs them: a node whose kernel module is
not loaded), a CUDA 12.1 toolkit with cuDNN in /usr/local, and a torch environment (torch,
torchvision, numpy and the nvidia-* wheels among 150 other packages in the system python's
site-packages); against the interpreter's own start-up (`python3 -c pass`), per section, and for
the section lists the commands ask for. Then one SSH session through envcheck's transport
(node side: sshd, shell, the probe; controller side: paramiko).

    python3 bench/probe_cpu.py [--quick] [--runs N] [PROBE.py]   (root: it builds a simulated node)

CPU is user + system of the process and every command it runs (os.wait4's rusage), the median of
interleaved runs, so a busy machine inflates it far less than wall time. Target (issue 26): the
audit's probe <= 30 ms of CPU here. --quick: 3 runs, no SSH rows (what CI runs, tests/test_bench.py).
Pass an older probe file to compare.
"""
import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envcheck.ranks.preflight import PROBE_SECTIONS  # noqa: E402
from envcheck.audit.probe import BOOTSTRAP, probe_source, shipped_source  # noqa: E402
from tests.cluster import sim, standins  # noqa: E402

HZ = os.sysconf("SC_CLK_TCK")
TORCH_ENV = [("torch", "2.5.1+cu121"), ("torchvision", "0.20.1+cu121"), ("torchaudio", "2.5.1+cu121"),
             ("numpy", "1.26.4"), ("nvidia-cublas-cu12", "12.1.3.1"), ("nvidia-cuda-runtime-cu12", "12.1.105"),
             ("nvidia-cudnn-cu12", "9.1.0.70"), ("nvidia-nccl-cu12", "2.21.5"), ("nvidia-cufft-cu12", "11.0.2.54"),
             ("nvidia-curand-cu12", "10.3.2.106"), ("nvidia-cusolver-cu12", "11.4.5.107"),
             ("nvidia-cusparse-cu12", "12.1.0.106"), ("nvidia-nvtx-cu12", "12.1.105"),
             ("nvidia-nvjitlink-cu12", "12.9.86"), ("nvidia-cuda-nvrtc-cu12", "12.1.105")]
OTHER_PACKAGES = 150
# the sections each command asks the probe for (None: the audit's whole document)
COMMANDS = [("audit, doctor, explain --local (the document)", None),
            ("nccl-test, launch preflight", ",".join(PROBE_SECTIONS)),
            ("plan (this machine's GPU)", "gpus,pci_gpus"),
            ("doctor's master port", "port")]

# Runs on the node with its own python3: the probe N times per variant, interleaved, each run's
# CPU from os.wait4 (the probe and every command it started and reaped); then the split per
# section, from a copy of the probe whose sections are wrapped in timers.
NODE = r'''
import json, os, random, statistics, sys
probe, runs, variants = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])

def cpu(argv, stdin):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(r, 0)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execvp(argv[0], argv)
    os.close(r)
    with open(stdin, "rb") as f:
        os.write(w, f.read())
    os.close(w)
    ru = os.wait4(pid, 0)[2]
    return (ru.ru_utime + ru.ru_stime) * 1000

got = dict((name, []) for name, _, _ in variants)
for _ in range(runs):
    order = list(variants)
    random.shuffle(order)
    for name, argv, stdin in order:
        got[name].append(cpu(argv, stdin))
out = {"runs": dict((k, statistics.median(v)) for k, v in got.items())}

SPLIT = """
import os, sys, resource
def now():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime) * 1000
start = now()
# as the bootstrap does it (envcheck/audit/probe.py: BOOTSTRAP): the loader in front compiled,
# then the probe's code from the node's store (compiled and stored on a first run); counted
# here whether the store answered
data = open(sys.argv[1], "rb").read()
at = data.find(b"\\n# ---- probe ") + 1
compiles = []
if at:
    loader = {"__name__": "loader"}
    exec(compile(data[:at], "envcheck-probe", "exec"), loader)
    loader["compile"] = lambda *a: compiles.append(1) or compile(*a)
    import gc
    gc.disable()   # as the loader does before it runs the probe from the bootstrap
    code = loader["_envcheck_code"](data, at)
else:  # an unframed probe file (an older one): compiled whole, as the bootstrap would
    code = compile(data, "envcheck-probe", "exec")
    compiles.append(1)
compiled = now()
g = {"__name__": "probe"}
exec(code, g)
loaded = now()
split = {}
for s in list(g["SECTIONS"].values()):
    def timed(facts, fn=s.fn, name=s.name):
        t = now()
        try:
            return fn(facts)
        finally:
            split[name] = split.get(name, 0.0) + now() - t
    s.fn = timed
sys.stdout = open(os.devnull, "w")
g["main"]([])
end = now()
import json
sys.stderr.write(json.dumps({"start": start, "compile": compiled - start, "load": loaded - compiled, "sections": split,
                             "compiled": bool(compiles),
                             "rest": end - loaded - sum(split.values())}) + "\\n")
"""
splits = []
for _ in range(runs):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 2)
        os.execvp(sys.executable, [sys.executable, "-c", SPLIT, probe])
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    splits.append(json.loads(text.strip().splitlines()[-1]))
names = sorted(set(n for s in splits for n in s["sections"]))
out["split"] = dict((n, statistics.median(s["sections"].get(n, 0.0) for s in splits)) for n in names)
for key in ("start", "compile", "load", "rest"):
    out["split"]["(%s)" % key] = statistics.median(s[key] for s in splits)
out["split_compiled"] = sum(1 for s in splits if s["compiled"])
out["split_total"] = statistics.median(s["start"] + s["compile"] + s["load"] + sum(s["sections"].values()) + s["rest"]
                                       for s in splits)
print(json.dumps(out))
'''


def torch_env(h):
    """torch & co and OTHER_PACKAGES unrelated ones as pip leaves them (dist-info metadata) in the
    node's python3 site-packages under /usr/local (private to the host): one command on the node."""
    site = standins.plant_python_package(h, *TORCH_ENV[0], torch_cuda="12.1")
    pkgs = TORCH_ENV[1:] + [("pkg%03d" % i, "1.%d.0" % i) for i in range(OTHER_PACKAGES)]
    script = ("import os, sys\nsite = sys.argv[1]\nfor name, version in %r:\n"
              "    d = os.path.join(site, '%%s-%%s.dist-info' %% (name.replace('-', '_'), version))\n"
              "    os.makedirs(d, exist_ok=True)\n"
              "    open(os.path.join(d, 'METADATA'), 'w').write("
              "'Metadata-Version: 2.1\\nName: %%s\\nVersion: %%s\\n' %% (name, version))\n"
              "    os.makedirs(os.path.join(site, name.replace('-', '_')), exist_ok=True)\n" % (pkgs,))
    h.write_file("/tmp/bench-site.py", script)
    h.run_local("python3 /tmp/bench-site.py %s" % site)


def setup(h):
    standins.show_nvidia_userspace(h)
    standins.plant_toolkit(h, "12.1.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-12.1")
    torch_env(h)


def sshd_cpu(h):
    f = Path(f"/proc/{h.sshd.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[13]) + int(f[14])) / HZ


def ssh_session_cpu(c, probe, runs):
    """(node CPU ms, controller CPU ms) per connect + one command + close, through envcheck.hosts."""
    from envcheck.audit.probe import probe_command
    from envcheck.hostlist import parse_targets
    from envcheck.hosts import SSHOptions, make_remotes
    h = c[0]
    node0, ctrl0 = sshd_cpu(h), time.process_time()
    for _ in range(runs):
        rs = make_remotes(parse_targets([h.name]), SSHOptions(ssh_config=str(c.ssh_config)))
        r = rs[0].run(probe_command() if probe else "true", stdin=probe)
        if r.exit_code != 0:
            raise SystemExit(f"bench/probe_cpu: the command failed on {h.name}: {r.error or r.stderr}")
        rs[0].close()
    ctrl = time.process_time() - ctrl0
    time.sleep(0.5)  # let the last session be reaped
    return (sshd_cpu(h) - node0) * 1000 / runs, ctrl * 1000 / runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe", nargs="?", help="a probe script to measure instead of the shipped one")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 runs, no SSH rows (CI)")
    a = ap.parse_args()
    runs = 3 if a.quick else a.runs
    why = sim.available()
    if why:
        sys.exit(f"bench/probe_cpu: {why}")
    probe = Path(a.probe).read_text() if a.probe else probe_source()
    label = f"probe {Path(a.probe).name}" if a.probe else "each command's probe as it ships"
    c = sim.make_cluster(1, per_host_setup=setup)
    try:
        c.trust_all_host_keys()
        h = c[0]
        h.write_file("/tmp/bench-probe.py", probe)
        h.write_file("/tmp/bench-node.py", NODE)
        doc = json.loads(h.run_local("python3 - < /tmp/bench-probe.py").stdout)
        variants = [("python3 -c pass", ["python3", "-c", "pass"], "/dev/null")]
        for i, (name, only) in enumerate(COMMANDS):  # what each command ships: its sections' parts
            sections = only.split(",") if only else ()
            h.write_file(f"/tmp/bench-probe-{i}.py", probe if a.probe else shipped_source(sections))
            variants.append((name, ["python3", "-c", BOOTSTRAP] + (["--only", only] if only else []),
                             f"/tmp/bench-probe-{i}.py"))
        # the same document compiled on every run, as before the loader kept its code on the node
        variants.append(("the document, compiled each run (cache off)",
                         ["env", "ENVCHECK_PROBE_CACHE=off", "python3", "-c", BOOTSTRAP], "/tmp/bench-probe-0.py"))
        # and read by `python3 -`, as envcheck ran it before: the tokenizer's file reader, no loader
        variants.append(("the document, by `python3 -`", ["python3", "-"], "/tmp/bench-probe-0.py"))
        load = os.getloadavg()[0]
        p = h.run_local("python3 /tmp/bench-node.py /tmp/bench-probe-0.py %d %s"
                        % (runs, shlex.quote(json.dumps(variants))), timeout=600)
        got = json.loads(p.stdout.strip().splitlines()[-1])
        ssh = None if a.quick else (ssh_session_cpu(c, None, runs),
                                      ssh_session_cpu(c, probe if a.probe else shipped_source(), runs))
    finally:
        c.close()
    drv = doc["driver"]
    print(f"one simulated node: driver state {drv.get('state')} (userspace "
          f"{(drv.get('userspace') or {}).get('version')}), CUDA {doc['cuda'].get('version')} in use of "
          f"{len(doc['cuda']['toolkits'])} toolkit(s), torch {(doc.get('torch') or {}).get('version')}, "
          f"{len(doc['packages'])} packages reported; {os.cpu_count()} CPUs, load average {load:.1f}; "
          f"{label}; median of {runs} interleaved runs")
    base = got["runs"]["python3 -c pass"]
    print(f"{'CPU per run (the process and its commands)':<52} {'ms':>6} {'over start-up':>14}")
    for name, ms in got["runs"].items():
        over = "" if name == "python3 -c pass" else f"{ms - base:+.1f}"
        print(f"{name:<52} {ms:>6.1f} {over:>14}")
    print("split of the document's run (CPU ms, median; a command started ahead counts in the "
          "section that waits for it):")
    split = got["split"]
    print(f"  {'interpreter start-up, site':<50} {split.pop('(start)'):>6.1f}")
    print(f"  {'loader: compile it, load the stored probe code':<50} {split.pop('(compile)'):>6.1f}"
          f"   (compiled instead in {got['split_compiled']} of {runs} runs)")
    print(f"  {'imports + definitions':<50} {split.pop('(load)'):>6.1f}")
    for name, ms in sorted(split.items(), key=lambda kv: -kv[1]):
        if name != "(rest)":
            print(f"  section {name:<42} {ms:>6.1f}")
    print(f"  {'the rest (arguments, prestart, JSON out)':<50} {split['(rest)']:>6.1f}")
    print(f"  {'the run minus these (its exit; the noise of medians)':<50} "
          f"{got['runs'][COMMANDS[0][0]] - got['split_total']:>6.1f}")
    audit = got["runs"][COMMANDS[0][0]]
    print(f"target: the document's probe <= 30 ms CPU: {audit:.1f} ms, "
          f"{'met' if audit <= 30 else 'NOT met'} (start-up alone {base:.1f} ms)")
    if ssh:
        (true_node, true_ctrl), (probe_node, probe_ctrl) = ssh
        print(f"{'one SSH session (connect, command, close)':<52} {'node ms':>7} {'ctrl ms':>8}")
        print(f"{'  running `true`':<52} {true_node:>7.1f} {true_ctrl:>8.1f}")
        print(f"{'  running the probe (as envcheck audit does)':<52} {probe_node:>7.1f} {probe_ctrl:>8.1f}")


if __name__ == "__main__":
    main()
