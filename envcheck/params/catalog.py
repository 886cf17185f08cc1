"""Every input envcheck takes, declared once. A CLI option, a playbook field and a facts-file
field that mean the same thing use the same declaration (envcheck/cli/options.py builds the
options; envcheck/provision/playbooks.py checks playbook steps with these).

Timeouts are named for what they bound (docs/cli-conventions.md#timeouts):
  --connect-timeout     TCP connect + SSH handshake + auth of one host
  --command-timeout     one remote command: the probe, a fact or a check command
  --collective-timeout  one collective, or the ranks' rendezvous
  --rendezvous-timeout  every rank joining (nccl-test)
  --run-timeout         the whole run on every host (nccl-test, launch)
  --install-timeout     one installer or copy on one node (install-cuda, install-cudnn)
"""
from __future__ import annotations

from typing import Any

from envcheck.errors import UsageError, VersionError
from envcheck.params.core import WEEK, Param
from envcheck.versions import parse_torch

MAX_RANKS_PER_NODE = 1024
DTYPES = ("float32", "float", "float16", "half", "bfloat16", "float64", "double", "int32", "int")
# set by `envcheck launch` for every rank; --env may not name them
RESERVED_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK",
                "LOCAL_WORLD_SIZE", "GROUP_RANK")
_HOST = r"[A-Za-z0-9_.:\[\]%-]{1,253}"     # a host name, IPv4 or (bracketed) IPv6 address

# ---- hosts and SSH (every multi-host command) ------------------------------------------------
HOSTS = Param("hosts", "text", "Hosts as user@host:port (user and port optional) or hostlists as clush "
              "and Slurm write them (node[01-16], node[01-08/2], node[01-08]!node03, @group). None: "
              "--hosts-file, else $SLURM_JOB_NODELIST, else this machine.", metavar="HOSTS",
              max_len=4096, example="node[01-04]", flag="HOSTS")
HOSTS_FILE = Param("hosts_file", "local-file", "Read hosts from FILE, one per line, # comments.",
                   metavar="FILE", example="hosts.txt")
EXCLUDE = Param("exclude", "text", "Leave these hosts out (a hostlist, as clush -x; repeatable): "
                "node[01-08] -x node03.", metavar="HOSTS", max_len=4096, example="node03")
GROUPS_FILE = Param("groups_file", "local-file", "Where @group names are defined, one `gpu: "
                    "node[01-16]` per line (default: /etc/clustershell/groups, ClusterShell's).",
                    metavar="FILE", example="groups.txt")
SSH_CONFIG = Param("ssh_config", "local-file", "ssh_config to use (HostName, User, Port, IdentityFile, "
                   "UserKnownHostsFile) instead of ~/.ssh/config.", metavar="FILE",
                   example="~/.ssh/cluster.conf")
USER = Param("user", "text", "Log in as this user.", metavar="NAME", max_len=64,
             pattern=r"[A-Za-z0-9._@$\\-]{1,64}", example="root",
             shape="a login name (letters, digits and ._@$-\\)")
PORT = Param("port", "int", "SSH port.", metavar="PORT", lo=1, hi=65535, example="22")
IDENTITY = Param("identity", "local-file", "Private key file (only this key is offered).",
                 metavar="KEY", example="~/.ssh/id_ed25519")
FORKS = Param("forks", "int", "Hosts worked on at once.", metavar="N", lo=1, hi=1024, example="32")
CONNECT_TIMEOUT = Param("connect_timeout", "seconds", "Give up on a host whose TCP connect + SSH "
                        "handshake + auth takes longer.", metavar="SECONDS", lo=0.1, hi=3600,
                        example="10")
COMMAND_TIMEOUT = Param("command_timeout", "seconds", "Give up on one remote command (the probe, a "
                        "fact or check command) after this long; the node kills it too. Default "
                        "120, for a probe with --deep 240.", metavar="SECONDS", lo=0.1, hi=WEEK,
                        example="120")
