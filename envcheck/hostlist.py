"""Which hosts a command targets: `[user@]host[:port]`, Slurm hostlists, hosts files, and the
Slurm allocation. Pure: no I/O except reading a hosts file the user named.

Slurm's hostlist syntax (as in `scontrol show hostnames`): `node[01-16]` expands to node01 …
node16 keeping the zero padding of the lower bound, `gpu[1-3,7]-ib` to gpu1-ib … gpu7-ib, several
bracket groups multiply out (`r[1-2]n[1-2]` → r1n1 r1n2 r2n1 r2n2), and commas outside brackets
separate entries (`a,b[1-2]`). compress_hostlist() is the inverse, for reports (`node[001-480]`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Mapping, Optional, Sequence

from envcheck import inputs
from envcheck.errors import UsageError

# hosts in one command, all arguments and the hosts file together: counted BEFORE any list is
# built, so a typo like node[1-100000][1-100000] is one line, not a MemoryError (Slurm's own
# hostlist.c caps a range at 64k too)
MAX_HOSTS = 65_536
MAX_EXPANSION = MAX_HOSTS

_NAME_OK = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class Target:
    """One host to reach: the name as the user wrote it (also the ssh_config alias to look up),
    an optional user and port from `user@host:port`."""

    host: str
    user: Optional[str] = None
    port: Optional[int] = None

    @property
    def label(self) -> str:
        """How reports name this host: as the user wrote it, minus nothing."""
        s = self.host
        if self.user:
            s = f"{self.user}@{s}"
        if self.port:
            s = f"{s}:{self.port}"
        return s


def _split_top_level(text: str) -> List[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise UsageError(f"bad host list {text!r}: nested brackets",
                                 "write ranges as node[01-04], one bracket level")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"bad host list {text!r}: ']' without '['",
                                 "write ranges as node[01-04]")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise UsageError(f"bad host list {text!r}: '[' without ']'", "write ranges as node[01-04]")
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _range_items(spec: str, token: str) -> List[tuple]:
    """`01-03,7` → [('01', 1, 3), ('7', 7, 7)], checked, nothing expanded."""
    out = []
    for item in spec.split(","):
        item = item.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not m:
            raise UsageError(f"bad host list {token!r}: range {item!r} is not N or N-M",
                             "use digits only inside brackets, e.g. node[01-16] or gpu[1-3,7]")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        if len(lo_s) > 9 or len(hi_s) > 9:
            raise UsageError(f"bad host list {token!r}: range {item!r} has numbers of more than 9 digits",
                             "check the range for a typo")
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise UsageError(f"bad host list {token!r}: range {item!r} goes backwards",
                             f"write it as [{hi_s}-{lo_s}]")
        out.append((lo_s, lo, hi))
    return out


def _too_many(text: str) -> UsageError:
    return UsageError(f"bad host list {text[:80]!r}: more than {MAX_HOSTS} hosts in all",
                      "check the ranges for a typo, or split the work into several runs")


def expand_hostlist(text: str, budget: int = MAX_HOSTS) -> List[str]:
    """Expand one Slurm hostlist expression (may hold commas) into host strings, in order; more
    than `budget` hosts is a UsageError, raised before the list is built."""
    plans = []
    total = 0
    for token in _split_top_level(text):
        groups: List[object] = []
        count = 1
        for piece in re.split(r"(\[[^\]]*\])", token):
            if piece.startswith("["):
                if not piece[1:-1]:
                    raise UsageError(f"bad host list {token!r}: empty brackets", "e.g. node[01-04]")
                items = _range_items(piece[1:-1], token)
                count *= sum(hi - lo + 1 for _, lo, hi in items)
                groups.append(items)
            else:
                groups.append(piece)
            if count > budget:
                raise _too_many(text)
        total += count
        if total > budget:
            raise _too_many(text)
        plans.append(groups)
    names: List[str] = []
    for groups in plans:
        combos = [""]
        for g in groups:
            if isinstance(g, str):
                combos = [c + g for c in combos]
            else:
                values = [str(i).zfill(len(s) if s.startswith("0") and len(s) > 1 else 0)
                          for s, lo, hi in g for i in range(lo, hi + 1)]
                combos = [c + v for c in combos for v in values]
        names.extend(combos)
    return names


def compress_hostlist(names: Iterable[str]) -> str:
    """The shortest hostlist that expand_hostlist() turns back into exactly these names (each
    once): `node001 … node480` → `node[001-480]`, zero padding and several bracket groups kept.

    ClusterShell's NodeSet does the folding (the tool behind `clush -b`); its output syntax is
    the subset of ours without steps or groups (checked by property tests). Group resolution is
    off: a name is never looked up in /etc/clustershell. A name it cannot parse (never a valid
    host name) is listed as it is rather than failing a report."""
    # lazy: ClusterShell costs ~12 ms CPU (-X importtime, issue 26) of every start-up (the CLI
    # imports this module); only a report that folds host names needs it
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetException

    unique = sorted(set(n for n in names if n))
    # user@host:port labels fold too (`root@n[1-2]:22` expands back through parse_targets)
    foldable = [n for n in unique if _NAME_OK.match(n.replace("@", "").replace(":", ""))]
    rest = sorted(set(unique) - set(foldable))
    try:
        text = str(NodeSet.fromlist(foldable, resolver=RESOLVER_NOGROUP)) if foldable else ""
    except NodeSetException:
        text, rest = "", unique
    return ",".join([text] * bool(text) + rest)


def parse_target(text: str) -> Target:
    """`[user@]host[:port]` → Target. IPv6 literals go in brackets: `[fe80::1]:2222`."""
    raw = text
    user = None
    if "@" in text:
        user, text = text.rsplit("@", 1)
        if not user or "@" in user or not _NAME_OK.match(user):
            raise UsageError(f"bad host {raw!r}: user name {user!r} is not valid", "write user@host[:port]")
    port = None
    host = text
    if text.startswith("["):  # [v6]:port
        m = re.fullmatch(r"\[([0-9A-Fa-f:.%]+)\](?::(\d+))?", text)
        if not m:
            raise UsageError(f"bad host {raw!r}", "write IPv6 addresses as [addr]:port")
        host, port_s = m.group(1), m.group(2)
        port = int(port_s) if port_s else None
    elif text.count(":") == 1:
        host, port_s = text.split(":")
        if not port_s.isdigit():
            raise UsageError(f"bad host {raw!r}: port {port_s!r} is not a number", "write host:22")
        port = int(port_s)
    elif text.count(":") > 1:  # a bare IPv6 address, no port
        host = text
    if port is not None and not 0 < port < 65536:
        raise UsageError(f"bad host {raw!r}: port {port} out of range 1-65535", "write host:22")
    if not host or (":" not in host and not _NAME_OK.match(host)):
        raise UsageError(f"bad host {raw[:80]!r}: {host[:80]!r} is not a host name", "write [user@]host[:port]")
    if len(host) > 253 or any(len(label) > 63 for label in host.split(".")):
        raise UsageError(f"bad host {raw[:80]!r}: longer than DNS allows (253 characters, 63 per label)",
                         "check the host name for a typo")
    return Target(host=host, user=user, port=port)


def parse_targets(specs: Iterable[str]) -> List[Target]:
    """Expand and parse every argument; duplicates (same user, host and port) dropped, order kept.

    The user@ prefix and :port suffix apply to every host of a hostlist: `root@node[1-2]:2222`.
    """
    out: List[Target] = []
    seen = set()
    budget = MAX_HOSTS
    for spec in specs:
        spec = spec.strip()
        if not spec:
            raise UsageError("an empty host argument (an unset shell variable?)",
                             "name the hosts, or give no host arguments at all to work on this machine")
        expanded = _expand_with_affixes(spec, budget)
        if not expanded:
            raise UsageError(f"bad host {spec[:80]!r}: names no host",
                             "write [user@]host[:port], or give no host arguments at all for this machine")
        budget -= len(expanded)
        for one in expanded:
            t = parse_target(one)
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def _expand_with_affixes(spec: str, budget: int = MAX_HOSTS) -> List[str]:
    # keep user@ and :port outside the expansion so `u@n[1-2]:22` gives u@n1:22, u@n2:22
    user = ""
    if "@" in spec.split("[")[0]:
        user, spec = spec.split("@", 1)
        user += "@"
    if re.fullmatch(r"\[[0-9A-Fa-f.%]*:[0-9A-Fa-f:.%]*\](?::\d*)?", spec) or \
            ("[" not in spec and spec.count(":") > 1):
        return [user + spec]  # an IPv6 address, bare or [in brackets]:port, not a hostlist
    port = ""
    m = re.search(r"(:\d*)$", spec)
    if m:
        port = m.group(1)
        spec = spec[: m.start()]
    return [user + h + port for h in expand_hostlist(spec, budget)]


def read_hosts_file(path: str) -> List[str]:
    """One host (or hostlist) per line; `#` starts a comment; blank lines ignored."""
    lines = inputs.read_text(path, "hosts file", "give a text file with one host or hostlist per line",
                             limit=4 * 1024 * 1024).splitlines()
    specs = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            specs.extend(line.split())
    return specs


def resolve_targets(args: Sequence[str], hosts_file: Optional[str] = None,
                    environ: Optional[Mapping[str, str]] = None) -> List[Target]:
    """The hosts a command runs on: arguments plus --hosts-file; with neither, the Slurm
    allocation ($SLURM_JOB_NODELIST); with none of these, [] (the caller runs locally)."""
    specs = list(args)
    if hosts_file:
        listed = read_hosts_file(hosts_file)
        if not listed:
            raise UsageError(f"hosts file {hosts_file} lists no hosts",
                             "put one host or hostlist per line, or drop --hosts-file for this machine")
        specs.extend(listed)
    if not specs:
        env = os.environ if environ is None else environ
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
        if nodelist:
            specs = [nodelist]
    return parse_targets(specs)
