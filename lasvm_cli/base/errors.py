"""Errors raised by library code. Only the CLI layer turns them into messages and exit codes.

Like LIBSVM's ``svm_check_parameter`` the library never exits; ``cli/report.py`` maps these
exceptions to LIBSVM's messages and exit status 1.
"""


class LasvmError(Exception):
    """Base class; ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class InputFormatError(LasvmError):
    """A data file that cannot be read: ``FILE:LINE: reason (token 'X')``, or ``FILE: reason``
    when the fault is not on one line (a truncated compressed file, no data at all)."""

    def __init__(self, path, line, reason, token=None):
        self.path = str(path)
        self.line = line
        self.reason = reason
        self.token = token
        msg = f"{self.path}: {reason}" if line is None else f"{self.path}:{line}: {reason}"
        if token is not None:
            msg += f" (token '{token}')"
        super().__init__(msg)


class ModelFormatError(LasvmError):
    """A model file that cannot be read (unknown key, bad number, truncated SV block)."""

    def __init__(self, path, reason, line=None):
        self.path = str(path)
        self.reason = reason
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class ReportedInterrupt(KeyboardInterrupt):
    """Ctrl-C whose message is already printed (--save-state: ``interrupted: state saved to
    ...``): the CLI exits with 130 without a second ``interrupted`` line."""


class ParameterError(LasvmError):
    """Invalid training or prediction parameters; message is LIBSVM's text (``C <= 0`` ...)."""


class OutputError(LasvmError, OSError):
    """An output file that cannot be written: ``can't write FILE: reason``.

    Also an OSError, so callers that catch OSError around a write keep working."""

    def __init__(self, path, reason, what=None):
        self.path = str(path)
        self.reason = reason
        self.what = what  # e.g. "--save-state file"
        LasvmError.__init__(self, str(self))

    def __str__(self):
        what = f"{self.what} " if self.what else ""
        return f"can't write {what}{self.path}: {self.reason}"