NODE_PYTHON = Param("node_python", "text", "Python interpreter on the nodes (e.g. a venv or conda env "
                    "with torch). Default: python3, else python; on this machine envcheck's own "
                    "interpreter when torch is installed there.", metavar="PATH", max_len=1024,
                    example="/opt/venv/bin/python")

# ---- the ranks (nccl-test, doctor, launch) -----------------------------------------------------
BACKEND = Param("backend", "choice", "nccl, gloo, or auto (nccl when every node has a GPU).",
                metavar="NAME", choices=("auto", "nccl", "gloo"))
NPROC_PER_NODE = Param("nproc_per_node", "int", "Ranks per host (default: its GPU count; without "
                       "GPUs 2 for nccl-test and doctor, 1 for launch).", metavar="N", lo=1,
                       hi=MAX_RANKS_PER_NODE, example="8")
MASTER_ADDR = Param("master_addr", "text", "MASTER_ADDR (default: the first host's address).",
                    metavar="HOST", pattern=_HOST, max_len=253, example="10.0.0.1",
                    shape="a host name or an IP address")
MASTER_PORT = Param("master_port", "int", "MASTER_PORT (default: a free one).", metavar="PORT",
                    lo=1, hi=65535, example="29500")
IFNAME = Param("ifname", "text", "Interface for NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME (checked on "
               "every host).", metavar="IFACE", pattern=r"[A-Za-z0-9_.:@-]{1,15}", max_len=15,
               example="eth0", shape="an interface name (up to 15 letters, digits and _.:@-)")
COLLECTIVE_TIMEOUT = Param("collective_timeout", "seconds", "Seconds one collective, or the ranks' "
                           "rendezvous, may take before the run is stopped (exit 3).",
                           metavar="SECONDS", lo=0.1, hi=WEEK, example="60")
RENDEZVOUS_TIMEOUT = Param("rendezvous_timeout", "seconds", "Seconds for every rank to join.",
                           metavar="SECONDS", lo=0.1, hi=WEEK, example="60")
RUN_TIMEOUT = Param("run_timeout", "seconds", "Stop the whole run on every host after this long "
                    "(exit 3, naming the rank that hung).", metavar="SECONDS", lo=1, hi=WEEK,
                    example="3600")
MIN_BYTES = Param("min_bytes", "size", "Smallest message (8, 64K, 1M…).", metavar="SIZE", lo=1, example="8")
MAX_BYTES = Param("max_bytes", "size", "Largest message (the one size doctor runs).", metavar="SIZE",
                  lo=1, example="256M")
FACTOR = Param("factor", "int", "Size multiplier between steps.", metavar="N", lo=2, hi=1024, example="2")
DTYPE = Param("dtype", "choice", "float32, float16, bfloat16, float64, int32.", metavar="TYPE",
              choices=DTYPES)
WARMUP = Param("warmup", "int", "Untimed all-reduces per size.", metavar="N", lo=0, hi=1000, example="5")
ITERS = Param("iters", "int", "Timed all-reduces per size.", metavar="N", lo=1, hi=100000, example="20")
MIN_BUSBW = Param("min_busbw", "float", "Below this bus bandwidth (GB/s) at the largest size the "
                  "all-reduce fails.", metavar="GB/S", lo=0, hi=100000, example="10")
GPUS_PER_NODE = Param("gpus_per_node", "int", "Every node must have N GPUs, on the PCI bus and in the "
                      "driver's list; fewer is an error.", metavar="N", lo=1, hi=MAX_RANKS_PER_NODE,
                      example="8")

# ---- launch ------------------------------------------------------------------------------------
GRACE = Param("grace", "seconds", "When ranks are stopped: seconds between SIGTERM and SIGKILL.",
              metavar="SECONDS", lo=0, hi=3600, example="5")
CHDIR = Param("chdir", "text", "Working directory of the ranks on every host (default: the current "
              "directory here).", metavar="DIR", max_len=4096, example="/home/me/project")


def _not_reserved(pair: Any, where: str) -> Any:
    name = pair.split("=", 1)[0]
    if name in RESERVED_ENV:
        raise UsageError(f"{where} {name} is set by envcheck launch for every rank",
                         "use --master-addr/--master-port/--nproc-per-node instead")
    return pair


