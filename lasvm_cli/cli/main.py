"""Entry points: ``svm-train``, ``svm-predict``, ``svm-scale`` and the ``lasvm`` group.

LIBSVM's option syntax (``-c 1``, ``-w-1 2``, ``-cost 5`` read as ``-c``, ``-h`` meaning
shrinking) is not click's, so each command hands its raw argv to a LIBSVM-style parser in its
own module (``cli/train.py`` ...), without click (``console_script``). Click supplies the
``lasvm`` group, ``--help`` and the group's own commands. Heavy modules (numpy, numba) are
imported inside the callbacks so ``--help`` is instant.
"""

import sys
import warnings

import click

from .report import run_guarded

_RAW = dict(ignore_unknown_options=True, help_option_names=["--help"])

# numba's thread pool takes a cross-process lock in /dev/shm when it starts; a sandbox that
# forbids writing there leaves a command of one process without it, which is harmless, and
# numba's four-line warning would be the command's only stderr (a served command, whose
# worker inherits the server's started pool, says nothing)
warnings.filterwarnings("ignore", message="Could not obtain multiprocessing lock")


def _run(module_name, args):
    import importlib

    def command(argv):  # imported under the guard: a Ctrl-C while numpy loads ends in 130
        return importlib.import_module(f"lasvm_cli.cli.{module_name}").main(argv)

    sys.exit(run_guarded(command, list(args)))


def console_script(name, args):
    """Run console script ``name`` (``svm_train`` ... ``lasvm``) on ``args``. A LIBSVM-style
    command goes straight to its own parser: click parses none of its options, and a Ctrl-C
    from the first instant is then the command's own (report.run_guarded), not click's
    "Aborted!". Click serves --help and the lasvm group's other commands."""
    command = globals()[name]
    if isinstance(command, click.Group) and args and args[0] in command.commands:
        subcommand = command.commands[args[0]]
        if isinstance(subcommand, _RawCommand) and "--help" not in args[1:]:
            _run(subcommand.module_name, args[1:])
    if isinstance(command, _RawCommand) and "--help" not in args:
        _run(command.module_name, args)
    command.main(list(args))


def _help(module_name):
    import importlib

    return importlib.import_module(f"lasvm_cli.cli.{module_name}").USAGE


class _RawCommand(click.Command):
    """A command whose ``--help`` prints its summary and then the command's own option list
    (the text the bare command prints), so no option is hidden behind click's summary."""

    def __init__(self, *args, module_name, **kwargs):
        super().__init__(*args, **kwargs)
        self.module_name = module_name

    def format_help(self, ctx, formatter):
        formatter.write(self.help.rstrip() + "\n\n")
        formatter.write(_help(self.module_name))


def _raw_command(name, module_name, summary):
    @click.command(name, cls=_RawCommand, module_name=module_name, context_settings=_RAW,
                   help=summary, add_help_option=True)
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def command(args):
        _run(module_name, args)

    return command


svm_train = _raw_command(
    "train", "train", "Train an SVM: svm-train [options] training_set_file [model_file]. "
    "Run without arguments for LIBSVM's option list."
)
svm_predict = _raw_command(
    "predict", "predict", "Predict with a model: svm-predict [options] test_file model_file "
    "output_file. Run without arguments for the option list."
)
svm_scale = _raw_command(
    "scale", "scale", "Scale a data file: svm-scale [options] data_filename. "
    "Run without arguments for the option list."
)
lasvm_plot = _raw_command(
    "plot", "plot", "Plot learning curves from svm-train --trace files: lasvm plot TRACE... "
    "-o OUT.png [--x time|iterations|sv|kernel|examples] [--y error|gap|dual]. Needs the "
    "'plot' extra (matplotlib)."
)
lasvm_grid = _raw_command(
    "grid", "grid", "Choose C and gamma by cross-validation, as LIBSVM's tools/grid.py: lasvm "
    "grid [grid_options] [svm_options] dataset. Cells run on Dask (the 'dask' extra) when it "
    "is installed."
)


@click.group(context_settings=dict(help_option_names=["--help"]))
@click.version_option(package_name="lasvm-cli")
def lasvm():
    """lasvm-cli: LIBSVM-compatible SVM tools with batch SMO and online LASVM solvers."""


lasvm.add_command(svm_train)
lasvm.add_command(svm_predict)
lasvm.add_command(svm_scale)
lasvm.add_command(lasvm_plot)
lasvm.add_command(lasvm_grid)


@lasvm.group("server")
def lasvm_server():
    """The warm server that runs commands without a fresh process's start-up (see the README:
    it is on unless LASVM_SERVER=0)."""


@lasvm_server.command("status")
def lasvm_server_status():
    """List this user's running warm servers: key, pid, commands running, idle time,
    installation."""
    from .server import status

    sys.exit(status())


@lasvm_server.command("stop")
def lasvm_server_stop():
    """Stop this user's warm servers: they accept no more commands at once and exit when their
    running commands end. The next command runs in-process and starts a new one."""
    from .server import stop

    sys.exit(stop())


@lasvm.command("compile")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="processes to compile in (default: one per core)")
@click.option("--all", "everything", is_flag=True,
              help="also the LASVM family, -s 1..4, the other selections, --multiclass llw|cs")
def lasvm_compile(jobs, everything):
    """Compile the numerical code now (once after an install or upgrade) instead of in the
    first command of each kind."""
    from .precompile import compile_all

    sys.exit(compile_all(jobs, everything))


@lasvm.group("data")
def lasvm_data():
    """The data sets of the benchmarks, the paper reproductions and the tests: list them,
    fetch them (from their public source, or a mirror) into the data folder ($LASVM_DATA, else
    ~/.cache/lasvm-cli/data), print where they are. See docs/data.md."""


@lasvm_data.command("list")
def lasvm_data_list():
    """Each set: its files, their size, whether they are in the data folder, its source."""
    from .data import list_sets

    sys.exit(list_sets())


@lasvm_data.command("fetch")
@click.argument("names", nargs=-1, metavar="NAME... | all")
@click.option("--mirror", envvar="LASVM_DATA_MIRROR", metavar="URL",
              help="a folder laid out like the data folder (URL/NAME/train.svm.xz ...): "
              "http(s)://, file:// or a path; default $LASVM_DATA_MIRROR. Without one, each "
              "set comes from its original public source.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="seconds without data before a download is abandoned")
@click.option("-q", "--quiet", is_flag=True, help="no status lines, no progress bar")
def lasvm_data_fetch(names, mirror, timeout, quiet):
    """Download the named sets into the data folder, each file checked against the sha256
    recorded in tools/datasets.py; sets already there and intact are not downloaded again.
    'all': every set (without a mirror, every set that has a public source)."""
    from .data import fetch

    sys.exit(fetch(names, mirror or None, timeout, quiet))


@lasvm_data.command("path")
@click.argument("name", required=False)
def lasvm_data_path(name):
    """Print the data folder (or a set's folder in it)."""
    from .data import show_path

    sys.exit(show_path(name))
