"""Well-known error texts (as users paste them) -> cause, fix and the envcheck checks that
diagnose them. Data only: envcheck/explain/match.py matches and renders it.

Each entry:
  id          stable name (used in --json and tests)
  pattern     a regex searched in the pasted text (case-insensitive, multi-line); named groups
              become values the cause/fix templates can use ({major}, {detected} …)
  derive      optional function(groups) -> more template values (e.g. a CUDA major from a
              libcudart soname); returning None for a key leaves it out
  title/cause/fix   text; {name} placeholders filled from groups + derive
  components  finding components (envcheck/model.py) of the audit findings that diagnose it
  checks      envcheck commands that tell which host and what to change
  supersedes  ids of more generic entries to drop when this one matches too
  defaults    template values for optional groups that did not match

The texts come from real reports (issue titles and tracebacks quoted in tests/explain/test_explain.py).
"""
from __future__ import annotations

from typing import Dict, Optional

from envcheck.versions import version_to_cu_tag


def _cudart(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # libcudart.so.10.0 names the exact runtime; from 11 the soname is the major only
    # (libcudart.so.11.0 is shared by all 11.x, libcudart.so.12 by all 12.x)
    ver = g.get("ver") or ""
    parts = ver.split(".")
    if parts[0].isdigit() and int(parts[0]) >= 11:
        return {"cuda": f"{parts[0]}.x", "install_ver": f"{parts[0]}.Y"}
    return {"cuda": ver, "install_ver": ver}


def _tag(v: str) -> str:
    try:
        return version_to_cu_tag(v)
    except Exception:  # noqa: BLE001 - a template value, never fatal
        return "cuXYZ"


def _mismatch(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    return {"torch_tag": _tag(g["torch_cuda"]), "detected_tag": _tag(g["detected"])}


def _nccl_version(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    v = g.get("nccl")
    return {"nccl_note": f" (NCCL {v})" if v else ""}


SIGNATURES = [
    dict(
        id="driver-too-old",
        pattern=r"CUDA driver version is insufficient for CUDA runtime version",
        title="NVIDIA driver older than the CUDA runtime needs",
        cause=("The program's CUDA runtime (for pip torch: the CUDA it was built for, e.g. +cu121) "
               "needs a newer kernel driver than the node has. Each CUDA release has a minimum "
               "driver; minor-version compatibility only helps within a major (11.x >= 450.80.02, "
               "12.x >= 525.60.13, 13.x >= 580)."),
        fix=("Either upgrade the NVIDIA driver on that node to at least the minimum for torch's "
             "CUDA, or install the torch wheel built for an older CUDA that this driver supports "
             "(`envcheck plan --gpu GPU --driver V` lists them)."),
        components=("driver", "torch"),
        checks=("envcheck audit HOSTS", "envcheck check --driver V --torch V+cuXYZ"),
    ),
    dict(
        id="arch-not-compatible",
        pattern=(r"with CUDA capability (?P<sm>sm_\d+) is not compatible with the current PyTorch "
                 r"installation\.?(?:\s*The current PyTorch install supports CUDA capabilities "
                 r"(?P<archs>(?:sm_\d+ ?)+))?"),
        title="GPU generation not in torch's compiled arch list",
        cause=("This torch build has no kernels for {sm} (it was compiled for: {archs}). Every "
               "CUDA op will fail with 'no kernel image is available for execution on the device'."),
        fix=("Install a torch built for a CUDA that supports {sm} (newer GPUs need newer CUDA "
             "variants: sm_80 needs cu110+, sm_86 cu111+, sm_90 cu118+, sm_120 cu128+); "
             "`envcheck plan --gpu {sm}` lists the stacks."),
        components=("gpu", "torch"),
        checks=("envcheck audit --deep HOSTS", "envcheck check --gpu {sm} --torch V+cuXYZ"),
        defaults={"archs": "(not in the text)"},
    ),
    dict(
        id="no-kernel-image",
        pattern=r"no kernel image is available for execution on the device",
        title="No GPU kernel for this GPU's architecture",
        cause=("The binary (torch, torchvision or a custom extension) carries no cubin for this "
               "GPU's compute capability and no PTX the driver could JIT-compile. Typical: an "
               "old torch (cu90/cu100/cu102) on an Ampere or newer GPU, or an extension built "
               "with TORCH_CUDA_ARCH_LIST that leaves this GPU out."),
        fix=("Install a torch/torchvision built for a CUDA that covers this GPU's sm (see "
             "`envcheck plan --gpu GPU`), or rebuild the extension with the GPU's arch in "
             "TORCH_CUDA_ARCH_LIST."),
        components=("gpu", "torch"),
        checks=("envcheck audit --deep HOSTS", "envcheck check --gpu GPU --torch V+cuXYZ"),
    ),
    dict(
        id="cudnn-lib-missing",
        pattern=r"libcudnn(?P<part>_[a-z_]+)?\.so\.(?P<major>\d+)[^:\n]*: cannot open shared object file",
        title="cuDNN {major} library not found by the dynamic loader",
        cause=("The program was built against cuDNN {major} (it asks for libcudnn.so.{major}) but "
               "no directory on LD_LIBRARY_PATH or in the ld.so cache holds it: cuDNN {major} is "
               "not installed, is installed for another toolkit, or LD_LIBRARY_PATH is not set in "
               "the (non-interactive) shell that started the job."),
        fix=("Install cuDNN {major} for this CUDA (`envcheck install-cudnn ARCHIVE --cuda X.Y`) and "
             "make it visible (`envcheck env --cuda-home /usr/local/cuda-X.Y`, which also covers "
             "non-interactive SSH shells)."),
        components=("cudnn", "env"),
        checks=("envcheck audit HOSTS", "envcheck check --cuda V --cudnn {major}"),
    ),
    dict(
        id="cudart-lib-missing",
        pattern=r"libcudart\.so\.(?P<ver>\d+(?:\.\d+)?)[^:\n]*: cannot open shared object file",
        derive=_cudart,
        title="CUDA {cuda} runtime library not found",
        cause=("The program was linked against the CUDA {cuda} runtime (libcudart.so.{ver}) and the "
               "loader cannot find it: CUDA {cuda} is not installed, or its lib64 is not on "
               "LD_LIBRARY_PATH / in ld.so.conf.d for the shell that started the job (exports "
               "after .bashrc's interactive guard never reach ssh/mpirun/torchrun)."),
        fix=("Install the CUDA {cuda} toolkit (`envcheck install-cuda {install_ver}`) or the build "
             "of the program made for the CUDA you have, then `envcheck env --cuda-home "
             "/usr/local/cuda-X.Y`."),
        components=("cuda", "env"),
        checks=("envcheck audit HOSTS",),
    ),
    dict(
        id="gcc-too-new",
        pattern=r"unsupported GNU version! gcc versions later than (?P<max_gcc>\d+) are not supported",
        title="Host gcc newer than this CUDA toolkit's nvcc accepts",
        cause=("nvcc's include/crt/host_config.h refuses gcc majors above {max_gcc} for this toolkit "
               "(each CUDA release has a newest supported host gcc)."),
        fix=("Install gcc-{max_gcc} and point nvcc at it (CC=gcc-{max_gcc} CXX=g++-{max_gcc}, or "
             "nvcc -ccbin g++-{max_gcc}; CUDAHOSTCXX for CMake), or use a newer CUDA toolkit that "
             "accepts your gcc."),
        components=("gcc", "cuda"),
        checks=("envcheck audit HOSTS", "envcheck check --cuda V --gcc V"),
    ),
    dict(
        id="nccl-remote-error",
        pattern=(r"remote process exited or there was a network error(?:, NCCL version "
                 r"(?P<nccl>\d+\.\d+\.\d+))?"),
        derive=_nccl_version,
        title="NCCL lost a peer{nccl_note}",
        cause=("Another rank died (crash, OOM kill, node reboot) or the network between two nodes "
               "failed (IB/RoCE link errors, a firewall, a NIC that is down). The rank that prints "
               "this is usually not the broken one."),
        fix=("Find the first rank that failed (its own log), then test the links: `envcheck "
             "nccl-test HOSTS` isolates the node; `envcheck doctor HOSTS` names it."),
        components=("nccl", "host"),
        checks=("envcheck doctor HOSTS", "envcheck nccl-test HOSTS"),
        supersedes=("rendezvous-refused",),
    ),
    dict(
        id="nccl-system-error",
        pattern=r"unhandled system error(?:[^\n]*NCCL version (?P<nccl>\d+\.\d+\.\d+))?",
        derive=_nccl_version,
        title="NCCL system call failed{nccl_note}",
        cause=("A socket, shared-memory or device call inside NCCL failed. Multi-node, the usual "
               "cause is NCCL picking the wrong interface (lo, docker0, a NIC the other nodes "
               "cannot reach) or nodes that cannot reach each other; single-node, a too-small "
               "/dev/shm (containers) or mismatched NCCL versions across ranks."),
        fix=("Set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface whose subnet holds "
             "the other nodes, rerun with NCCL_DEBUG=INFO; `envcheck nccl-test HOSTS` checks "
             "reachability and suggests the interface."),
        components=("nccl", "env"),
        checks=("envcheck nccl-test HOSTS", "envcheck audit HOSTS"),
    ),
    dict(
        id="nccl-no-socket-interface",
        pattern=r"Bootstrap : no socket interface found|no socket interface found",
        title="NCCL found no usable network interface",
        cause=("NCCL_SOCKET_IFNAME names an interface that does not exist (or has no address) on "
               "this node."),
        fix="Set NCCL_SOCKET_IFNAME to an interface present on every node (`ip -br addr`).",
        components=("nccl", "env"),
        checks=("envcheck nccl-test --ifname IFACE HOSTS",),
    ),
    dict(
        id="duplicate-gpu",
        pattern=r"Duplicate GPU detected\s*:\s*rank (?P<rank_a>\d+) and rank (?P<rank_b>\d+) both on CUDA device (?P<bus>\w+)",
        title="Two ranks on one GPU (ranks {rank_a} and {rank_b}, device {bus})",
        cause=("NCCL needs one GPU per rank. Every process used the default device (cuda:0): the "
               "script never calls torch.cuda.set_device(LOCAL_RANK), or CUDA_VISIBLE_DEVICES gives "
               "each process the same single GPU, or more ranks were started than the node has GPUs."),
        fix=("Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_process_group, "
             "and start at most one rank per GPU (--nproc-per-node = the GPU count)."),
        components=("nccl", "gpu"),
        checks=("envcheck nccl-test HOSTS", "envcheck audit HOSTS"),
    ),
    dict(
        id="invalid-device-ordinal",
        pattern=r"invalid device ordinal",
        title="A rank asked for a GPU the node does not have",
        cause=("torch.cuda.set_device / .to('cuda:N') with N >= the visible GPU count: more ranks per "
               "node than GPUs, a hard-coded device index, or CUDA_VISIBLE_DEVICES hiding GPUs."),
        fix=("Start --nproc-per-node ranks equal to the GPUs each node shows (nvidia-smi -L) and use "
             "LOCAL_RANK as the device; check CUDA_VISIBLE_DEVICES."),
        components=("gpu", "env"),
        checks=("envcheck audit HOSTS", "envcheck nccl-test HOSTS"),
    ),
    dict(
        id="watchdog-timeout",
        pattern=(r"Watchdog caught collective operation timeout: WorkNCCL\([^\n]*?OpType=(?P<op>\w+)"
                 r"[^\n]*? ran for (?P<ms>\d+) milliseconds"),
        title="A collective ({op}) never completed",
        cause=("One rank did not join the {op} within the timeout ({ms} ms): it crashed, hangs, is "
               "much slower, or the ranks run different code paths."),
        fix=("Look for the rank that is missing or stuck; `envcheck doctor HOSTS` runs an all-reduce "
             "with timeouts and names the host that does not take part."),
        components=("nccl", "host"),
        checks=("envcheck doctor HOSTS", "envcheck nccl-test HOSTS"),
    ),
    dict(
        id="address-in-use",
        pattern=(r"Address already in use|errno: 98|EADDRINUSE"),
        title="MASTER_PORT already taken on the master node",
        cause=("The rendezvous TCPStore cannot listen on MASTER_ADDR:MASTER_PORT because another "
               "process (an earlier run that did not exit, a second job) holds the port."),
        fix=("Pick a free MASTER_PORT (or stop the stray process: `ss -ltnp | grep PORT`). "
             "`envcheck nccl-test` picks a free port itself."),
        components=("host",),
        checks=("envcheck nccl-test HOSTS",),
    ),
    dict(
        id="rendezvous-refused",
        pattern=(r"(?:Connection refused|Connection reset by peer|connect\(\) timed out|"
                 r"failed to connect/validate to host|RendezvousConnectionError|DistNetworkError)"),
        title="A worker could not reach the rendezvous (MASTER_ADDR:MASTER_PORT)",
        cause=("Nothing listens there yet (rank 0 not started or already gone), a firewall blocks "
               "the port, MASTER_ADDR resolves to an address other nodes cannot reach (127.0.1.1 "
               "from /etc/hosts is the classic one), or the store dropped the connection."),
        fix=("Start rank 0 first, use an address every node can reach, open the port; `envcheck "
             "nccl-test HOSTS` checks every node reaches MASTER_ADDR:PORT before starting workers."),
        components=("host", "env"),
        checks=("envcheck nccl-test HOSTS", "envcheck doctor HOSTS"),
    ),
    dict(
        id="pg-init-timeout",
        pattern=(r"Timed out initializing process group in store based barrier on rank:? ?(?P<rank>\d+)"
                 r"(?:[^\n]*world_size=(?P<world>\d+), worker_count=(?P<count>\d+))?"),
        title="Not every rank joined the process group",
        cause=("Rank {rank} waited for all ranks, but only some arrived (world_size={world}, "
               "worker_count={count}). A rank never started, crashed, or WORLD_SIZE/RANK differ "
               "between nodes (worker_count above world_size: two jobs share one MASTER_PORT)."),
        fix=("Check that every node starts the same WORLD_SIZE with distinct RANKs and a private "
             "MASTER_PORT; `envcheck doctor HOSTS` names the host that does not join."),
        components=("host",),
        checks=("envcheck doctor HOSTS", "envcheck nccl-test HOSTS"),
        defaults={"world": "?", "count": "?"},
    ),
    dict(
        id="toolkit-torch-mismatch",
        pattern=(r"The detected CUDA version \((?P<detected>[\d.]+)\) mismatches the version that "
                 r"was used to compile\s+PyTorch \((?P<torch_cuda>[\d.]+)\)"),
        derive=_mismatch,
        title="nvcc/CUDA_HOME toolkit {detected} differs from torch's CUDA {torch_cuda}",
        cause=("torch.utils.cpp_extension builds extensions with the toolkit under CUDA_HOME "
               "(here {detected}) and refuses one of another major than torch was built with "
               "({torch_cuda})."),
        fix=("Point CUDA_HOME/PATH at a CUDA {torch_cuda} toolkit (`envcheck install-cuda "
             "{torch_cuda}` then `envcheck env --cuda-home /usr/local/cuda-{torch_cuda}`), or "
             "install the torch built for {detected} (pip index "
             "https://download.pytorch.org/whl/{detected_tag}; builds exist only for some CUDA versions)."),
        components=("cuda", "torch", "env"),
        checks=("envcheck audit HOSTS", "envcheck check --cuda {detected} --torch V+{torch_tag}"),
    ),
    dict(
        id="cuda-oom",
        pattern=(r"CUDA out of memory\.?(?: Tried to allocate (?P<want>[\d.]+ [KMG]iB))?"
                 r"|CUDA error: out of memory|OutOfMemoryError"),
        title="GPU memory exhausted",
        cause=("The process asked for more GPU memory than is free: batch too large, or another "
               "process (a stray from an earlier run, a second job on the same GPU) holds memory. "
               "Two ranks pinned to one GPU (LOCAL_RANK not used) also look like this."),
        fix=("Check `nvidia-smi` for other processes on that GPU and kill strays; make each rank "
             "call torch.cuda.set_device(LOCAL_RANK); reduce the batch size."),
        components=("gpu",),
        checks=("envcheck doctor HOSTS",),
    ),
    dict(
        id="nvidia-smi-no-driver",
        pattern=r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        title="The NVIDIA kernel driver is not loaded",
        cause=("nvidia-smi is installed but the kernel module is not running: the driver was never "
               "installed for this kernel, a kernel update left it unbuilt (DKMS), or Secure Boot "
               "refused the unsigned module."),
        fix=("Reinstall/rebuild the driver for the running kernel (distro packages or NVIDIA's "
             ".run with DKMS), reboot; `lsmod | grep nvidia` must list it."),
        components=("driver",),
        checks=("envcheck audit HOSTS",),
    ),
    dict(
        id="no-driver-found",
        pattern=r"Found no NVIDIA driver on your system|no CUDA-capable device is detected",
        title="torch sees no NVIDIA driver / GPU",
        cause=("No usable NVIDIA driver (or no GPU visible: CUDA_VISIBLE_DEVICES empty, a "
               "container started without --gpus)."),
        fix="Install the NVIDIA driver and check `nvidia-smi`; in containers pass the GPUs in.",
        components=("driver", "gpu"),
        checks=("envcheck audit HOSTS",),
    ),
    dict(
        id="cudnn-not-initialized",
        pattern=r"CUDNN_STATUS_NOT_INITIALIZED",
        title="cuDNN failed to initialise",
        cause=("cuDNN could not create its handle: usually a cuDNN built for another CUDA major "
               "shadowing torch's own (a system libcudnn on LD_LIBRARY_PATH), a driver too old for "
               "it, or no GPU memory left for the handle."),
        fix=("Remove the system cuDNN from LD_LIBRARY_PATH when using pip torch (it bundles its "
             "own), or install the cuDNN build for this CUDA; check GPU memory."),
        components=("cudnn", "env", "driver"),
        checks=("envcheck audit --deep HOSTS",),
    ),
    dict(
        id="torchvision-undefined-symbol",
        pattern=r"torchvision/_C[^:\n]*\.so: undefined symbol: (?P<symbol>\S+)",
        title="torchvision was built for another torch",
        cause=("torchvision's compiled ops reference a torch symbol ({symbol}) that this torch does "
               "not export: torch and torchvision come from different releases."),
        fix=("Install the torchvision that pairs with your torch (e.g. torch 1.1.0 -> "
             "torchvision 0.3.0) from the same index/CUDA variant."),
        components=("torchvision", "torch"),
        checks=("envcheck audit HOSTS", "envcheck check --torch V --torchvision V"),
        supersedes=("undefined-symbol",),
    ),
    dict(
        id="undefined-symbol",
        pattern=r"\.so: undefined symbol: (?P<symbol>\S+)",
        title="A compiled extension was built against another torch",
        cause=("An extension (.so) references a symbol ({symbol}) the installed torch does not "
               "export: it was compiled against another torch version or ABI."),
        fix="Rebuild the extension against the installed torch, or install its matching release.",
        components=("torch",),
        checks=("envcheck audit HOSTS",),
    ),
    dict(
        id="torchvision-nms-missing",
        pattern=r"operator torchvision::nms does not exist|No such operator torchvision::nms",
        title="torchvision's compiled ops did not load",
        cause=("torchvision's C++ ops were not registered: torchvision is not the release paired "
               "with this torch, or one is a CPU build and the other a CUDA build (different "
               "index/variant)."),
        fix=("Reinstall torch and torchvision together from the same index, pinned to a matching "
             "pair (`envcheck check --torch V --torchvision V` tells)."),
        components=("torchvision", "torch"),
        checks=("envcheck audit HOSTS", "envcheck check --torch V --torchvision V"),
    ),
    dict(
        id="pillow-too-new",
        pattern=r"cannot import name '?PILLOW_VERSION'?",
        title="Pillow too new for this torchvision",
        cause=("torchvision < 0.5 imports PIL.PILLOW_VERSION, which Pillow 7.0 removed."),
        fix="pip install 'pillow<7' (or a torchvision >= 0.5 with its matching torch).",
        components=("torchvision",),
        checks=("envcheck audit HOSTS",),
    ),
    dict(
        id="torch-not-cuda",
        pattern=r"Torch not compiled with CUDA enabled",
        title="A CPU-only torch is installed",
        cause="The installed torch is a CPU build (+cpu, or a platform with no CUDA wheel).",
        fix=("Install the CUDA build from the PyTorch index that matches your driver "
             "(`envcheck plan --gpu GPU --driver V`)."),
        components=("torch",),
        checks=("envcheck audit HOSTS",),
    ),
]
