"""`envcheck install-cuda`: facts (the probe, one command) -> plan (pure) -> execute, per node.

Every node is planned (preflight) before ANY node is changed; a problem on one node stops all,
with every problem of every node reported at once. --dry-run prints the plans and stops there.
What is known about a node is in cuda_facts.py, the node-side scripts in cuda_script.py, what a
release needs in cuda_spec.py.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from envcheck.install import staging
from envcheck.install.common import NodeOutcome, Privilege, ProbeRequest, privilege_from_fact, run_priv
from envcheck.install.cuda_facts import (CudaFacts, InstallArgs, gather, installed_version, matches, probe_request,
                                         what_changes_for_users)
from envcheck.install.cuda_script import fetch_command, install_script, link_command
from envcheck.install.cuda_source import file_digest
from envcheck.install.cuda_spec import ToolkitSpec
from envcheck.remote import Remote, fan_out
from envcheck.versions import vkey

GIB = 1024 ** 3
# the probe staged beside the runfile, to read the installed tree (install_script's check)
PROBE_FILE = f"{staging.SENTINEL}/envcheck-probe.py"


@dataclass
class Step:
    kind: str                    # upload | fetch | probe | install | link
    text: str                    # what the user reads in --dry-run
    command: Optional[str] = None
    stdin: Optional[str] = None  # the probe step: the script it writes (never a password: runs as the login)
    local: Optional[str] = None
    remote_path: Optional[str] = None
    size: int = 0
    root: bool = True
    timeout: float = 60.0


@dataclass
class CudaPlan:
    host: str
    problems: List[str] = field(default_factory=list)
    in_place: List[str] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    priv: Optional[Privilege] = None

    @property
    def noop(self) -> bool:
        return not self.steps and not self.problems


def gpu_cc(gpu: str, spec: ToolkitSpec) -> Optional[Tuple[int, int]]:
    """'NVIDIA A100-SXM4-40GB, 8.0' -> (8, 0); a bare name (old drivers lack compute_cap) is
    looked up in the matrix."""
    m = re.search(r",\s*(\d+)\.(\d+)\s*$", gpu)
    if m:
        return int(m.group(1)), int(m.group(2))
    return spec.gpu_cc(gpu.split(",")[0].strip())


def plan_install(host: str, f: CudaFacts, spec: ToolkitSpec, args: InstallArgs) -> CudaPlan:
    """Facts + args -> problems (all of them), what is already in place, and the steps."""
    p = CudaPlan(host)
    target, link = args.target(spec), args.link()
    have = installed_version(f)
    done = f.target_exists and matches(f, spec)
    if done:
        p.in_place.append(f"CUDA {spec.version} installed at {target} (version file and nvcc -V agree)")
    elif f.target_exists and not args.force:
        if have:
            what = f"CUDA {have}"
        elif f.nvcc:  # e.g. a toolkit assembled from redist archives or wheels: no version file
            what = f"a CUDA toolkit without a version file (nvcc -V: {f.nvcc}; not a runfile install?)"
        else:
            what = "something without a CUDA version file or nvcc (a partial install?)"
        p.problems.append(f"{target} already holds {what} (fix: pass --force to replace it, or remove it)")
    if args.symlink and f.link_kind == "notlink":
        p.problems.append(f"{link} is a real directory, not a symlink; not replacing it (fix: move it away, or pass --no-symlink)")
    link_ok = not args.symlink or (f.link_kind == "symlink" and f.link.rstrip("/") == target)
    if args.symlink and link_ok:
        p.in_place.append(f"{link} -> {target}")
    if done and link_ok:
        return p

    if f.priv == "root":
        p.priv = Privilege("root")
    elif args.use_sudo and f.priv in ("sudo-nopasswd", "sudo-password"):
        p.priv = Privilege(f.priv)
    else:
        p.problems.append("this login is not root" + (" and has no sudo" if f.priv == "none" else "")
                          + " (fix: log in as root, or pass --sudo)")
    if done:  # only the symlink is missing
        p.steps.append(Step("link", f"point {link} -> {target} (ln -sfn to a temp link + mv -T)",
                            link_command(target, link)))
        return p

    name = args.runfile_name(spec)
    # the run's own staging directory (staging.py), owned by the login user, mode 700: nobody
    # else can swap the file that root will run, and no other run or host shares it
    node_file = f"{staging.SENTINEL}/{name}"
    shown_file = staging.shown(node_file, args.tmpdir, host)
    want_sha = args.runfile_sha256 if args.runfile else args.expect_sha256
    _preflight(p, f, spec, args)
    _install_steps(p, f, spec, args, target, link, node_file, shown_file, want_sha)
    p.notes += what_changes_for_users(f, target, link if args.symlink else None)
    return p


def _preflight(p: CudaPlan, f: CudaFacts, spec: ToolkitSpec, args: InstallArgs) -> None:
    """Every reason the install would fail on this node, found before anything runs."""
    need_tmp = spec.need_tmp_bytes + spec.need_tmp_bytes // 2
    if f.tmp_free < need_tmp:
        p.problems.append(f"{args.tmpdir} has {f.tmp_free / GIB:.1f} GiB free, CUDA {spec.version} needs about "
                          f"{need_tmp / GIB:.1f} GiB there (fix: free space, or pass --tmpdir DIR on a bigger disk)")
    if f.target_free < spec.need_target_bytes:
        p.problems.append(f"{args.prefix} has {f.target_free / GIB:.1f} GiB free, CUDA {spec.version} needs about "
                          f"{spec.need_target_bytes / GIB:.1f} GiB (fix: free space, or pass --prefix DIR)")
    if not f.gcc:
        if not args.override:
            p.problems.append("gcc is not installed; the CUDA installer refuses to run without it "
                              "(fix: install gcc, or pass --override)")
    elif spec.max_gcc is not None and vkey(f.gcc)[0] > spec.max_gcc:
        if args.override:
            p.notes.append(f"gcc {f.gcc} is newer than CUDA {spec.short} accepts (max {spec.max_gcc}); "
                           "--override given: the installer runs, but nvcc will refuse this gcc (use an older gcc when compiling)")
        else:
            p.problems.append(f"gcc {f.gcc} is newer than CUDA {spec.short} supports (max gcc {spec.max_gcc}) "
                              f"(fix: install gcc-{spec.max_gcc} and make it the default, or pass --override)")
    for gpu in f.gpus:
        cc = gpu_cc(gpu, spec)
        if cc is not None and spec.supports(cc) is False:
            msg = (f"GPU {gpu.split(',')[0].strip()} (sm_{cc[0]}{cc[1]}) is not supported by CUDA {spec.short}, "
                   "which cannot build code for it")
            if args.force:
                p.notes.append(msg + "; installing anyway (--force)")
            else:
                p.problems.append(msg + " (fix: pick a CUDA that supports it, or pass --force)")
    if not f.gpus:
        p.notes.append("no GPU listed by the driver: the architecture check was skipped")
    if spec.generation == "new":
        if f.installer_log_uid is not None and f.installer_log_uid != 0:
            p.problems.append(f"/tmp/cuda-installer.log exists and belongs to uid {f.installer_log_uid}; the CUDA "
                              "installer crashes on it (fix: rm -f /tmp/cuda-installer.log)")
        if not f.varlog_writable and f.priv == "root":
            p.problems.append("/var/log is not writable; the CUDA installer needs it for its log "
                              "(fix: make /var/log writable, e.g. not a read-only file system)")
    if f.machine not in ("x86_64", "?") and not args.runfile and not args.url:
        p.problems.append(f"this node is {f.machine}; the matrix's runfile is for x86_64 (fix: pass --url or --runfile)")


def _install_steps(p: CudaPlan, f: CudaFacts, spec: ToolkitSpec, args: InstallArgs, target: str, link: str,
                   node_file: str, shown_file: str, want_sha: Optional[str]) -> None:
    """Get the runfile onto the node (upload or fetch), then check and run it."""
    if args.runfile:
        size = os.path.getsize(args.runfile)
        p.steps.append(Step("upload", f"upload {args.runfile} ({size} bytes) to {shown_file}",
                            local=args.runfile, remote_path=node_file, size=size, root=False))
    else:
        url = args.url or spec.url
        if not url:
            p.problems.append(f"no download URL known for CUDA {spec.version} (fix: pass --runfile, --url or --mirror)")
        else:
            if not f.fetchers:
                p.problems.append("neither curl nor wget on the node to fetch the runfile (fix: install one, or pass --runfile)")
            p.steps.append(Step("fetch", f"fetch {url} on the node into {shown_file}",
                                fetch_command(url or "", node_file, args.install_timeout),
                                root=False, timeout=args.install_timeout + 30))
    # the probe reads the result (install_script's version_check): staged beside the runfile
    command, script = check_request(target).show()
    p.steps.append(Step("probe", f"stage the probe ({len(script.encode())} bytes, read-only; --show-probe prints it) "
                                 f"at {staging.shown(PROBE_FILE, args.tmpdir, p.host)}, to read the result",
                        f"umask 077; cat > {shlex.quote(PROBE_FILE)}", stdin=script, root=False))
    expect = want_sha
    flags = staging.shown(" ".join(spec.installer_flags(target, staging.SENTINEL, args.override)), args.tmpdir, p.host)
    text = (("verify sha256 " + expect[:16] + "…, " if expect else
             "verify md5 " + args.expect_md5 + ", " if args.expect_md5 else "check the archive only (no checksum "
             "known or wanted): ")
            + f"sh {shown_file} --check, then run: sh {shown_file} {flags}"
            + (f" (moving the existing {target} aside, restored on failure)" if f.target_exists else "")
            + f"; success = version file + nvcc -V say {spec.version}")
    p.steps.append(Step("install", text, install_script(
        spec, runfile=node_file, target=target, link=link if args.symlink else None, tmpdir=staging.SENTINEL,
        expect_sha256=expect, override=args.override, replace_existing=f.target_exists,
        probe=f"{command} --lines < {shlex.quote(PROBE_FILE)}", expect_md5=None if expect else args.expect_md5),
        timeout=args.install_timeout))
    if args.symlink:
        p.steps[-1].text += f"; then point {link} -> {target}"


def probe_reads(spec: ToolkitSpec, args: InstallArgs) -> List[Tuple[str, Tuple[str, str]]]:
    """What install-cuda runs on a node to read it (--show-probe): (what for, (command line,
    script)): the preflight, then the check of the installed tree inside the install step."""
    command, script = check_request(args.target(spec)).show()
    return [("on each node, before any change", probe_request(spec, args).show()),
            ("as root, after the installer", (f"{command} --lines < {staging.shown(PROBE_FILE, args.tmpdir, 'NODE')}",
                                             script))]


def check_request(target: str) -> ProbeRequest:
    """The probe's read of the installed tree: its version file and its own nvcc -V."""
    return ProbeRequest(("toolkit",), (target,))


