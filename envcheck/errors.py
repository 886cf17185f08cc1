"""One error family. The CLI turns each into one line on stderr and its exit code.

The exit codes, the same for every command: EXIT_CODES below (README.md's table is generated
from it).
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERRUPTED = 130

# code -> (name, what it means); README.md's "Exit codes" table is generated from this
EXIT_CODES = {
    EXIT_OK: ("clean", "nothing found that breaks the stack (doctor: PASS, or WARN without `--strict`)"),
    EXIT_FINDINGS: ("findings", "at least one error finding; `nccl-test`: data corruption (`#wrong` > 0) "
                    "or busbw below `--min-busbw`; doctor: FAIL (or WARN with `--strict`); `launch`: the "
                    "script failed (its first failing rank exited non-zero)"),
    EXIT_USAGE: ("usage", "a bad option, an unparsable version, a missing or malformed file or matrix — "
                 "one line on stderr naming the thing and the fix"),
    EXIT_UNREACHABLE: ("unknown", "a host could not be checked (unreachable, auth failure, changed host "
                       "key, timeout, probe crash), or a collective timed out / lost a rank — the host "
                       "and the reason are named"),
    EXIT_INTERRUPTED: ("interrupted", "Ctrl-C; `launch` stops every rank on every host first"),
}


class EnvcheckError(Exception):
    """Base of every error envcheck raises on purpose: a message naming the thing, and a fix."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, fix: str | None = None):
        super().__init__(message)
        self.message = message
        self.fix = fix

    def one_line(self) -> str:
        if self.fix:
            return f"{self.message} (fix: {self.fix})"
        return self.message


class UsageError(EnvcheckError):
    """Bad input from the user: an argument, a file, a version string."""


class VersionError(UsageError):
    """A version string that cannot be parsed."""


class MatrixError(UsageError):
    """compat_matrix.yaml is malformed or inconsistent; message carries the key path."""

    def __init__(self, path: str, reason: str, file: str | None = None):
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{path}: {reason}", "correct the matrix file, then run `envcheck matrix validate FILE`")
        self.path = path
        self.reason = reason


class OutputError(EnvcheckError):
    """What envcheck was asked to write could not be written (stdout on a full disk or closed, a
    report file): one line and a non-zero exit, never a silent success."""


class RemoteError(EnvcheckError):
    """A host could not be reached or a remote command could not be run."""

    exit_code = EXIT_UNREACHABLE
