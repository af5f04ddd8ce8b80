"""``lasvm compile``: compile the numerical code ahead of the first real command.

A fresh install compiles numba's functions on the first run of each command (half a minute or
more for svm-train), then loads them from the cache. This command does that compilation up
front, in parallel processes: each runs a group of commands on tiny generated data, in-process
(no warm server) and quietly, so that the cache afterwards holds what those commands need.
``make``'s installation runs it; after a ``pip install``, run it once (optional: without it
the first command of each kind compiles what it uses).

Groups (``--all`` adds the rest): train (svm-train's default C-SVC path, -v), predict and scale
(svm-predict on a model of the right form, svm-scale), probability (-b 1 training and
prediction); and with --all: the other working-set selections, the solvers' own groups,
named on their rows (``Solver.compile``: the LASVM family, the tracking algorithms, the other
SVM types -s 1..4, the all-in-one machines), and --stream for each row's streams.
"""

import os
import subprocess
import sys
import tempfile
import time

# group -> commands (argv with {d} = the data folder); every command runs in-process, quietly
GROUPS = {
    "train": [["svm-train", "-q", "{d}/two.svm", "{d}/two.model"],
              ["svm-train", "-q", "-v", "2", "{d}/three.svm"]],
    "predict": [["svm-predict", "-q", "{d}/two.svm", "{d}/given.model", "{d}/out"],
                ["svm-scale", "-s", "{d}/range", "{d}/two.svm"]],
    "probability": [["svm-train", "-q", "-b", "1", "{d}/three.svm", "{d}/prob.model"],
                    ["svm-predict", "-q", "-b", "1", "{d}/three.svm", "{d}/prob.model",
                     "{d}/prob.out"]],
}


def _more_groups():
    """--all's groups: the working-set selections besides the default, and each solver row's
    ``compile`` group, one command per solver entry (rows that share their module and
    functions share their compiled code) and multi-class scheme."""
    from ..solvers import SMO_OPTIONS, SOLVERS, command_words

    wss = next(o for o in SMO_OPTIONS if o.field == "wss")
    groups = {"selections": [["svm-train", "-q", "--wss", w, "{d}/two.svm", f"{{d}}/{w}.model"]
                             for w in wss.choices if w != wss.default]}
    seen = set()
    for key, row in SOLVERS.items():
        if not row.compile or (row.module, row.function, row.start) in seen:
            continue
        seen.add((row.module, row.function, row.start))
        data = "three" if row.kind == "all_in_one" else "two"
        groups.setdefault(row.compile, []).extend(
            ["svm-train", "-q", *words, f"{{d}}/{data}.svm", f"{{d}}/{key}{i}.model"]
            for i, words in enumerate(command_words(key)))
    groups["streams"] = _stream_commands()
    return groups


def _stream_commands():
    """One --stream command for each function of the rows' ``streams`` and scheme (the
    streams' block reader and feature store are compiled code of their own); -g as the
    in-memory default would be on the 4 features (a stream needs it given)."""
    from ..solvers import SOLVERS

    seen, argvs = set(), []
    for key, row in SOLVERS.items():
        for scheme, target in row.streams:
            if (scheme, target) in seen:
                continue
            seen.add((scheme, target))
            words = () if scheme == "ovo" else ("--multiclass", scheme)
            data = "two" if scheme == "ovo" else "three"
            argvs.append(["svm-train", "-q", "--stream", "-g", "0.25", *words, "--solver", key,
                          f"{{d}}/{data}.svm", f"{{d}}/stream-{key}-{scheme}.model"])
    return argvs


MORE_GROUPS = _more_groups()

# A group that starts only once another has finished: what they share (the parser, the kernels,
# the row cache, the SMO loop: most of the compile time) is then loaded from the cache the first
# one filled instead of being compiled again beside it in a second process, which doubled the
# CPU time of the part they share and, on two cores, delayed the groups running beside them.
# The predict group shares less (the parser and kernel rows) and runs beside train.
AFTER = {name: "train" for name in ("probability", *MORE_GROUPS)}

