"""LIBSVM's kernel evaluations counted in LIBSVM itself, beside our SMO's and LASVM's (seed 000,
Figure 8's "kernel calls" column).

    python bench/libsvm_kernel_calls.py [--only Banana Reuters ...] [--rows N]
                                        [--method preload|callgrind]
                                        [--out results/paper-000-libsvm-kcalls]

libsvm-official's Python binding does not expose a count of kernel evaluations, and patching
LIBSVM to count them would make the count another program's. This script counts them in the
unmodified library (the libsvm-official wheel this environment imports, the tests' oracle),
in a child Python that runs ``svm_train``:

* ``--method preload`` (default, at native speed): LIBSVM's RBF kernel,
  ``Kernel::kernel_rbf``, calls libm's ``exp`` once per value, through the dynamic linker
  (the library imports ``exp@GLIBC_2.29``), and no other part of C-SVC training calls it. A
  ten-line shim, compiled here with the system's C compiler into a temporary folder and
  loaded with LD_PRELOAD, counts the calls of ``exp`` (atomically: LIBSVM computes rows with
  OpenMP threads) and forwards them to libm; the child reads the count just before and just
  after ``svm_train``.
* ``--method callgrind`` (the cross-check, 30-100 times slower): the child runs under
  ``valgrind --tool=callgrind`` and the count is the number of calls callgrind records to
  ``Kernel::kernel_rbf``, which LIBSVM calls through a member-function pointer
  (``kernel_function``), so it cannot be inlined.

Either way each count is one K(x_i, x_j): the rows of the kernel cache (``SVC_Q::get_Q``,
shrinking's shorter rows included) and the diagonal ``QD``. Our counters count the same
things: every K(x_i, x_j) a row computes, plus the diagonal (solvers/csvc.py's
``kernel_evals``).

For each problem of Figure 7 (bench/paper_000.py's set-up: RBF, its gamma and C, 40 MB cache,
tau = eps = 0.001, shrinking on): LIBSVM 3.37's count, its iterations and SVs (from its own
output), then in this process our SMO and our LASVM x1 with each finishing (``--finishing
smo`` and ``reprocess``), on the same rows in the same order. ``--rows N`` draws N training
rows (seed 0) for both sides alike. ``--only heart_scale`` is a small problem (LIBSVM's
example, gamma 0.5, C 10) on which both methods run in a few minutes, to check that they
count the same. Needs a C compiler (preload) or valgrind (callgrind).
Writes OUT/kernel-calls.md and .csv.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from paper_000 import CACHE_MB, PAPER_FIGURE8, TAU, kernel_sets, problem, take_rows  # noqa: E402
from paper_tables import Table  # noqa: E402

FUNCTION = "Kernel::kernel_rbf"

# The child: svm_train on rows saved as CSR arrays (numpy only: scipy's import under callgrind
# would cost a minute), LIBSVM's own output on stdout, then (preload) the count of exp calls
# made inside svm_train.
CHILD = r"""
import ctypes, os, sys
import numpy as np
from libsvm.svm import svm_problem, svm_parameter, libsvm

z = np.load(sys.argv[1])
indptr, indices, values, y = z["indptr"], z["indices"], z["values"], z["y"]
rows = [{int(j): float(v) for j, v in zip(indices[a:b], values[a:b])}
        for a, b in zip(indptr[:-1], indptr[1:])]
prob = svm_problem(list(y), rows)
param = svm_parameter(sys.argv[2])
shim = os.environ.get("KCALLS_SHIM")
count = ctypes.CDLL(shim).exp_calls if shim else None
if count is not None:
    count.restype = ctypes.c_ulonglong
    before = count()
model = libsvm.svm_train(prob, param)
if count is not None:
    print("exp calls in svm_train:", count() - before, flush=True)
"""

# The shim of --method preload: libm's exp, counted.
SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
static double (*real_exp)(double);
static unsigned long long calls;
double exp(double x)
{
    if (!real_exp)
        real_exp = (double (*)(double)) dlsym(RTLD_NEXT, "exp");
    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    return real_exp(x);
}
unsigned long long exp_calls(void) { return calls; }
"""


def build_shim(workdir):
    """The exp-counting shim, compiled into ``workdir``; its path."""
    src, lib = Path(workdir) / "expcount.c", Path(workdir) / "libexpcount.so"
    src.write_text(SHIM)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src), "-ldl"],
                   check=True)
    return lib


def count_calls(callgrind_file, function=FUNCTION):
    """Calls to ``function`` recorded in a callgrind output file: the ``calls=`` line that
    follows each ``cfn=`` naming it (callgrind compresses a name to its ``(id)`` after the
    first ``fn=`` or ``cfn=`` that spells it out)."""
    names = {}
    total = 0
    target = False
    for line in open(callgrind_file):
        if line.startswith(("fn=", "cfn=")):
            key, _, rest = line.rstrip("\n").partition("=")
            m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
            name = rest
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                name = names.get(m.group(1), "")
            target = key == "cfn" and name.startswith(function + "(")
        elif line.startswith("calls="):
            if target:
                total += int(line[6:].split()[0])
            target = False
    return total


