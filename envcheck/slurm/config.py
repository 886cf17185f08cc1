"""`envcheck slurm-check --print-config`: what a site adds to run the hook, as one shell script
(run it on every node, as root) whose comments carry the slurm.conf lines.

HealthCheckProgram, Prolog and Epilog run with almost no environment (a HealthCheckProgram gets
only SLURMD_NODENAME: no PATH, no SLURM_CONF) and cannot take arguments, so the wrapper names
envcheck's interpreter, scontrol and the options by absolute path and picks its mode from
SLURM_SCRIPT_CONTEXT (prolog_slurmd / epilog_slurmd; unset for a health check).
"""
from __future__ import annotations

import re
import shlex
import shutil
from typing import List, Optional, Sequence

from envcheck.errors import UsageError

MODES = ("healthcheck", "prolog", "epilog")
DEFAULT_WRAPPER = "/usr/local/sbin/envcheck-slurm-hook"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, flag: str) -> float:
    """'3600', '90m', '24h', '7d' -> seconds."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smhd]?)\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"{flag} {str(text)[:40]!r} is not a duration", f"write it as 3600, 90m, 24h or 7d, e.g. {flag} 24h")
    return float(m.group(1)) * _UNITS[m.group(2)]


def wrapper_text(python: str, hook_args: Sequence[str], scontrol: Optional[str] = None,
                 slurm_conf: Optional[str] = None) -> str:
    """The wrapper script Slurm runs (no arguments, almost no environment)."""
    scontrol = scontrol or shutil.which("scontrol") or "/usr/bin/scontrol"
    args = " ".join(shlex.quote(a) for a in ["--scontrol", scontrol, *hook_args])
    conf = (f"SLURM_CONF={shlex.quote(slurm_conf)}\nexport SLURM_CONF\n") if slurm_conf else ""
    return (
        "#!/bin/sh\n"
        "# envcheck's Slurm hook (written by `envcheck slurm-check --print-config`). Slurm runs it\n"
        "# with almost no environment and no arguments: everything is named by absolute path, and\n"
        "# the mode comes from SLURM_SCRIPT_CONTEXT (unset for a HealthCheckProgram).\n"
        f"PATH={DEFAULT_PATH}\nexport PATH\n{conf}"
        'case "${SLURM_SCRIPT_CONTEXT:-}" in\n'
        "  prolog_slurmd) mode=prolog ;;\n"
        "  epilog_slurmd) mode=epilog ;;\n"
        "  *) mode=healthcheck ;;\n"
        "esac\n"
        f'exec {shlex.quote(python)} -m envcheck slurm-check --mode "$mode" {args}\n')


def print_config(python: str, hook_args: Sequence[str], wrapper: str = DEFAULT_WRAPPER,
                 interval: int = 300, scontrol: Optional[str] = None, slurm_conf: Optional[str] = None) -> str:
    """A shell script that installs the wrapper, with the slurm.conf lines in its comments."""
    body = wrapper_text(python, hook_args, scontrol, slurm_conf)
    w = shlex.quote(wrapper)
    lines: List[str] = [
        "#!/bin/sh",
        "# envcheck on Slurm (docs/slurm.md). Run this script as root on every node: it installs the",
        f"# hook {wrapper}. Then add to slurm.conf (everywhere) and run `scontrol reconfigure`:",
        "#",
        f"#   HealthCheckProgram={wrapper}",
        f"#   HealthCheckInterval={interval}",
        "#   HealthCheckNodeState=ANY",
        "#",
        "# and, to check every node before and after each job (a failing Prolog drains the node with",
        "# 'Prolog error' and requeues the job; the next health check puts envcheck's reason in its",
        "# place). A site Prolog/Epilog script can call the hook itself instead:",
        "#",
        f"#   Prolog={wrapper}",
        f"#   Epilog={wrapper}",
        "#",
        "# envcheck drains with the reason 'envcheck: <code>: <summary>', never touches a reason it did",
        "# not write, and resumes only the nodes it drained.",
        "set -e",
        f"mkdir -p \"$(dirname {w})\"",
        f"cat > {w}.tmp <<'ENVCHECK_HOOK'",
        body.rstrip("\n"),
        "ENVCHECK_HOOK",
        f"chmod 755 {w}.tmp",
        f"mv -f {w}.tmp {w}",
        f"echo \"installed {wrapper}\"",
    ]
    return "\n".join(lines) + "\n"
