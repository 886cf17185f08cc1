"""`envcheck provision PLAYBOOK [HOSTS…]`: judge the playbook's whole stack first, then run its
steps in order on every host in parallel. A host stops at its first failed step; the others go
on. Per-host steps are the install helpers' own node operations (envcheck/install/*,
envcheck/install/pip_step.py), each idempotent, so a second run changes nothing; `audit` and
`nccl-test` are checks over the hosts still going at that point.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.run import Options as AllreduceOptions, run_allreduce
from envcheck.allreduce.verdict import judge_report
from envcheck.audit.fleet import audit_fleet
from envcheck.errors import EXIT_FINDINGS, EnvcheckError, UsageError
from envcheck.model import Outcome
from envcheck.install.common import NodeOutcome
from envcheck.install.cuda import InstallArgs, sha256_file, install_cuda
from envcheck.install.cuda_spec import toolkit_spec
from envcheck.install.cudnn import read_archive, cudnn_node
from envcheck.inputs import check_rc_file
from envcheck.install.envblock import env_node
from envcheck.install.pip_step import requirements, pip_node
from envcheck.install.staging import check_tmpdir
from envcheck.provision.playbooks import Playbook, Step, check_stack, refusal
from envcheck.remote import Remote, fan_out

COLLECTIVE = ("audit", "nccl-test")


class StackRefused(EnvcheckError):
    """The playbook's stack does not work (matrix rules or its own steps disagree)."""
    exit_code = EXIT_FINDINGS


@dataclass
class StepResult:
    index: int
    name: str
    outcome: NodeOutcome


@dataclass
class HostRun:
    host: str
    steps: List[StepResult] = field(default_factory=list)
    stopped: Optional[str] = None          # "steps[2].env: <why>" when it stopped early

    @property
    def ok(self) -> bool:
        return self.stopped is None

    @property
    def changed(self) -> int:
        return sum(s.outcome.status == "changed" for s in self.steps)


@dataclass
class ProvisionOptions:
    files: Optional[Path] = None           # where runfile/archive names are looked up
    dry_run: bool = False
    use_sudo: bool = False
    password: Optional[Callable[[], str]] = None
    node_python: str = "python3"
    no_checksum: bool = False
    forks: int = 32
    timeout: float = 120.0
    matrix_path: Optional[str] = None


@dataclass
class Prepared:
    """Everything resolved on the controller before any node is touched."""
    cuda: Dict[int, Any] = field(default_factory=dict)      # step index -> (spec, InstallArgs)
    cudnn: Dict[int, Any] = field(default_factory=dict)     # step index -> (ArchiveInfo|None, cuda_home)
    notes: List[str] = field(default_factory=list)


def _local(files: Optional[Path], name: str, base: Path, where: str = "file") -> Optional[Path]:
    """The playbook's file `name`, found in --files (else beside the playbook), and never outside
    them: `runfile: ../../etc/passwd` must not be uploaded and run as the installer."""
    roots = [r.resolve() for r in (files, base) if r is not None]
    p = Path(name).expanduser()
    for cand in ([p] if p.is_absolute() else [p for p in ((files or base) / p, base / p) if p]):
        real = cand.resolve()
        if not any(real == r or r in real.parents for r in roots):
            raise UsageError(f"{where}: {name} resolves to {real}, outside {' and '.join(map(str, roots))}",
                             "put the file in --files DIR and name it relative to it")
        if real.is_file():
            return real
    return None