def sha256_file(path: str) -> str:
    return file_digest(path)


def execute(remote: Remote, plan: CudaPlan, password: Optional[Callable[[], str]],
            progress: Optional[Callable[[str, int, int], None]] = None, tmpdir: str = "/var/tmp") -> NodeOutcome:
    out = NodeOutcome(plan.host, lines=list(plan.notes))
    priv = privilege_from_fact(plan.priv.mode, True, password) if plan.priv else None
    if not any(staging.SENTINEL in (s.command or "") + (s.remote_path or "") for s in plan.steps):
        return _execute(remote, plan, priv, out, progress, "")
    r = remote.run(staging.open_command(tmpdir, remote.name), timeout=30)
    stage = staging.parse_open(r.stdout, tmpdir) if r.ok else None
    if not stage:
        return out.fail("failed", f"cannot create a private staging directory in {tmpdir}: {r.error or r.tail(2)}")
    try:
        return _execute(remote, plan, priv, out, progress, stage)
    finally:
        # root may have left files in it (the installer's scratch): remove it as root
        run_priv(remote, staging.close_command(stage), priv, timeout=120)


def _execute(remote: Remote, plan: CudaPlan, priv: Optional[Privilege], out: NodeOutcome,
             progress: Optional[Callable[[str, int, int], None]], stage: str) -> NodeOutcome:
    for step in plan.steps:
        if step.kind == "upload":
            dest = staging.bind(step.remote_path, stage)
            remote.put(step.local, dest,
                       progress=(lambda done, total: progress(plan.host, done, total)) if progress else None)
            out.bytes_uploaded += step.size
            out.lines.append(f"uploaded {step.size} bytes to {dest}")
            continue
        if step.stdin is not None:  # as the login user: stdin is the step's own, never a password
            res = remote.run(staging.bind(step.command, stage), stdin=step.stdin, timeout=step.timeout)
        else:
            res = run_priv(remote, staging.bind(step.command, stage), priv, root=step.root, timeout=step.timeout)
        if step.kind == "install":
            out.installers_run += 1
        text = res.stdout + res.stderr
        if not res.ok:
            refused = re.search(r"envcheck-refused: (.*)", text)
            failed = re.search(r"envcheck-failed: (.*)", text)
            if refused:
                return out.fail("refused", refused.group(1))
            tail = text.split("--- installer output (tail) ---", 1)[1].strip() if "--- installer output" in text else ""
            why = failed.group(1) if failed else (res.error or res.tail(5))
            return out.fail("failed", f"{step.kind} failed: {why}; the node was left as it was", tail)
        for m in re.finditer(r"envcheck-(installed|linked): (.*)", text):
            out.lines.append(f"{m.group(1)} {m.group(2)}")
    out.status = "changed"
    return out


