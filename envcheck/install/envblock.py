"""`envcheck env`: the marked block that puts a CUDA toolkit on PATH and LD_LIBRARY_PATH.

Where the block goes (see docs/provisioning.md): by default the SSH user's ~/.bashrc, placed
BEFORE the file's first early exit (Ubuntu's `case $- in *i*) ;; *) return;; esac`, or
`[ -z "$PS1" ] && return`). sshd runs commands through `bash -c`, and bash sources ~/.bashrc for
such non-interactive commands when it detects SSH (Debian/Ubuntu build bash with that switch), so
a block above the guard is what Fabric, mpirun, pdsh and torchrun see; exports below the guard
never reach them. /etc/profile.d is read by login shells only, so `--profile-d` additionally writes
/etc/ld.so.conf.d (the loader reads it for every process) and says what it cannot reach.

Three layers, pyinfra style:
  fact     the probe's rcfile section (probe_request) -> file_fact(): the file's resolved path,
           whether it exists, its sha256 and its text, with the login's privilege and shell, in
           one command.
  plan     plan_env(fact, args) -> EnvPlan: the new text (or "nothing to do" with a reason).
           The text editing is pure: apply_block / remove_block.
  execute  write_command(plan): one small shell command that re-checks the sha256 (nobody edited
           the file meanwhile), keeps a backup, writes a temp file with the original's mode and
           owner beside it and renames it over the file (atomic).
"""
from __future__ import annotations

import base64
import hashlib
import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

from envcheck.errors import EnvcheckError, UsageError
from envcheck.facts import views
from envcheck.facts.schema import Facts
from envcheck.install.common import NodeOutcome, ProbeRequest, privilege_from_fact, read_node, run_priv
from envcheck.remote import Remote

BEGIN = "# >>> envcheck >>>"
END = "# <<< envcheck <<<"
BACKUP_SUFFIX = ".envcheck.bak"
PROFILE_D_FILE = "/etc/profile.d/envcheck-cuda.sh"
LDCONF_FILE = "/etc/ld.so.conf.d/envcheck-cuda.conf"
PROFILE_D_FILES = (PROFILE_D_FILE, LDCONF_FILE)   # --profile-d: the two files, both entirely ours

# Lines after which a non-interactive shell may stop reading the file. The block must come first.
_EARLY_EXIT = re.compile(
    r"""^\s*(?:
        case\s+"?\$-"?\s+in            # Ubuntu/Debian: case $- in *i*) ;; *) return;; esac
      | \[\[?\s+.*\$-.*\]\]?.*\b(?:return|exit)\b   # [[ $- != *i* ]] && return
      | \[\[?\s+.*\$\{?PS1.*\b(?:return|exit)\b      # [ -z "$PS1" ] && return
      | (?:return|exit)\b               # a bare return/exit at top level
    )""", re.X)
# The comment line Ubuntu puts directly above its guard; keep it attached to the guard.
_GUARD_COMMENT = re.compile(r"^\s*#.*(?:interactive|PS1)", re.I)


# A distribution-packaged toolkit (Debian/Ubuntu's nvidia-cuda-toolkit) lives in the system prefix:
# nvcc in /usr/bin, libraries in the multiarch directory the loader always searches. CUDA_HOME=/usr
# is what torch's cpp_extension derives from `which nvcc` there; putting /usr/bin first on PATH
# would shadow /usr/local/bin, and /usr/lib64 holds none of its libraries.
SYSTEM_PREFIXES = ("/usr",)


def is_system_prefix(cuda_home: str) -> bool:
    return (cuda_home.rstrip("/") or "/") in SYSTEM_PREFIXES


def render_block(cuda_home: str) -> str:
    """The block text (ends with a newline). Prepends, never overwrites: an empty variable gets no
    stray ':' (an empty PATH entry means the current directory). For a toolkit in the system
    prefix only CUDA_HOME is set: its nvcc and libraries are on the default paths already."""
    if not cuda_home.startswith("/"):
        raise UsageError(f"--cuda-home {cuda_home!r} is not an absolute path",
                         "give the toolkit directory, e.g. --cuda-home /usr/local/cuda-12.4")
    h = shlex.quote(cuda_home.rstrip("/") or "/")
    paths = (
        'export PATH="$CUDA_HOME/bin${PATH:+:$PATH}"\n'
        'export LD_LIBRARY_PATH="$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"\n'
    )
    if is_system_prefix(cuda_home):
        paths = "# a distribution's toolkit: nvcc and its libraries are on the system's default paths\n"
    return (
        f"{BEGIN}\n"
        "# Managed by `envcheck env`; edit with `envcheck env --cuda-home PATH`, remove with\n"
        "# `envcheck env --remove`. Above any interactive-only guard on purpose: non-interactive\n"
        "# SSH commands (mpirun, torchrun, pdsh) read only this far.\n"
        f"export CUDA_HOME={h}\n"
        + paths +
        f"{END}\n"
    )


