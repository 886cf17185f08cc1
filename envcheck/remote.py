"""The transport interface every orchestration module (audit, install, allreduce, doctor) codes
against, the local implementation (no SSH: `envcheck audit` with no hosts), and bounded fan-out.

The SSH implementation lives in envcheck/hosts/, the only package that imports Fabric/paramiko.
Failures are data: run() never raises for a remote-side problem; it returns a RunResult whose
`error` says why the command could not run (unreachable, auth, host key, timeout).
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Sequence, TypeVar, Union

from envcheck.errors import RemoteError

DEFAULT_TIMEOUT = 60.0
OutputFn = Callable[[bytes], None]


@dataclass
class RunResult:
    host: str
    command: str
    exit_code: Optional[int]  # None when the command did not run to an exit
    stdout: str = ""
    stderr: str = ""
    error: Optional[str] = None  # why it could not run or finish: one line
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0

    def tail(self, lines: int = 20) -> str:
        text = (self.stderr or "") + ("\n" if self.stderr and self.stdout else "") + (self.stdout or "")
        return "\n".join(text.rstrip().splitlines()[-lines:])


class Remote:
    """One host we can run commands on. Subclasses: LocalRemote here, SSHRemote in hosts/ssh.py."""

    name: str = "?"
    is_local: bool = False

    def run(self, command: str, *, stdin: Union[str, bytes, None] = None,
            timeout: float = DEFAULT_TIMEOUT, env: Optional[Mapping[str, str]] = None,
            on_stdout: Optional[OutputFn] = None) -> RunResult:
        """Run `command` through the host's /bin/sh (non-interactive). `env` values are exported
        before it, quoted. Never raises for a remote-side failure: see RunResult.error.
        With `on_stdout`, stdout is handed over chunk by chunk as it arrives (a live stream, not
        kept in RunResult.stdout: a long run's output would otherwise all stay in memory)."""
        raise NotImplementedError

    def put(self, local_path: str, remote_path: str,
            progress: Optional[Callable[[int, int], None]] = None) -> None:
        """Copy a file to the host (SFTP over SSH; a copy locally). Raises RemoteError."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "Remote":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalRemote(Remote):
    """This machine, through subprocess. Used when a command is given no hosts."""

    is_local = True

    def __init__(self, name: str = "localhost"):
        self.name = name

    def run(self, command: str, *, stdin: Union[str, bytes, None] = None,
            timeout: float = DEFAULT_TIMEOUT, env: Optional[Mapping[str, str]] = None,
            on_stdout: Optional[OutputFn] = None) -> RunResult:
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        start = time.monotonic()
        # own process group so a timeout kills the whole tree, not only the shell
        proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                                start_new_session=True)
        if on_stdout is not None:
            return self._stream(proc, command, data, timeout, on_stdout, start)
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                # a grandchild that left the group (setsid, a daemon) still holds our pipes:
                # stop reading rather than wait for it
                for pipe in (proc.stdout, proc.stderr):
                    if pipe:
                        pipe.close()
                proc.wait()
                out, err = b"", b""
            return RunResult(self.name, command, None, _dec(out), _dec(err),
                             error=f"timed out after {timeout:g} s", duration=time.monotonic() - start)
        return RunResult(self.name, command, proc.returncode, _dec(out), _dec(err),
                         duration=time.monotonic() - start)

    def _stream(self, proc: subprocess.Popen, command: str, data: Optional[bytes],
                timeout: float, on_stdout: OutputFn, start: float) -> RunResult:
        """run() with stdout handed to on_stdout as it comes; the same timeout and group kill."""

        err: List[bytes] = []
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            kill_group(proc.pid)

        def feed() -> None:
            try:
                if data:
                    proc.stdin.write(data)
                proc.stdin.close()
            except OSError:
                pass

        dog = threading.Timer(timeout, expire)
        dog.daemon = True
        dog.start()
        threads = [threading.Thread(target=feed, daemon=True),
                   threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]
        for t in threads:
            t.start()
        fd = proc.stdout.fileno()
        try:
            while True:
                # a grandchild that left the group may hold the pipe open after the kill: stop
                # reading 5 s after the timeout instead of waiting for it
                if expired.is_set() and time.monotonic() - start > timeout + 5:
                    break
                ready, _, _ = select.select([fd], [], [], 0.5)
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                on_stdout(chunk)
        finally:
            dog.cancel()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
        threads[1].join(5)
        proc.stdout.close()
        res = RunResult(self.name, command, proc.returncode, "", _dec(b"".join(err)),
                        duration=time.monotonic() - start)
        if expired.is_set():
            res.exit_code, res.error = None, f"timed out after {timeout:g} s"
        return res

    def put(self, local_path: str, remote_path: str,
            progress: Optional[Callable[[int, int], None]] = None) -> None:

        try:
            tmp = remote_path + ".envcheck-part"
            shutil.copyfile(local_path, tmp)
            os.replace(tmp, remote_path)
        except OSError as e:
            raise RemoteError(f"{self.name}: cannot copy {local_path} to {remote_path}: {e.strerror}") from e
        if progress:
            size = os.path.getsize(remote_path)
            progress(size, size)


def json_objects(text: Optional[str]) -> List[Dict[str, Any]]:
    """Every line of a node command's stdout that is a JSON object, in order; other lines (a
    banner from a chatty shell rc file, log noise) are skipped."""
    out: List[Dict[str, Any]] = []
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def last_json_object(text: Optional[str]) -> Optional[Dict[str, Any]]:
    """The node script's answer: its last JSON-object line (anything printed before is ignored)."""
    objs = json_objects(text)
    return objs[-1] if objs else None


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _dec(b: Optional[bytes]) -> str:
    return (b or b"").decode("utf-8", "replace")


T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Outcome(Generic[T, R]):
    """One item's result of a fan-out: its value, or the exception that fn raised for it."""
    item: T
    value: Optional[R] = None
    error: Optional[BaseException] = None

    @property
    def ok(self) -> bool:
        return self.error is None


class GroupResult(List[Outcome]):
    """Every item's Outcome, in input order (like Fabric's GroupResult): callers ask for the
    values with a fallback for the failed items instead of sorting exceptions by hand."""

    def values_or(self, fallback: Callable[[Any, BaseException], Any]) -> List[Any]:
        """Each value, or fallback(item, error) for an item whose fn raised."""
        return [o.value if o.error is None else fallback(o.item, o.error) for o in self]

    @property
    def failed(self) -> List[Outcome]:
        return [o for o in self if o.error is not None]


def fan_out(items: Sequence[T], fn: Callable[[T], R], forks: int = 32,
            on_done: Optional[Callable[[Outcome], None]] = None) -> GroupResult:
    """Call fn on every item with at most `forks` running at once; outcomes in input order.

    An exception from fn becomes that item's Outcome.error (failures are data); the others go
    on. fn itself must bound its time (every Remote.run has a timeout), so this never waits
    forever. on_done(outcome) is called as each item finishes (progress lines).
    """
    results: Dict[int, Outcome] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            o: Outcome = Outcome(items[i], value=fn(items[i]))
        except BaseException as e:  # noqa: BLE001 - reported per item, never lost
            o = Outcome(items[i], error=e)
        with lock:
            results[i] = o
        if on_done:
            on_done(o)

    if not items:
        return GroupResult()
    with ThreadPoolExecutor(max_workers=max(1, min(forks, len(items)))) as pool:
        list(pool.map(one, range(len(items))))
    return GroupResult(results[i] for i in range(len(items)))