def prepare(pb: Playbook, matrix, o: ProvisionOptions) -> Prepared:
    """Resolve local files, checksums and toolkit specs for every step; a real run refuses a
    missing file here, a dry run notes it and goes on."""
    out = Prepared()
    base = Path(pb.path).resolve().parent
    for s in pb.steps:
        a = s.args
        if s.name == "install-cuda":
            spec = toolkit_spec(matrix, a["version"])
            expect = None if o.no_checksum else (a.get("sha256") or spec.sha256)
            args = InstallArgs(tmpdir=check_tmpdir(a.get("tmpdir", "/var/tmp"), f"{s.where}.tmpdir"), symlink=a.get("symlink", True),
                               use_sudo=o.use_sudo, timeout=o.timeout, expect_sha256=expect)
            if a.get("runfile"):
                path = _local(o.files, a["runfile"], base, f"{s.where}.runfile")
                if path is None:
                    msg = (f"{s.where}.runfile: {a['runfile']} not found (looked in "
                           f"{o.files or base}); without it the nodes download {spec.url}")
                    if not o.dry_run:
                        raise UsageError(msg, "put the runfile in --files DIR, or use url: in the playbook")
                    out.notes.append(msg)
                    args.url = a.get("url") or spec.url
                else:
                    args.runfile = str(path)
                    args.runfile_sha256 = sha256_file(args.runfile)
                    if expect and args.runfile_sha256 != expect:
                        raise UsageError(f"{s.where}.runfile: {path} has sha256 {args.runfile_sha256}, not {expect}",
                                         "download it again; for a trusted repackaged file set sha256: in the playbook")
            else:
                args.url = a.get("url") or spec.url
            out.cuda[s.index] = (spec, args)
        elif s.name == "install-cudnn":
            check_tmpdir(a.get("tmpdir", "/var/tmp"), f"{s.where}.tmpdir")
            home = a.get("cuda_home") or (f"/usr/local/cuda-{a['cuda']}" if a.get("cuda") else "/usr/local/cuda")
            path = _local(o.files, a["archive"], base, f"{s.where}.archive")
            if path is None:
                msg = f"{s.where}.archive: {a['archive']} not found (looked in {o.files or base}); NVIDIA's cuDNN downloads need a login"
                if not o.dry_run:
                    raise UsageError(msg, "download it and put it in --files DIR")
                out.notes.append(msg)
                out.cudnn[s.index] = (None, home)
            else:
                out.cudnn[s.index] = (read_archive(str(path)), home)
        elif s.name == "pip":
            requirements(list(a.get("packages") or []))     # before any step of any host runs
        elif s.name == "env" and a.get("file"):
            check_rc_file(a["file"])
    return out


def _step_on(remote: Remote, s: Step, prep: Prepared, o: ProvisionOptions) -> NodeOutcome:
    a = s.args
    if s.name == "install-cuda":
        spec, args = prep.cuda[s.index]
        return install_cuda([remote], spec, args, dry_run=o.dry_run, forks=1, password=o.password)[0]
    if s.name == "install-cudnn":
        info, home = prep.cudnn[s.index]
        if info is None:
            out = NodeOutcome(remote.name, status="would-change")
            out.lines.append(f"would install cuDNN from {a['archive']} into {home} (archive needed for a real run)")
            return out
        return cudnn_node(remote, info, home, tmpdir=a.get("tmpdir", "/var/tmp"), dry_run=o.dry_run,
                          use_sudo=o.use_sudo, password=o.password)
    if s.name == "env":
        return env_node(remote, cuda_home=a["cuda_home"], file=a.get("file", "~/.bashrc"),
                        profile_d=bool(a.get("profile_d")), dry_run=o.dry_run, use_sudo=o.use_sudo,
                        password=o.password, timeout=o.timeout)
    if s.name == "pip":
        return pip_node(remote, a, python=o.node_python, dry_run=o.dry_run, timeout=o.timeout)
    raise UsageError(f"{s.where}: not a per-host step",  # pragma: no cover - parse_playbook refuses
                     "use one of the steps docs/doctor.md lists for playbooks")


def _segment(remotes: List[Remote], steps: List[Step], runs: Dict[str, HostRun], prep: Prepared,
             o: ProvisionOptions) -> None:
    def one(remote: Remote) -> None:
        run = runs[remote.name]
        pending_change = False
        for s in steps:
            try:
                out = _step_on(remote, s, prep, o)
            except EnvcheckError as e:
                out = NodeOutcome(remote.name).fail("failed", e.one_line())
            except Exception as e:  # noqa: BLE001 - one host's surprise must not stop the others
                out = NodeOutcome(remote.name).fail("failed", f"{type(e).__name__}: {e}")
            if o.dry_run and pending_change and out.status == "refused":
                # its preflight looks at a node the earlier steps have not changed yet
                out = NodeOutcome(remote.name, status="would-change",
                                  lines=[f"would run after the steps above (its preflight now says: {out.error or '; '.join(out.problems)})"])
            run.steps.append(StepResult(s.index, s.name, out))
            if out.status == "would-change":
                pending_change = True
            if not out.ok:
                run.stopped = f"{s.where}: {out.error or out.status}"
                return

    fan_out(remotes, one, forks=o.forks)