def _lines(text: str) -> List[str]:
    """Lines as the shell sees them: split at '\\n' only (str.splitlines also splits at \\f, \\x1c …)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def find_blocks(text: str) -> List[Tuple[int, int]]:
    """(start, end) character spans of every complete block, end including the END line's newline.
    Raises UsageError on an unterminated or nested marker: we never guess where our block ends."""
    spans: List[Tuple[int, int]] = []
    pos = 0
    start: Optional[int] = None
    for line in _lines(text):
        s = line.rstrip("\r\n").strip()
        if s == BEGIN:
            if start is not None:
                raise UsageError(f"two '{BEGIN}' lines without '{END}' between them",
                                 "fix the file by hand (a backup of each write is kept as *.envcheck.bak)")
            start = pos
        elif s == END:
            if start is None:
                raise UsageError(f"'{END}' without a '{BEGIN}' before it",
                                 "fix the file by hand (a backup of each write is kept as *.envcheck.bak)")
            spans.append((start, pos + len(line)))
            start = None
        pos += len(line)
    if start is not None:
        raise UsageError(f"'{BEGIN}' without a closing '{END}'",
                         "fix the file by hand (a backup of each write is kept as *.envcheck.bak)")
    return spans


def remove_block(text: str) -> str:
    """The text with every envcheck block taken out; every other byte kept."""
    out, last = [], 0
    for s, e in find_blocks(text):
        out.append(text[last:s])
        last = e
    out.append(text[last:])
    return "".join(out)


def insertion_point(text: str) -> int:
    """Offset where a new block goes: before the first early-exit line (and the comment directly
    above it), else at the end. A file that does not end in a newline gets the block at the top, so
    that removing it again gives back exactly the original bytes."""
    lines = _lines(text)
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    for i, line in enumerate(lines):
        if _EARLY_EXIT.match(line):
            j = i
            while j > 0 and _GUARD_COMMENT.match(lines[j - 1]) and not lines[j - 1].strip() == BEGIN:
                j -= 1
            return offsets[j]
    if text and not text.endswith("\n"):
        return 0
    return len(text)


def apply_block(text: str, block: str) -> str:
    """Put `block` into `text`: replace ours in place when it already sits before any early exit,
    otherwise take it out and insert it at insertion_point(). Bytes outside the block are kept."""
    spans = find_blocks(text)
    if len(spans) == 1:
        s, e = spans[0]
        guard = insertion_point(text[:s] + text[e:])
        if s <= guard:
            return text[:s] + block + text[e:]
    base = remove_block(text)
    at = insertion_point(base)
    return base[:at] + block + base[at:]


# ---- fact --------------------------------------------------------------------------------------

def probe_request(files: List[str], cuda_home: Optional[str] = None) -> ProbeRequest:
    """What env reads on a node: privilege, the login shell, each start-up file (a dotfile symlink
    resolved: edited at its target, not replaced by a file), and whether cuda_home/bin/nvcc is
    there (a block exporting a missing CUDA_HOME is the very env-missing-toolkit error `envcheck
    audit` reports afterwards). A path not absolute is under the login's home."""
    nvcc = (nvcc_path(cuda_home),) if cuda_home else ()
    return ProbeRequest(("privilege", "login", "rcfile") + (("disk",) if nvcc else ()), nvcc,
                        tuple(p if p.startswith(("/", "~/")) else "~/" + p for p in files))


def nvcc_path(cuda_home: str) -> str:
    return (cuda_home.rstrip("/") or "") + "/bin/nvcc"


@dataclass
class FileFact:
    path: str
    exists: bool
    sha256: Optional[str]
    text: str
    writable: bool = True


def file_fact(f: Facts, given: str) -> FileFact:
    """One start-up file as the probe read it; UsageError for one never to write."""
    rc = views.rc_file(f, given if given.startswith(("/", "~/")) else "~/" + given)
    if rc is None:
        raise UsageError(f"{given}: the probe did not read it", "use the same envcheck version everywhere")
    if rc.kind == "nohome":   # never /.bashrc
        raise UsageError("HOME is unset or empty for this login", "set HOME, or pass --file with an absolute path")
    if rc.kind == "other":
        raise UsageError(f"{rc.path} is a directory, device, FIFO or socket, not a shell startup file; not writing to it",
                         "pass --file with a regular file such as ~/.bashrc")
    if rc.link == "out":
        raise UsageError(f"the file is a symlink to {rc.path}, outside the home and /etc/profile.d; not following it",
                         f"pass --file {rc.path} if that file is really meant")
    exists = rc.kind == "file"
    if exists and rc.text is None:
        # Editing a file we cannot round-trip byte for byte would risk the user's content.
        raise UsageError(f"{rc.path} is not UTF-8 text; not editing it", "pass --file with a text file")
    return FileFact(rc.path, exists, rc.sha256 if exists else None, rc.text or "", rc.writable)