ENV_PAIR = Param("env", "text", "Set this variable for every rank (repeatable).", metavar="NAME=VALUE",
                 pattern=r"[A-Za-z_][A-Za-z0-9_]{0,127}=[^\x00-\x1f\x7f]*", max_len=32768,
                 example="NCCL_DEBUG=INFO", check=_not_reserved,
                 shape="NAME=VALUE, NAME of letters, digits and _ not starting with a digit")
SYNC = Param("sync", "local-path", "Copy this file or directory to the same absolute path on every "
             "other host first (repeatable).", metavar="FILE_OR_DIR", example="train.py")
LOG_DIR = Param("log_dir", "out-dir", "Keep every rank's output in DIR/RUN_ID/rankN.HOST.log.",
                metavar="DIR", example="logs")

# ---- files envcheck reads or writes here ------------------------------------------------------
MATRIX = Param("matrix", "local-file", "Use this compat matrix instead of the packaged "
               "compat_matrix.yaml.", metavar="FILE", example="my-matrix.yaml")
FACTS_FILE = Param("facts_file", "local-file", "A saved facts document (envcheck audit --json or "
                   "--save).", metavar="FACTS.json", example="node01.json", flag="FACTS.json")
JUNIT = Param("junit", "out-file", "Write JUnit XML: a testcase per check per host.", metavar="FILE",
              example="doctor.xml")
PROMETHEUS = Param("prometheus", "out-file", "Write node_exporter textfile metrics (FILE.prom).",
                   metavar="FILE", example="/var/lib/node_exporter/doctor.prom")
BASELINE = Param("baseline", "local-file", "A saved `doctor --json` of a good run: flag regressions.",
                 metavar="FILE", example="good.json")
PLOT = Param("plot", "out-file", "Write busbw vs size to this image (needs matplotlib).",
             metavar="FILE", example="busbw.png")
SAVE = Param("save", "out-dir", "Write each audited host's facts to DIR/HOST.json, for `envcheck "
             "check FILE`.", metavar="DIR", example="facts")
FILES = Param("files", "local-dir", "Where the playbook's runfile and cuDNN archive are (default: "
              "next to the playbook).", metavar="DIR", example="~/downloads")

# ---- versions and stacks ----------------------------------------------------------------------
VERSION = Param("version", "version", "A version of digits and dots.", metavar="X.Y", example="12.4")


def _v(key: str, help: str, example: str) -> Param:
    return Param(key, "version", help, metavar="V", example=example)


# one component's version, as `check` takes it and a playbook's stack names it
DRIVER_V = _v("driver", "NVIDIA driver, e.g. 410.48", "410.48")
CUDA_V = _v("cuda", "CUDA toolkit (nvcc) in use, e.g. 10.0 or 10.0.130", "10.0")
CUDNN_V = _v("cudnn", "cuDNN the torch process loads (system or pip), e.g. 7.6.5; also judged "
             "against --cuda", "7.6.5")
TORCHVISION_V = _v("torchvision", "torchvision, e.g. 0.3.0", "0.3.0")
TORCHAUDIO_V = _v("torchaudio", "torchaudio, e.g. 0.2.0", "0.2.0")
GCC_V = _v("gcc", "host gcc, e.g. 7.5.0", "7.5.0")
NUMPY_V = _v("numpy", "numpy in torch's environment, e.g. 2.0.1 (torch < 2.3 fails under numpy 2)",
             "2.0.1")
CUDA_COMPAT = Param("cuda_compat", "text", "NVIDIA's forward-compatibility libraries the process loads: "
                    "none, or the cuda-compat-X-Y package (a data-center GPU on an older driver branch "
                    "runs a newer CUDA only with them)", metavar="none|X.Y", max_len=32,
                    pattern=r"(?i:none|no|absent)|[0-9]{1,3}\.[0-9]{1,5}(?:\.[0-9]{1,5})?", example="12.4",
                    shape="none, a CUDA release X.Y or a driver version")
