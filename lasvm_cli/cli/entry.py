"""The console scripts (pyproject's [project.scripts]): each hands its command to the warm
server (cli/handoff.py) and otherwise runs it in this process (cli/main.py), starting a server
for the commands that follow. Standard library only until the command itself runs."""

import os
import sys


def _one_blas_thread():
    """OpenBLAS's worker threads spin for a while after numpy loads it (0.2-0.25 s of CPU per
    command on two cores, measured on heart_scale), taking that core from the other jobs of a
    grid, and no command here makes a BLAS call large enough to gain from threads. The
    user's setting wins. Set before numpy loads, and before the warm server's key is taken from the
    environment, so the servers started from here share it."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _command(prog, name):
    try:
        _hand_off_or_run(prog, name)
    except KeyboardInterrupt:
        # Ctrl-C before the command's own guard (cli/report.py) is in place: while a server
        # is asked, or the command's modules load; the same end as a Ctrl-C in the command
        sys.stderr.write("interrupted\n")
        sys.exit(130)


def _hand_off_or_run(prog, name):
    _one_blas_thread()
    from . import handoff

    args = sys.argv[1:]
    # about the servers, or downloads (network-bound, and the client's environment decides
    # the folders): never through one
    if prog == "lasvm" and args[:1] in (["server"], ["data"]):
        from . import main

        return main.console_script(name, args)
    code = handoff.run_on_server(prog, args)
    if code is not None:
        sys.exit(code)
    if handoff.required():
        sys.stderr.write(f"{prog}: no warm server took the command (LASVM_SERVER=require)\n")
        sys.exit(1)
    if args and "--help" not in args:  # a real command, probably not the last one
        import atexit

        atexit.register(handoff.start_server)
    from . import main

    main.console_script(name, args)


def svm_train():
    _command("svm-train", "svm_train")


def svm_predict():
    _command("svm-predict", "svm_predict")


def svm_scale():
    _command("svm-scale", "svm_scale")


def lasvm():
    _command("lasvm", "lasvm")