def _collective(remotes: List[Remote], s: Step, runs: Dict[str, HostRun], matrix, o: ProvisionOptions) -> None:
    names = [r.name for r in remotes]
    if o.dry_run:
        for n in names:
            runs[n].steps.append(StepResult(s.index, s.name, NodeOutcome(
                n, status="would-change", lines=[f"would run {s.name} over {len(names)} host(s)"])))
        return
    outs: Dict[str, NodeOutcome] = {n: NodeOutcome(n, status="unchanged") for n in names}
    if s.name == "audit":
        fa = audit_fleet(remotes, matrix, deep=bool(s.args.get("deep")), node_python=o.node_python,
                         timeout=o.timeout, forks=o.forks)
        for r in fa.results:
            errs = [f for f in r.findings if f.severity == "error"]
            if not r.reachable:
                outs[r.host].fail("unreachable", f"audit: {r.error}")
            elif errs:
                outs[r.host].fail("failed", f"audit: {len(errs)} error finding(s): " + "; ".join(f.message for f in errs[:3]))
            else:
                outs[r.host].lines.append(f"audit clean ({len(r.findings)} finding(s), no errors)")
    else:
        a = s.args
        opts = AllreduceOptions(backend=a.get("backend", "auto"), node_python=o.node_python, forks=o.forks,
                       timeout=float(a.get("timeout", 60.0)), rendezvous_timeout=float(a.get("timeout", 60.0)),
                       ifname=a.get("ifname"))
        if "max_bytes" in a:
            opts = dataclasses.replace(opts, max_bytes=am.parse_size(str(a["max_bytes"])),
                                       min_bytes=min(opts.min_bytes, am.parse_size(str(a["max_bytes"]))))
        rep = run_allreduce(remotes, opts)
        v = judge_report(rep, float(a["min_busbw"]) if a.get("min_busbw") is not None else None)
        for n in names:
            if not v.ok and (v.culprit is None or v.culprit == n):
                outs[n].fail("failed", f"nccl-test: {v.message}")
            else:
                outs[n].lines.append(f"nccl-test ok: {v.message}")
    for n in names:
        runs[n].steps.append(StepResult(s.index, s.name, outs[n]))
        if not outs[n].ok:
            runs[n].stopped = f"{s.where}: {outs[n].error}"


@dataclass
class ProvisionResult:
    runs: List[HostRun]
    notes: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)   # stack findings that do not refuse it


def provision(pb: Playbook, remotes: Sequence[Remote], matrix, o: ProvisionOptions,
              evaluate=None) -> ProvisionResult:
    """Validate, then run. Raises StackRefused before touching any node when the stack is bad."""
    findings = check_stack(pb, matrix, evaluate)
    why = refusal(pb, findings)
    if why:
        raise StackRefused(why, "choose a stack `envcheck plan --gpu GPU` allows, or fix the playbook")
    prep = prepare(pb, matrix, o)
    runs = {r.name: HostRun(r.name) for r in remotes}
    segment: List[Step] = []
    for s in pb.steps + [None]:  # type: ignore[list-item]
        if s is None or s.name in COLLECTIVE:
            alive = [r for r in remotes if runs[r.name].ok]
            if segment and alive:
                _segment(alive, segment, runs, prep, o)
            segment = []
            alive = [r for r in remotes if runs[r.name].ok]
            if s is not None and alive:
                _collective(alive, s, runs, matrix, o)
        else:
            segment.append(s)
    return ProvisionResult([runs[r.name] for r in remotes], prep.notes,
                           [f"[{f.component}] {f.message}" for f in findings if f.severity == "warning"])


def outcome(runs: List[HostRun]) -> Outcome:
    """A host stopped by a refused or failed step is an error; one that could not be reached, unknown."""
    lost = sum(any(st.outcome.status == "unreachable" for st in r.steps) for r in runs)
    return Outcome(errors=sum(not r.ok for r in runs) - lost, unknown=lost)


def exit_code(runs: List[HostRun]) -> int:
    return outcome(runs).exit_code()


def to_json(runs: List[HostRun]) -> List[Dict[str, Any]]:
    return [{"host": r.host, "ok": r.ok, "stopped": r.stopped,
             "steps": [{"index": s.index, "step": s.name, **{k: v for k, v in s.outcome.__dict__.items() if k != "host"}}
                       for s in r.steps]} for r in runs]