CUDA_VERSION = Param("version", "version", "CUDA version: 10.0, 10.0.130, 12.4.1 … (X.Y = newest "
                     "update).", metavar="VERSION", example="12.4", flag="VERSION")
GPU = Param("gpu", "text", "GPU model or compute capability, e.g. V100, sm_70, 7.0.",
            metavar="NAME|sm_XY|X.Y", max_len=100, example="A100")
def _torch(value: Any, where: str) -> Any:
    try:
        parse_torch(value)
    except VersionError as e:
        raise UsageError(f"{where}: {e.message}", e.fix) from None
    return value


TORCH_VERSION = Param("torch", "text", "torch, e.g. 1.1.0+cu100; a plain 1.1.0 means the PyPI build.",
                      metavar="V[+cuXYZ]", max_len=64, pattern=r"[0-9][0-9A-Za-z.+]{0,63}",
                      example="2.1.0+cu118", shape="a torch version (X.Y.Z or X.Y.Z+cuXYZ)",
                      check=_torch)
PYTHON_VERSION = Param("python", "text", "Python, e.g. 3.7.", metavar="X.Y",
                       pattern=r"[0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?", max_len=11, example="3.11",
                       shape="a Python version X.Y")

# ---- install and env -------------------------------------------------------------------------
_SAFE_DIR = r"/[A-Za-z0-9._+/-]{0,199}"
TMPDIR = Param("tmpdir", "node-path", "Node directory (absolute) in which each run makes its own "
               "private staging directory (needs room); it must exist.", metavar="DIR",
               pattern=_SAFE_DIR, max_len=200, example="/var/tmp",
               shape="an absolute directory of letters, digits and ._+-/")
PREFIX = Param("prefix", "node-path", "Install into PREFIX/cuda-X.Y, symlink PREFIX/cuda.",
               metavar="DIR", pattern=_SAFE_DIR, max_len=200, example="/usr/local",
               shape="an absolute directory of letters, digits and ._+-/")
CUDA_HOME = Param("cuda_home", "node-path", "Toolkit directory on the nodes.", metavar="PATH",
                  max_len=1024, example="/usr/local/cuda-12.4")
RC_FILE = Param("file", "text", "File to put the block in (default: the login user's ~/.bashrc); a "
                "shell start-up file envcheck knows, unless --file-anything.", metavar="FILE",
                max_len=1024, example="~/.zshenv")
URL = Param("url", "url", "The nodes download the runfile from this URL.", metavar="URL",
            max_len=2048, example="https://developer.download.nvidia.com/compute/cuda/12.4.1/"
            "local_installers/cuda_12.4.1_550.54.15_linux.run")
MIRROR = Param("mirror", "url", "The nodes download BASE/<runfile name from the matrix>.",
               metavar="BASE", max_len=2048, example="http://mirror.local/cuda")
INDEX_URL = Param("index_url", "url", "A pip index.", metavar="URL", max_len=2048,
                  example="https://download.pytorch.org/whl/cu121")
SHA256 = Param("sha256", "text", "Expected sha256 of the runfile (overrides the matrix).",
               metavar="HEX", pattern=r"[0-9a-fA-F]{64}", max_len=64, example="<64 hex digits>",
               shape="64 hex digits (sha256sum FILE)")
RUNFILE = Param("runfile", "local-file", "Local runfile to upload (into a private directory of this "
                "run, removed afterwards).", metavar="PATH", example="cuda_12.4.1_550.54.15_linux.run")
INSTALL_TIMEOUT = Param("install_timeout", "seconds", "Seconds the download, the installer or the "
                        "copy may take per node.", metavar="SECONDS", lo=1, hi=WEEK, example="3600")

# ---- the rest ---------------------------------------------------------------------------------
DCGM = Param("dcgm", "int", "Also run NVIDIA DCGM's diagnostic (dcgmi diag -r LEVEL) on every node; "
             "a node without dcgmi is reported as skipped. Levels 2+ load the GPUs for minutes.",
             metavar="LEVEL", lo=1, hi=4, example="1")