def render_plan(plan: CudaPlan, dry_run: bool, tmpdir: str = "/var/tmp") -> NodeOutcome:
    out = NodeOutcome(plan.host, lines=[f"already in place: {x}" for x in plan.in_place] + list(plan.notes),
                      problems=list(plan.problems))
    if plan.problems:
        out.status = "refused"
        out.error = f"{len(plan.problems)} problem(s) found in preflight; nothing was changed on any node"
    elif plan.noop:
        out.lines.append("nothing to do")
    elif dry_run:
        out.status = "would-change"
        out.lines += [f"would {s.text}" for s in plan.steps]
        out.commands = [staging.shown(s.command, tmpdir, plan.host) for s in plan.steps if s.command]
    return out


def install_cuda(remotes: Sequence[Remote], spec: ToolkitSpec, args: InstallArgs, *, dry_run: bool = False,
                 forks: int = 32, password: Optional[Callable[[], str]] = None,
                 progress: Optional[Callable[[str, int, int], None]] = None) -> List[NodeOutcome]:
    """Preflight every node, then (if all are clean and not dry_run) execute every plan."""
    def preflight(remote: Remote) -> CudaPlan:
        return plan_install(remote.name, gather(remote, spec, args), spec, args)

    planned = fan_out(list(remotes), preflight, forks=forks)
    outcomes: List[NodeOutcome] = [
        render_plan(o.value, dry_run, args.tmpdir) if o.ok else
        NodeOutcome(o.item.name).fail("unreachable", f"preflight failed: {o.error}") for o in planned]
    plans = [o.value for o in planned]
    if dry_run or any(not o.ok for o in outcomes):
        if not dry_run:
            for o in outcomes:
                if o.ok:
                    o.status, o.error = "refused", "not changed: another node failed preflight"
        return outcomes
    todo = [(r, p) for r, p in zip(remotes, plans) if not p.noop]
    done = fan_out(todo, lambda rp: execute(rp[0], rp[1], password, progress, args.tmpdir), forks=forks)
    by_host = {o.item[1].host: o for o in done}
    final = []
    for o in outcomes:
        ran = by_host.get(o.host)
        if ran is None:
            final.append(o)
        elif not ran.ok:
            final.append(o.fail("failed", str(ran.error)))
        else:
            res = ran.value
            res.lines = [line for line in o.lines if line.startswith("already")] + res.lines
            final.append(res)
    return final
