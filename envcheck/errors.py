"""One error family. The CLI turns each into one line on stderr and its exit code.

The exit codes, the same for every command: EXIT_CODES below (README.md's table is generated
from it); envcheck.model.Outcome is the one place a command's result becomes 0, 1 or 3.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERRUPTED = 130

# code -> (name, what it means); README.md's "Exit codes" table is generated from this
EXIT_CODES = {
    EXIT_OK: ("PASS or WARN", "nothing found that breaks the stack (warnings, and checks skipped for lack of "
              "facts, fail only with `--strict`)"),
    EXIT_FINDINGS: ("FAIL", "something definite is wrong: an error finding, a FAIL node, `nccl-test`'s data "
                    "corruption (`#wrong` > 0) or busbw below `--min-busbw`, a failed install or step, "
                    "`launch`'s script failing (its first failing rank exited non-zero); with `--strict` "
                    "also a warning or a skipped check"),
    EXIT_USAGE: ("usage", "a bad option, an unparsable version, a missing or malformed file or matrix — "
                 "one line on stderr naming the thing and the fix"),
    EXIT_UNREACHABLE: ("UNKNOWN", "nothing definite is wrong, but something could not be checked: a host "
                       "unreachable (auth failure, changed host key, timeout, probe crash), a collective "
                       "timed out or lost a rank — the host and the reason are named; a FAIL elsewhere "
                       "outranks it"),
    EXIT_INTERRUPTED: ("interrupted", "Ctrl-C; whatever was started on the nodes is stopped first "
                       "(`launch` stops every rank on every host)"),
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