LAUNCHER = Param("launcher", "choice", "Reach the nodes over ssh, or with srun inside a Slurm allocation "
                 "(hosts: the job's nodes).", metavar="NAME", choices=("ssh", "srun"))
STEP_SIZE = Param("step_size", "int", "With --launcher srun: at most N nodes per job step.", metavar="N",
                  lo=1, hi=65536, example="64")
LIMIT = Param("limit", "int", "Stacks shown (newest first); --json lists all.", metavar="N", lo=1,
              hi=100000, example="10")
PLAYBOOK = Param("playbook", "text", "A playbook file, or the name of a shipped one "
                 "(cuda10.0-cudnn7.6-torch1.1).", metavar="PLAYBOOK", max_len=4096,
                 example="cuda12.4-cudnn9.1-torch2.5", flag="PLAYBOOK")
ERROR_TEXT = Param("text", "text", "The error message, traceback or whole log; '-' (or nothing) reads "
                   "stdin.", metavar="ERROR_TEXT", max_len=16 << 20, controls=True, flag="ERROR_TEXT")
ARCHIVE = Param("archive", "text", "cuDNN tarball as downloaded (.tgz or -archive.tar.xz).",
                metavar="ARCHIVE", max_len=4096, flag="ARCHIVE",
                example="cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz")
MATRIX_KIND = Param("kind", "choice", "cuda, cudnn, torch or gpu.", metavar="KIND",
                    choices=("cuda", "cudnn", "torch", "gpu"), flag="KIND")
MATRIX_WHAT = Param("what", "text", "e.g. 10.0, 7.6.5, 1.1.0, \"Tesla V100\" or sm_70.",
                    metavar="VERSION|NAME", max_len=100, example="12.4", flag="VERSION|NAME")

# ---- slurm-check (the node's own hook) --------------------------------------------------------
HOOK_MODE = Param("mode", "choice", "healthcheck (HealthCheckProgram), prolog or epilog (default: from "
                  "SLURM_SCRIPT_CONTEXT, else healthcheck).", metavar="MODE",
                  choices=("healthcheck", "prolog", "epilog"))
HOOK_WRAPPER = Param("wrapper", "node-path", "With --print-config: where the wrapper goes on the nodes.",
                     metavar="PATH", max_len=1024, example="/usr/local/sbin/envcheck-slurm-hook")
HOOK_INTERVAL = Param("interval", "int", "With --print-config: the HealthCheckInterval printed.",
                      metavar="SECONDS", lo=1, hi=86400, example="300")
SLURM_NODE = Param("node", "text", "The Slurm node name (default: $SLURMD_NODENAME, else the short "
                   "hostname).", metavar="NAME", pattern=r"[A-Za-z0-9_.-]{1,253}", max_len=253,
                   example="node01", shape="a node name (letters, digits and _.-)")
HOOK_DEADLINE = Param("deadline", "seconds", "Finish within this long, every call included (Slurm "
                      "kills the hook at 60 s).", metavar="SECONDS", lo=5, hi=55, example="40")
XID_SINCE = Param("xid_since", "text", "Count Xid errors logged within this window only (24h, 90m, "
                  "3600), so a stale Xid does not keep a node drained until it reboots.",
                  metavar="DURATION", pattern=r"[0-9]{1,9}[smhd]?", max_len=10, example="24h",
                  shape="a duration (3600, 90m, 24h, 7d)")
STATE_DIR = Param("state_dir", "node-path", "Where the node records a Prolog/Epilog failure envcheck "
                  "caused.", metavar="DIR", max_len=1024, example="/var/lib/envcheck")
SCONTROL = Param("scontrol", "text", "The scontrol to call (the wrapper names it by absolute path).",
                 metavar="PATH", max_len=1024, example="/usr/bin/scontrol")
SCONTROL_TIMEOUT = Param("scontrol_timeout", "seconds", "Give up on one scontrol call after this long.",
                         metavar="SECONDS", lo=0.1, hi=600, example="5")