# a C-SVC model in LIBSVM's format, so that the predict group need not train
GIVEN_MODEL = """svm_type c_svc
kernel_type rbf
gamma 0.5
nr_class 2
total_sv 2
rho 0.1
label 1 -1
nr_sv 1 1
SV
1 1:0.5 2:-0.25 3:1
-1 1:-0.5 3:0.75 4:1
"""


def _write_data(d):
    """Small sparse problems: two classes and three classes (30 rows each, 4 features)."""
    rows = []
    for i in range(30):
        feats = " ".join(f"{j + 1}:{((i * 7 + j * 3) % 11 - 5) / 5:g}" for j in range(4)
                         if (i + j) % 5)
        rows.append((i, feats))
    with open(os.path.join(d, "two.svm"), "w") as f:
        f.writelines(f"{1 if i % 2 else -1} {x}\n" for i, x in rows)
    with open(os.path.join(d, "three.svm"), "w") as f:
        f.writelines(f"{i % 3 + 1} {x}\n" for i, x in rows)
    with open(os.path.join(d, "given.model"), "w") as f:
        f.write(GIVEN_MODEL)


# a group's process: its commands one after the other, in-process, as their console scripts
# would run them (code passed to ``python -c``: this module never imports cli/main.py)
# The kernel rows' paths that tiny data never take (kernels.compile_rows_for) are compiled too.
GROUP_RUNNER = """
import sys
from lasvm_cli.base.jit_cache import compile_on_demand
from lasvm_cli.cli import main
from lasvm_cli.cli.precompile import commands
from lasvm_cli.numerics.kernels import ROW_PATHS_ON_DEMAND
compile_on_demand(*ROW_PATHS_ON_DEMAND)
for argv in commands(sys.argv[1], sys.argv[2]):
    sys.argv = argv
    try:
        main.console_script(argv[0].replace("-", "_"), argv[1:])
    except SystemExit as e:
        if e.code not in (0, None):
            raise SystemExit(f"{' '.join(argv)}: exit status {e.code}")
"""


def commands(name, d):
    return [[a.format(d=d) for a in argv] for argv in {**GROUPS, **MORE_GROUPS}[name]]


def compile_all(jobs=None, everything=False, out=sys.stderr):
    """Run the groups in at most ``jobs`` processes (default: one per core); returns the
    exit status (0, or 1 when a group failed, with its output)."""
    from ..base import numba_internals

    try:  # the groups' own notice is off
        numba_internals.notice("lasvm compile", stream=out, now=True)
    except numba_internals.UnavailableInternal as e:
        out.write(f"lasvm compile: {e}\n")
        return 1
    names = list(GROUPS) + (list(MORE_GROUPS) if everything else [])
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    env = dict(os.environ, LASVM_SERVER="0", LASVM_COMPILE_NOTICE="0")
    t0 = time.monotonic()
    out.write(f"lasvm compile: {len(names)} groups ({', '.join(names)}) in {jobs} "
              f"process{'es' if jobs > 1 else ''}\n")
    out.flush()
    failed = []
    with tempfile.TemporaryDirectory(prefix="lasvm-compile-") as d:
        _write_data(d)
        pending = list(names)
        running = {}  # group -> its process
        finished = set()
        while pending or running:
            while len(running) < jobs:
                ready = [n for n in pending if AFTER.get(n) in (None, *finished)]
                if not ready:
                    break
                name = ready[0]
                pending.remove(name)
                running[name] = subprocess.Popen(
                    [sys.executable, "-c", GROUP_RUNNER, name, d], env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            done = [n for n, p in running.items() if p.poll() is not None]
            if not done:
                time.sleep(0.05)
                continue
            for name in done:
                p = running.pop(name)
                output = p.communicate()[0]
                finished.add(name)
                if p.returncode != 0:
                    failed.append(name)
                    out.write(f"lasvm compile: group {name} failed:\n{output}")
                else:
                    out.write(f"lasvm compile: {name} done ({time.monotonic() - t0:.0f} s)\n")
                out.flush()
    if failed:
        return 1
    out.write(f"lasvm compile: finished in {time.monotonic() - t0:.0f} s; later commands load "
              "the compiled code from numba's cache\n")
    return 0
