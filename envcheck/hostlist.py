"""Which hosts a command targets: `[user@]host[:port]`, hostlists in clush's grammar, hosts and
groups files, and the Slurm allocation. Pure: no I/O except reading files the user named.

The grammar is clush's (ClusterShell's NodeSet; pdsh and Slurm users type the same): `node[01-16]`
expands to node01 … node16 keeping the zero padding, `gpu[1-3,7]-ib` to gpu1-ib … gpu7-ib,
`node[01-08/2]` steps, several bracket groups multiply out (`r[1-2]n[1-2]`), and outside brackets
`,` joins, `!` excludes (`node[01-08]!node03`), `&` intersects and `^` keeps what is in one side
only, left to right; `@gpu` is a group from a groups file (`gpu: node[01-16]`). Every range is
counted before NodeSet builds a name. compress_hostlist() is the inverse, for reports.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from envcheck.errors import UsageError
from envcheck.hostfiles import GROUPS_FILE, NAME_OK, read_groups_file, read_hosts_file

# hosts in one command, all arguments and the hosts file together: counted BEFORE any list is
# built, so a typo like node[1-100000][1-100000] is one line, not a MemoryError (Slurm's own
# hostlist.c caps a range at 64k too)
MAX_HOSTS = 65_536

_NAME_OK = NAME_OK
_V6_OK = re.compile(r"[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?")   # an IPv6 literal, with a zone id


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


_OPS = ",!&^"     # clush's NodeSet operators, applied left to right: union, minus, and, xor
_ITEM = re.compile(r"(\d+)(?:-(\d+)(?:/(\d+))?)?")
_MAX_GROUP_DEPTH = 8


def _terms(text: str) -> List[Tuple[str, str]]:
    """`a[1-4],b!a2&x` → [(',', 'a[1-4]'), (',', 'b'), ('!', 'a2'), ('&', 'x')]: the operator
    before each term, split outside brackets."""
    out, depth, cur, op = [], 0, [], ","
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise UsageError(f"bad host list {text!r}: nested brackets",
                                 "write ranges as node[01-04], one bracket level")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"bad host list {text!r}: ']' without '['", "write ranges as node[01-04]")
        if ch in _OPS and depth == 0:
            out.append((op, "".join(cur).strip()))
            op, cur = ch, []
        else:
            cur.append(ch)
    if depth != 0:
        raise UsageError(f"bad host list {text!r}: '[' without ']'", "write ranges as node[01-04]")
    out.append((op, "".join(cur).strip()))
    dangling = next((o for o, t in out[1:] if o != "," and not t), None)
    if dangling:
        raise UsageError(f"bad host list {text!r}: {dangling!r} needs hosts on its right",
                         "write node[01-08]!node03, or give -x node03")
    if out[0] == (",", "") and len(out) > 1 and out[1][0] != ",":
        raise UsageError(f"bad host list {text!r}: {out[1][0]!r} needs hosts on its left",
                         "write node[01-08]!node03, or give -x node03")
    return [(o, t) for o, t in out if t]


def _range_count(spec: str, token: str) -> Tuple[int, str]:
    """How many numbers `01-03,7,10-20/5` stands for, checked, nothing expanded; and the range
    as NodeSet reads it the way Slurm does (the lower bound's padding: `005-10` is `005-010`)."""
    n, items = 0, []
    for item in spec.split(","):
        m = _ITEM.fullmatch(item.strip())
        if not m:
            raise UsageError(f"bad host list {token!r}: range {item.strip()!r} is not N, N-M or N-M/STEP",
                             "use digits only inside brackets, e.g. node[01-16], gpu[1-3,7] or node[01-08/2]")
        lo_s, hi_s, step_s = m.group(1), m.group(2) or m.group(1), m.group(3) or "1"
        if max(len(lo_s), len(hi_s), len(step_s)) > 9:
            raise UsageError(f"bad host list {token!r}: range {item!r} has numbers of more than 9 digits",
                             "check the range for a typo")
        lo, hi, step = int(lo_s), int(hi_s), int(step_s)
        if hi < lo:
            raise UsageError(f"bad host list {token!r}: range {item!r} goes backwards", f"write it as [{hi_s}-{lo_s}]")
        if step < 1:
            raise UsageError(f"bad host list {token!r}: range {item!r} has step 0", "e.g. node[01-08/2]")
        n += (hi - lo) // step + 1
        pad = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        items.append(f"{lo_s}-{str(hi).zfill(pad)}/{step}" if m.group(2) else lo_s)
    return n, ",".join(items)


def _term_count(term: str) -> Tuple[int, str]:
    """The hosts one term (no operator, no group) stands for, before NodeSet builds any of them,
    and the term as NodeSet is given it."""
    count, parts = 1, []
    for piece in re.split(r"(\[[^\]]*\])", term):
        if piece.startswith("["):
            if not piece[1:-1]:
                raise UsageError(f"bad host list {term!r}: empty brackets", "e.g. node[01-04]")
            n, text = _range_count(piece[1:-1], term)
            count *= n
            parts.append(f"[{text}]")
            if count > MAX_HOSTS:
                return count, ""
        elif piece and not _NAME_OK.match(piece):
            raise UsageError(f"bad host list {term[:80]!r}: {piece[:40]!r} is not part of a host name",
                             "write host names, ranges (node[01-16]), ! to exclude, @group")
        else:
            parts.append(piece)
    return count, "".join(parts)


def _too_many(text: str) -> UsageError:
    return UsageError(f"bad host list {text[:80]!r}: more than {MAX_HOSTS} hosts in all",
                      "check the ranges for a typo, or split the work into several runs")


def _expand_term(term: str) -> List[str]:
    """One counted term's names: each bracket's numbers from ClusterShell's RangeSet (steps,
    padding), joined to the text around them as Slurm joins them. Not NodeSet itself: it reads
    the digits before a bracket as part of the range (`a1[5-12]` → a15 … a112, 98 names where
    Slurm means 8), which would also escape the count made before expansion."""
    # lazy: ClusterShell.RangeSet costs ~15 ms CPU (-X importtime) of every start-up (the CLI
    # imports this module); only a bracketed hostlist needs it
    from ClusterShell.RangeSet import RangeSet, RangeSetException
    combos = [""]
    for piece in re.split(r"(\[[^\]]*\])", term):
        if piece.startswith("["):
            try:
                values = list(RangeSet(piece[1:-1]))
            except (RangeSetException, ValueError) as e:
                raise UsageError(f"bad host list {term[:80]!r}: {e}", "e.g. node[01-16], node[01-08/2]") from None
            combos = [c + v for c in combos for v in values]
        else:
            combos = [c + piece for c in combos]
    return combos


def expand_hostlist(text: str, budget: int = MAX_HOSTS, groups: Optional[Mapping[str, str]] = None,
                    _depth: int = 0) -> List[str]:
    """Expand one hostlist expression in clush's grammar (ClusterShell's NodeSet): ranges with
    steps (`node[01-08/2]`), `,` union, `!` minus, `&` intersection, `^` either-but-not-both,
    applied left to right, and `@group` from `groups` (a groups file). Names come in the order
    written, each once. More than `budget` hosts is a UsageError, raised before NodeSet builds
    anything: every term is counted first (an excluded range counts too)."""
    if _depth > _MAX_GROUP_DEPTH:
        raise UsageError(f"host group {text[:80]!r}: groups nested more than {_MAX_GROUP_DEPTH} deep (a loop?)",
                         "check the groups file")
    terms = []
    total = 0
    for op, term in _terms(text):
        if term.startswith("@"):
            n = _group_count(term, groups, _depth)
        else:
            n, term = _term_count(term)
        terms.append((op, term))
        total += n
        if total > budget:
            raise _too_many(text)
    names: Dict[str, None] = {}
    for op, term in terms:
        these = (expand_hostlist(_group_text(term, groups), budget, groups, _depth + 1)
                 if term.startswith("@") else _expand_term(term))
        if op == ",":
            names.update(dict.fromkeys(these))
        elif op == "!":
            for n in these:
                names.pop(n, None)
        elif op == "&":
            keep = set(these)
            names = {n: None for n in names if n in keep}
        else:  # ^
            both = set(names) & set(these)
            names.update(dict.fromkeys(these))
            names = {n: None for n in names if n not in both}
    return list(names)


def _group_text(term: str, groups: Optional[Mapping[str, str]]) -> str:
    name = term[1:]
    if not _NAME_OK.match(name):
        raise UsageError(f"bad host {term[:80]!r}: names no host and no group", "write host names, or @GROUP")
    if not groups:
        raise UsageError(f"host group {term!r}: no groups file",
                         f"give --groups-file FILE with a line `{name or 'NAME'}: node[01-16]` "
                         f"(ClusterShell's groups format; default {GROUPS_FILE})")
    if name not in groups:
        known = ", ".join("@" + g for g in sorted(groups)[:8])
        raise UsageError(f"host group {term!r} is not in the groups file", f"use one of {known}")
    return groups[name]


def _group_count(term: str, groups: Optional[Mapping[str, str]], depth: int) -> int:
    """A group's size, counted the same way (its own terms, its nested groups)."""
    total = 0
    for _, t in _terms(_group_text(term, groups)):
        if depth >= _MAX_GROUP_DEPTH:
            raise UsageError(f"host group {term!r}: groups nested more than {_MAX_GROUP_DEPTH} deep (a loop?)",
                             "check the groups file")
        total += _group_count(t, groups, depth + 1) if t.startswith("@") else _term_count(t)[0]
        if total > MAX_HOSTS:
            break
    return total


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
    if ":" in host and not _V6_OK.fullmatch(host):   # `a;b::`, `-oProxyCommand=x::`: not an address
        raise UsageError(f"bad host {raw[:80]!r}: {host[:80]!r} is not an IPv6 address", "write [user@]host[:port]")
    if not host or (":" not in host and not _NAME_OK.match(host)):
        raise UsageError(f"bad host {raw[:80]!r}: {host[:80]!r} is not a host name", "write [user@]host[:port]")
    if len(host) > 253 or any(len(label) > 63 for label in host.split(".")):
        raise UsageError(f"bad host {raw[:80]!r}: longer than DNS allows (253 characters, 63 per label)",
                         "check the host name for a typo")
    return Target(host=host, user=user, port=port)


def parse_targets(specs: Iterable[str], groups: Optional[Mapping[str, str]] = None) -> List[Target]:
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
        expanded = _expand_with_affixes(spec, budget, groups)
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


def _expand_with_affixes(spec: str, budget: int = MAX_HOSTS,
                         groups: Optional[Mapping[str, str]] = None) -> List[str]:
    # keep user@ and :port outside the expansion so `u@n[1-2]:22` gives u@n1:22, u@n2:22
    user = ""
    if re.match(r"[^@\[]+@[^@]+@", spec) or re.search(r":(?!\d*$)[^:\]]*$", spec):
        parse_target(spec)   # two user names, or a port that is not a number: its own one-line error
    m = re.match(r"([A-Za-z0-9_.\-]+)@", spec)   # `@gpu` alone is a group, not a user
    if m:
        user, spec = m.group(0), spec[m.end():]
    if re.fullmatch(r"\[[0-9A-Fa-f.%]*:[0-9A-Fa-f:.%]*\](?::\d*)?", spec) or \
            ("[" not in spec and spec.count(":") > 1):
        return [user + spec]  # an IPv6 address, bare or [in brackets]:port, not a hostlist
    port = ""
    m = re.search(r"(:\d*)$", spec)
    if m:
        port = m.group(1)
        spec = spec[: m.start()]
    return [user + h + port for h in expand_hostlist(spec, budget, groups)]


def resolve_targets(args: Sequence[str], hosts_file: Optional[str] = None,
                    environ: Optional[Mapping[str, str]] = None, exclude: Sequence[str] = (),
                    groups_file: Optional[str] = None) -> List[Target]:
    """The hosts a command runs on: arguments plus --hosts-file; with neither, the Slurm
    allocation ($SLURM_JOB_NODELIST); with none of these, [] (the caller runs locally).
    `exclude` (-x, clush's) drops hosts by name, whatever user@ or :port they were given with."""
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
    groups = read_groups_file(groups_file) if groups_file or any("@" in s for s in list(specs) + list(exclude)) else {}
    targets = parse_targets(specs, groups)
    if exclude:
        if not targets:
            raise UsageError("-x/--exclude without hosts: this machine cannot be excluded from itself",
                             "name the hosts, e.g. node[01-08] -x node03")
        gone = {t.host for t in parse_targets(exclude, groups)}
        targets = [t for t in targets if t.host not in gone]
        if not targets:
            raise UsageError(f"-x {','.join(exclude)[:80]} excludes every host", "exclude fewer hosts")
    return targets