# ---- plan --------------------------------------------------------------------------------------

@dataclass
class FileChange:
    path: str
    new_text: Optional[str]          # None: delete the file (ours entirely, e.g. profile.d)
    expect_sha256: Optional[str]     # the file must still be this (None: must not exist)
    mode: str = "0644"               # for a new file
    after: List[str] = field(default_factory=list)   # commands after the write (ldconfig)
    root: bool = False               # needs root (the SSH user cannot replace it)


@dataclass
class EnvPlan:
    changes: List[FileChange]
    noop_reason: Optional[str] = None
    notes: List[str] = field(default_factory=list)

    @property
    def noop(self) -> bool:
        return not self.changes


def plan_env(fact: FileFact, cuda_home: Optional[str], remove: bool = False) -> EnvPlan:
    """Facts + args -> the change to make to one file, or a no-op with its reason."""
    if remove:
        new = remove_block(fact.text)
        if not fact.exists or new == fact.text:
            return EnvPlan([], f"{fact.path}: no envcheck block, nothing to remove")
        return EnvPlan([FileChange(fact.path, new, fact.sha256, root=not fact.writable)])
    if not cuda_home:
        raise UsageError("env: --cuda-home is required (unless --remove)",
                         "e.g. envcheck env node01 --cuda-home /usr/local/cuda-12.4")
    new = apply_block(fact.text, render_block(cuda_home))
    if fact.exists and new == fact.text:
        return EnvPlan([], f"{fact.path}: block already in place for CUDA_HOME={cuda_home}")
    return EnvPlan([FileChange(fact.path, new, fact.sha256, root=not fact.writable)])


def plan_profile_d(profile: FileFact, ldconf: FileFact, cuda_home: Optional[str],
                   remove: bool = False) -> EnvPlan:
    """--profile-d: /etc/profile.d (login shells) + /etc/ld.so.conf.d (every process's loader).
    Both files are entirely ours, so they are written whole or deleted."""
    changes: List[FileChange] = []
    if remove:
        for f, after in ((profile, []), (ldconf, ["ldconfig"])):
            if f.exists:
                changes.append(FileChange(f.path, None, f.sha256, after=after, root=True))
        return EnvPlan(changes, None if changes else "no envcheck profile.d / ld.so.conf.d files")
    if not cuda_home:
        raise UsageError("env: --cuda-home is required (unless --remove)",
                         "e.g. envcheck env node01 --profile-d --cuda-home /usr/local/cuda-12.4")
    want_profile = render_block(cuda_home)
    if profile.text != want_profile or not profile.exists:
        changes.append(FileChange(profile.path, want_profile, profile.sha256, root=True))
    notes = ["/etc/profile.d is read by login shells only: a non-interactive `ssh node cmd` gets "
             "the libraries (ld.so.conf.d) but not PATH/CUDA_HOME; use the default ~/.bashrc "
             "block for those"]
    if is_system_prefix(cuda_home):  # the loader already searches the system's library directories
        if ldconf.exists:
            changes.append(FileChange(ldconf.path, None, ldconf.sha256, after=["ldconfig"], root=True))
        notes.append(f"{cuda_home} is a distribution's toolkit: no {LDCONF_FILE}, its libraries are "
                     "in the loader's default directories")
        return EnvPlan(changes, None if changes else f"profile.d already set for {cuda_home}", notes)
    want_ld = f"# managed by envcheck env\n{cuda_home.rstrip('/')}/lib64\n"
    if ldconf.text != want_ld or not ldconf.exists:
        changes.append(FileChange(ldconf.path, want_ld, ldconf.sha256, after=["ldconfig"], root=True))
    return EnvPlan(changes, None if changes else f"profile.d and ld.so.conf.d already set for {cuda_home}", notes)


# ---- execute -----------------------------------------------------------------------------------

