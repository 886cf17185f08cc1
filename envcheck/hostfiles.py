"""The files that name hosts: a hosts file (one host or hostlist per line; an Ansible inventory
is recognised and refused, saying so) and ClusterShell's groups file (`gpu: node[01-16]`), read for
envcheck.hostlist, which expands what they name."""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence

from envcheck import inputs
from envcheck.errors import UsageError

NAME_OK = re.compile(r"^[A-Za-z0-9_.\-]+$")   # what a host name, a user or a group name is made of


# ClusterShell's own static groups file (its `local` group source): `name: nodeset` per line
GROUPS_FILE = "/etc/clustershell/groups"


def read_groups_file(path: Optional[str]) -> Dict[str, str]:
    """`gpu: node[01-16]` lines (ClusterShell's groups file; `#` comments) → {name: nodeset}.
    No path: ClusterShell's default file when it exists, else no groups."""
    if path is None:
        if not os.path.isfile(GROUPS_FILE):
            return {}
        path = GROUPS_FILE
    fix = "write one group per line: `gpu: node[01-16]` (ClusterShell's groups file format)"
    groups: Dict[str, str] = {}
    for n, line in enumerate(inputs.read_text(path, "groups file", fix, limit=4 * 1024 * 1024).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, nodes = line.partition(":")
        if not sep or not NAME_OK.match(name.strip()) or not nodes.strip():
            raise UsageError(f"groups file {path}, line {n}: {line[:80]!r} is not `NAME: NODESET`", fix)
        groups[name.strip()] = nodes.strip().replace(" ", ",")
    return groups


# what an Ansible inventory looks like, to say so instead of "bad host '[gpus]'"
ANSIBLE_LINE = re.compile(r"^\s*(\[[A-Za-z0-9_:\-]+\]\s*$|\S+\s+\w+=|(all|hosts|children|vars)\s*:\s*$)")


def _ansible_inventory(path: str, lines: Sequence[str]) -> UsageError:
    return UsageError(f"hosts file {path} looks like an Ansible inventory ({lines[0].strip()[:40]!r}); "
                      "--hosts-file takes one host or hostlist per line",
                      f"list its hosts once: `ansible all -i {path} --list-hosts | tail -n +2 > hosts.txt`, "
                      "then --hosts-file hosts.txt")


def read_hosts_file(path: str) -> List[str]:
    """One host (or hostlist) per line; `#` starts a comment; blank lines ignored. An Ansible
    inventory (INI sections, `host key=value`, YAML `all:`) is refused, saying so."""
    lines = inputs.read_text(path, "hosts file", "give a text file with one host or hostlist per line",
                             limit=4 * 1024 * 1024).splitlines()
    specs = []
    for line in lines:
        line = line.split("#", 1)[0].rstrip()
        if ANSIBLE_LINE.match(line):
            raise _ansible_inventory(path, [line])
        if line.strip():
            specs.extend(line.split())
    return specs
