"""One error family. The CLI turns each into one line on stderr and its exit code.

Exit codes (documented in README.md, the same for every command; envcheck.model.Outcome is the
one place a command's result becomes 0, 1 or 3):
  0    PASS or WARN: nothing found that breaks the stack
  1    FAIL: something definite is wrong (an error finding, a FAIL node, corrupt sums, a failed
       install or script; with --strict also a warning or a check skipped for lack of facts)
  2    usage: bad arguments or input (an unparsable version, a malformed matrix, a missing file)
  3    UNKNOWN: nothing definite is wrong, but something could not be checked (a host
       unreachable, auth failed, timed out, the probe crashed; a collective timed out, a rank lost)
  130  interrupted (Ctrl-C, SIGINT): whatever was started on the nodes has been stopped
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERRUPTED = 130


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


class RemoteError(EnvcheckError):
    """A host could not be reached or a remote command could not be run."""

    exit_code = EXIT_UNREACHABLE
