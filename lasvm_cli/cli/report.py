"""One place that maps library errors to messages and exit codes (after black's Report)."""

import sys

from ..errors import LasvmError


class UsageExit(Exception):
    """Raised by a parser to print its usage on stdout and exit 1, as LIBSVM's exit_with_help."""

    def __init__(self, usage, prefix=None):
        self.usage = usage
        self.prefix = prefix
        super().__init__(prefix or "usage")


def run_guarded(main, argv):
    """Run ``main(argv) -> int``; turn expected errors into LIBSVM-style output and status 1."""
    try:
        return main(argv) or 0
    except UsageExit as e:
        if e.prefix:
            sys.stderr.write(e.prefix.rstrip("\n") + "\n")
        sys.stdout.write(e.usage)
        sys.stdout.flush()
        return 1
    except LasvmError as e:
        sys.stdout.flush()
        sys.stderr.write(f"{e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 1
