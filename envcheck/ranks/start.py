"""How the harness starts a host's launcher and stops it. Over SSH (any Remote): one command that
carries the node scripts as JSON on its stdin, writes them into the run's own directory and
becomes the launcher, which removes the directory when it ends; so nothing is left on a node.
`Starter` is the seam: a second way to start ranks (srun inside an allocation) is a second
class with the same two methods.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from envcheck.ranks.preflight import python_word
from envcheck.remote import Remote, RunResult

NODE_DIR = Path(__file__).resolve().parent.parent / "node"


def node_files(*names: str) -> Dict[str, str]:
    """The node scripts a run ships into its directory, by file name."""
    return {name: (NODE_DIR / name).read_text() for name in names}


def boot(entry: str) -> str:
    """Python code that runs on the node with the node scripts as JSON on stdin: writes them to
    the run's own directory (--dir), then becomes `entry` (exec), which removes the directory
    when it ends."""
    # os.mkdir, not makedirs: the run's directory only, never a parent TMPDIR named (run_dir)
    return ("import sys,json,os;a=sys.argv;d=a[a.index('--dir')+1];os.mkdir(d,0o700);"
            "p=json.load(sys.stdin);"
            "[(lambda f:(f.write(v),f.close()))(open(os.path.join(d,k),'w')) for k,v in p.items()];"
            "os.execv(sys.executable,[sys.executable,os.path.join(d,%r)]+a[1:])" % entry)


def run_dir(run_id: str, index: int) -> str:
    """The run's directory on the node, as shell text to put in double quotes: under $TMPDIR when
    that is an existing directory, else under /tmp (as Python's tempfile falls back). A TMPDIR
    that names nothing (`TMPDIR=/nonexistent envcheck nccl-test`) is never created."""
    return f'$([ -d "${{TMPDIR:-}}" ] && printf %s "$TMPDIR" || printf /tmp)/{run_id}-{index}'


def launcher_cmd(python: Optional[str], entry: str, run_id: str, index: int,
                 args: Sequence[Any]) -> str:
    """`entry launch --dir DIR ARGS…` under the node interpreter, DIR the run's own directory."""
    quoted = " ".join(shlex.quote(str(a)) for a in ["launch", "--dir", "DIR", *args])
    # the directory expands on the node ($TMPDIR there), so it goes in unquoted-but-safe
    quoted = quoted.replace(" DIR", f' "{run_dir(run_id, index)}"', 1)
    return f"{python_word(python)} -c {shlex.quote(boot(entry))} {quoted}"


def kill_cmd(run_id: str, index: int, wait_s: float = 5.0) -> str:
    """Stop one host's launcher and its ranks: TERM to the launcher's process group (it cleans
    up), then KILL for anything left, then the run directory."""
    d = run_dir(run_id, index)
    # wait_s for the launcher to stop its ranks and print its last records
    return (f'd="{d}"; p=$(cat "$d/launcher.pid" 2>/dev/null); '
            f'if [ -n "$p" ]; then kill -TERM -- -"$p" 2>/dev/null; i=0; '
            f'while kill -0 "$p" 2>/dev/null && [ $i -lt {int(wait_s * 10)} ]; do sleep 0.1; i=$((i+1)); done; '
            f'kill -KILL -- -"$p" 2>/dev/null; fi; rm -rf "$d"; true')


class Starter:
    """Starts host i's launcher (`entry`, shipped with `files`) and stops it, over SSH."""

    def __init__(self, remotes: Sequence[Remote], python: Optional[str], entry: str,
                 files: Mapping[str, str], run_id: str):
        self.remotes, self.python, self.entry, self.run_id = list(remotes), python, entry, run_id
        self.payload = json.dumps(dict(files))

    def start(self, i: int, args: Sequence[Any], env: Mapping[str, str], timeout: float,
              on_stdout: Optional[Callable[[bytes], None]] = None) -> RunResult:
        return self.remotes[i].run(launcher_cmd(self.python, self.entry, self.run_id, i, args),
                                   stdin=self.payload, env=dict(env), timeout=timeout,
                                   on_stdout=on_stdout)

    def stop(self, i: int, wait_s: float, timeout: float) -> RunResult:
        return self.remotes[i].run(kill_cmd(self.run_id, i, wait_s), timeout=timeout)