def write_command(change: FileChange) -> str:
    """One node-side command doing the whole write. Content travels base64 on the command line
    (it is not secret, and stdin stays free for a sudo password)."""
    f = shlex.quote(change.path)
    bak = shlex.quote(change.path + BACKUP_SUFFIX)
    expect = shlex.quote(change.expect_sha256 or "-")
    check = (
        f"cur=-; if [ -e {f} ]; then cur=$(sha256sum < {f} | cut -d' ' -f1); fi; "
        f"if [ \"$cur\" != {expect} ]; then echo \"envcheck: {change.path} changed while we "
        "were planning; run again\" >&2; exit 3; fi; "
    )
    after = "".join(f"; {c}" for c in change.after)
    if change.new_text is None:
        return f"set -e; {check}cp -p {f} {bak}; rm -f {f}{after}"
    b64 = base64.b64encode(change.new_text.encode("utf-8")).decode("ascii")
    return (
        f"set -e; umask 077; {check}"
        f"d=$(dirname {f}); mkdir -p \"$d\"; "
        f"t=$(mktemp \"$d/.envcheck.XXXXXX\"); trap 'rm -f \"$t\"' EXIT; "
        f"echo {b64} | base64 -d > \"$t\"; "
        f"if [ -e {f} ]; then cp -p {f} {bak}; chmod --reference={f} \"$t\"; "
        f"chown --reference={f} \"$t\" 2>/dev/null || true; "
        f"else chmod {change.mode} \"$t\"; fi; "
        f"mv -f \"$t\" {f}; trap - EXIT{after}"
    )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---- orchestration: fact -> plan -> execute on one node -----------------------------------------

def describe(change: FileChange) -> str:
    if change.new_text is None:
        return f"remove {change.path} (backup {change.path}{BACKUP_SUFFIX})" + \
            "".join(f", then {c}" for c in change.after)
    verb = "replace" if change.expect_sha256 else "create"
    return f"{verb} {change.path} atomically (backup {change.path}{BACKUP_SUFFIX})" + \
        "".join(f", then {c}" for c in change.after)


def env_node(remote: Remote, *, cuda_home: Optional[str], file: str = "~/.bashrc",
             profile_d: bool = False, remove: bool = False, dry_run: bool = False,
             use_sudo: bool = False, password: Optional[Callable[[], str]] = None,
             timeout: float = 30.0) -> NodeOutcome:
    """`envcheck env` on one node: the probe (one command), a pure plan, one write command per file."""
    out = NodeOutcome(remote.name)
    paths = list(PROFILE_D_FILES) if profile_d else [file]
    read = read_node(remote, probe_request(paths, None if remove else cuda_home), timeout)
    if read.facts is None:
        return out.fail("unreachable" if read.unreachable else "failed",
                        read.error if read.unreachable else f"cannot read {', '.join(paths)}: {read.error}")
    try:
        facts = [file_fact(read.facts, p) for p in paths]
        plan = (plan_profile_d(facts[0], facts[1], cuda_home, remove) if profile_d
                else plan_env(facts[0], cuda_home, remove))
    except EnvcheckError as e:
        return out.fail("refused", f"{paths[-1]}: {e.one_line()}")
    out.lines.extend(plan.notes)
    login = views.login(read.facts).shell or ""
    if not profile_d and file.endswith(".bashrc") and login and not login.endswith("/bash"):
        # only bash reads ~/.bashrc for `ssh node CMD`; zsh reads ~/.zshenv, dash nothing
        out.lines.append(f"warning: the login shell is {login}, which does not read {file} for non-interactive "
                         "SSH commands (fix: pass --file for that shell, e.g. --file ~/.zshenv, or use --profile-d)")
    nvcc = views.path_at(read.facts, nvcc_path(cuda_home)) if cuda_home and not remove else None
    if nvcc is not None and not nvcc.executable:
        out.lines.append(f"warning: {cuda_home.rstrip('/')}/bin/nvcc does not exist on this node, so the block "
                         "points at no toolkit (fix: install it first (envcheck install-cuda), or correct --cuda-home)")
    if plan.noop:
        out.lines.append(f"nothing to do: {plan.noop_reason}")
        return out
    priv = privilege_from_fact(views.privilege(read.facts).mode, use_sudo, password)
    if any(c.root for c in plan.changes) and not priv.is_root:
        return out.fail("refused", f"{plan.changes[0].path} needs root and this login is not root "
                        "(fix: pass --sudo, or log in as root)")
    for change in plan.changes:
        if dry_run:
            out.lines.append("would " + describe(change))
            out.commands.append(write_command(change))
            continue
        r = run_priv(remote, write_command(change), priv, root=change.root, timeout=timeout)
        if not r.ok:
            return out.fail("failed", f"writing {change.path} failed: {r.error or r.tail(3)}")
        out.lines.append("did " + describe(change))
    if dry_run:
        out.status = "would-change"
        block = next((c.new_text for c in plan.changes if c.new_text), None)
        if block and not remove and cuda_home:
            out.lines.append("block:\n" + render_block(cuda_home).rstrip("\n"))
    else:
        out.status = "changed"
    return out