def libsvm_count(tr, y, gamma, C, workdir, method):
    """(kernel evaluations, iterations, nSV, seconds) of LIBSVM 3.37's svm_train, counted by
    ``method`` (module docstring)."""
    data = Path(workdir) / "train.npz"
    np.savez(data, indptr=tr.indptr, indices=tr.indices, values=tr.values, y=y)
    out = Path(workdir) / "callgrind.out"
    opts = f"-c {C!r} -g {gamma!r} -m {CACHE_MB} -e {TAU}"
    cmd = [sys.executable, "-c", CHILD, str(data), opts]
    env = dict(os.environ)
    if method == "callgrind":
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd
    else:
        shim = build_shim(workdir)
        env.update(LD_PRELOAD=str(shim), KCALLS_SHIM=str(shim))
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    seconds = time.perf_counter() - t
    iterations = int(re.findall(r"#iter = (\d+)", p.stdout)[-1])
    n_sv = int(re.findall(r"nSV = (\d+)", p.stdout)[-1])
    if method == "callgrind":
        calls = count_calls(out)
    else:
        calls = int(re.findall(r"exp calls in svm_train: (\d+)", p.stdout)[-1])
    return calls, iterations, n_sv, seconds


def ours(tr, te, y, gamma, C, lasvm=True):
    """Our SMO and LASVM x1 (each finishing) on the same rows: name -> (kernel evals,
    iterations, nSV)."""
    from lasvm_cli.numerics.kernels import RBF, make_params
    from lasvm_cli.solvers.csvc import solve_binary
    from lasvm_cli.solvers.lasvm import solve_lasvm

    kd, _ = kernel_sets(tr, te)
    kp = make_params(RBF, gamma=gamma)
    r = solve_binary(kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB)
    rows = {"ours, SMO": (r.counters["kernel_evals"], r.n_iter, r.n_sv)}
    for finishing in ("smo", "reprocess") if lasvm else ():
        r = solve_lasvm(kd, kp, y, C, C, eps=TAU, cache_mb=CACHE_MB, finishing=finishing)
        rows[f"ours, LASVM x1, --finishing {finishing}"] = (r.counters["kernel_evals"],
                                                             r.n_iter, r.n_sv)
    return rows


def heart_scale():
    """LIBSVM's bundled example (data/heart_scale) as a small problem for the cross-check of
    the two methods: gamma 0.5, C 10, tested on itself."""
    from lasvm_cli.io.svmlight import read_svmlight

    d = read_svmlight(str(REPO / "data" / "heart_scale"))
    y = np.where(d.y > 0, 1.0, -1.0)
    return d, d, y, y, 0.5, 10.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=["Banana", "Waveform", "Reuters", "USPS"])
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--method", choices=("preload", "callgrind"), default="preload")
    ap.add_argument("--no-lasvm", action="store_true", help="our SMO only, not LASVM x1")
    ap.add_argument("--out", default=str(REPO / "results" / "paper-000-libsvm-kcalls"))
    args = ap.parse_args(argv)
    table = Table("kernel-calls", f"Kernel evaluations: LIBSVM 3.37 counted in LIBSVM "
                  f"({args.method}), ours by our counters", ["data set", "rows", "trainer", "kernel evaluations",
                                      "/ LIBSVM's", "iterations", "SV", "paper: kernel calls"],
                  f"Figure 7's problems and settings (40 MB cache, tau = eps = {TAU}); LIBSVM = "
                  f"libsvm-official in a child process, calls of {FUNCTION} "
                  f"({'counted by callgrind' if args.method == 'callgrind' else 'as calls of exp'}"
                  f").")
    for name in args.only:
        tr, te, y_tr, y_te, gamma, C = heart_scale() if name == "heart_scale" else problem(name)
        if args.rows and args.rows < len(y_tr):
            keep = np.sort(np.random.default_rng(0).choice(len(y_tr), args.rows, False))
            tr, y_tr = take_rows(tr, keep), y_tr[keep]
        with tempfile.TemporaryDirectory() as work:
            calls, iterations, n_sv, seconds = libsvm_count(tr, y_tr, gamma, C, work,
                                                            args.method)
        print(name, "LIBSVM", calls, iterations, n_sv, f"{seconds:.0f} s", file=sys.stderr,
              flush=True)
        paper_lib, paper_lasvm = (p[2] for p in PAPER_FIGURE8.get(name, ((0, 0, ""),) * 2))
        table.add(**{"data set": name, "rows": len(y_tr), "trainer": "LIBSVM 3.37",
                     "kernel evaluations": f"{calls:,}", "/ LIBSVM's": "1",
                     "iterations": f"{iterations:,}", "SV": n_sv,
                     "paper: kernel calls": paper_lib})
        for trainer, (evals, it, sv) in ours(tr, te, y_tr, gamma, C,
                                             not args.no_lasvm).items():
            print(name, trainer, evals, it, sv, file=sys.stderr, flush=True)
            table.add(**{"data set": name, "rows": len(y_tr), "trainer": trainer,
                         "kernel evaluations": f"{evals:,}", "/ LIBSVM's": f"{evals / calls:.3f}",
                         "iterations": f"{it:,}", "SV": sv,
                         "paper: kernel calls": paper_lasvm if "LASVM" in trainer else ""})
    table.write(Path(args.out))


if __name__ == "__main__":
    main()
