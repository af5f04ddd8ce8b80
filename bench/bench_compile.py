"""Compile time: a command from an empty numba cache, and ``lasvm compile``, per function.

A fresh install compiles every numba function a command needs on its first run. This script
runs one command (default ``svm-train -q heart_scale``) in a child process with an empty
``NUMBA_CACHE_DIR`` and reports:

* the child's wall time and CPU time (user + system; the main figure: on a shared machine
  the wall time is inflated by other jobs, and compilation is single-threaded, so the CPU
  time is close to the wall time the command would take on an idle machine);
* per compiled function (numba's ``numba:compile`` events, one per signature): inclusive and
  exclusive time, wall and CPU (the CPU time of the compiling thread), with a stack so that a
  callee compiled while its caller is typed counts in its own row only (exclusive);
* each function's phase split, CPU time, exclusive of the compiles nested in it: numba's type
  inference, numba's lowering (its LLVM IR, the wrappers), the IR parsed and LLVM's function
  passes, the callees' modules linked in, LLVM's module passes over the linked module (the
  function with everything it calls, optimised again), machine code ("codegen"), and the
  cache's save.

``--compile`` measures ``lasvm compile`` instead (its default groups, or ``--all``): wall time
and the CPU time of all its processes (no per-function table: the groups run in separate
processes). ``--repeat N`` runs each measurement N times (fresh cache each time).

Usage: ``python bench/bench_compile.py [--repeat N] [--json FILE] [--top K] [--compile [--all]]
[--njit-opts JSON]
[-- command argv...]`` (the default command is ``svm-train -q data/heart_scale <tmp>/model``;
``{tmp}`` in an argument is a temporary folder).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the per-function phases (CPU time, exclusive of nested compiles): numba's type inference,
# numba's lowering (its LLVM IR and wrappers), the IR parsed and LLVM's function passes, the
# callees' modules linked in, LLVM's module passes over the linked module, machine code, the
# cache's save
PHASES = ("typing", "lowering", "ir+fn_passes", "link", "mod_passes", "codegen", "cache_save")

# The child: a listener on numba's compile events, then the command in-process as its console
# script would run it, then the table as JSON to the file named by the first argument.
CHILD = r"""
import json, os, sys, time
from numba.core import event

out_path = sys.argv[1]
argv = sys.argv[2:]
rows = []
# one frame per open compile event or phase: [kind, data, cpu at start, wall at start, nested
# compiles' cpu, nested compiles' wall, nested phases' cpu]
stack = []
PHASES = ("typing", "lowering", "ir+fn_passes", "link", "mod_passes", "codegen", "cache_save")


def _push(kind, data):
    stack.append([kind, data, time.thread_time(), time.perf_counter(), 0.0, 0.0, 0.0])


def _pop():
    # (kind, data, cpu, wall, exclusive cpu, exclusive wall). A compile's time counts as a
    # child of every frame up to the compile enclosing it; a phase's time (less the compiles in
    # it) as a child of the phase enclosing it, if any (phases are exclusive of each other, a
    # compile's exclusive time holds its phases).
    kind, data, c0, w0, cc, cw, pc = stack.pop()
    cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
    if kind == "compile":
        for frame in reversed(stack):
            frame[4] += cpu
            frame[5] += wall
            if frame[0] == "compile":
                break
        return kind, data, cpu, wall, cpu - cc, wall - cw
    if stack and stack[-1][0] != "compile":
        stack[-1][6] += cpu - cc
    return kind, data, cpu, wall, cpu - cc - pc, wall - cw


def _owner():
    for frame in reversed(stack):
        if frame[0] == "compile":
            return frame[1]
    return None


class Timing(event.Listener):
    def on_start(self, ev):
        ev.data["phases"] = dict.fromkeys(PHASES, 0.0)
        _push("compile", ev.data)

    def on_end(self, ev):
        kind, data, cpu, wall, cpu_excl, wall_excl = _pop()
        disp = data["dispatcher"]
        rows.append({"name": f"{disp.py_func.__module__}.{disp.py_func.__qualname__}",
                     "args": str(data["args"]), "wall": wall, "cpu": cpu,
                     "wall_excl": wall_excl, "cpu_excl": cpu_excl,
                     "depth": sum(f[0] == "compile" for f in stack), **data["phases"]})


event.register("numba:compile", Timing())


def _timed(cls, attr, phase):
    fn = getattr(cls, attr)

    def timed(*a, **kw):
        _push(phase, None)
        try:
            return fn(*a, **kw)
        finally:
            _, _, _, _, cpu_excl, _ = _pop()
            owner = _owner()
            if owner is not None:
                owner["phases"][phase] += cpu_excl

    setattr(cls, attr, timed)


from numba.core import caching, codegen, typed_passes
_timed(typed_passes.BaseTypeInference, "run_pass", "typing")
_timed(typed_passes.BaseNativeLowering, "run_pass", "lowering")
_timed(codegen.CPUCodeLibrary, "add_ir_module", "ir+fn_passes")
_timed(codegen.CPUCodeLibrary, "finalize", "link")
_timed(codegen.CPUCodeLibrary, "_optimize_final_module", "mod_passes")
_timed(codegen.JITCodeLibrary, "_finalize_specific", "codegen")
_timed(caching.Cache, "save_overload", "cache_save")


def _inclusive(cls, attr, key):
    # a part that cuts across the phases (its IR, parsed, function passes): CPU time in
    # rows' "wrappers", not in their exclusive total
    fn = getattr(cls, attr)

    def timed(*a, **kw):
        c0 = time.thread_time()
        try:
            return fn(*a, **kw)
        finally:
            owner = _owner()
            if owner is not None:
                owner["phases"][key] = owner["phases"].get(key, 0.0) + time.thread_time() - c0

    setattr(cls, attr, timed)


from numba.core import cpu
_inclusive(cpu.CPUContext, "create_cpython_wrapper", "wrappers")
_inclusive(cpu.CPUContext, "create_cfunc_wrapper", "wrappers")

# --njit-opts: options added to every numba.njit of the package (what-if experiments only)
extra = json.loads(os.environ.get("BENCH_COMPILE_NJIT_OPTS") or "{}")
if extra:
    import numba
    _njit = numba.njit

    def njit(*a, **kw):
        return _njit(*a, **{**kw, **extra})

    numba.njit = njit

code = 0
try:
    from lasvm_cli.cli import main
    sys.argv = argv
    try:
        getattr(main, argv[0].replace("-", "_"))()
    except SystemExit as e:
        code = e.code or 0
finally:
    with open(out_path, "w") as f:
        json.dump({"rows": rows, "cpu_self": time.process_time()}, f)
sys.exit(code)
"""


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_measured(cmd, env):
    c0, w0 = child_cpu(), time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    wall, cpu = time.perf_counter() - w0, child_cpu() - c0
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))}: exit status {p.returncode}\n{p.stdout}")
    return wall, cpu, p.stdout


def base_env(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, LASVM_SERVER="0",
               LASVM_COMPILE_NOTICE="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def measure_command(argv):
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as tmp:
        cache = os.path.join(tmp, "numba-cache")
        os.mkdir(cache)
        out = os.path.join(tmp, "events.json")
        argv = [a.format(tmp=tmp) for a in argv]
        wall, cpu, _ = run_measured([sys.executable, "-c", CHILD, out, *argv], base_env(cache))
        with open(out) as f:
            data = json.load(f)
    return {"wall": wall, "cpu": cpu, **data}


def measure_compile(everything):
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as tmp:
        cache = os.path.join(tmp, "numba-cache")
        os.mkdir(cache)
        cmd = [sys.executable, "-c", "from lasvm_cli.cli.main import lasvm; lasvm()", "compile"]
        if everything:
            cmd.append("--all")
        wall, cpu, output = run_measured(cmd, base_env(cache))
    return {"wall": wall, "cpu": cpu, "output": output}


def table(rows, top):
    """Per function (summed over its signatures), by exclusive CPU time."""
    agg = {}
    for r in rows:
        a = agg.setdefault(r["name"], {"sigs": 0, "cpu_excl": 0.0, "cpu": 0.0, "wall_excl": 0.0,
                                       **dict.fromkeys(PHASES, 0.0)})
        a["sigs"] += 1
        for k in a:
            if k != "sigs":
                a[k] += r.get(k, 0.0)
    order = sorted(agg.items(), key=lambda kv: -kv[1]["cpu_excl"])
    for a in agg.values():
        a["other"] = a["cpu_excl"] - sum(a[p] for p in PHASES)
    cols = ("typing", "lowering", "ir+fn_passes", "link", "mod_passes", "codegen", "cache_save",
            "other")
    lines = ["| function | sigs | excl. CPU s | incl. CPU s | " + " | ".join(cols) + " |",
             "|---|--:|--:|--:|" + "--:|" * len(cols)]
    for name, a in order[:top]:
        short = name.replace("lasvm_cli.", "")
        lines.append(f"| {short} | {a['sigs']} | {a['cpu_excl']:.2f} | {a['cpu']:.2f} | "
                     + " | ".join(f"{a[c]:.2f}" for c in cols) + " |")
    tot = {k: sum(a[k] for a in agg.values()) for k in ("cpu_excl", *cols)}
    lines.append(f"| **all {len(agg)} functions** | {len(rows)} | {tot['cpu_excl']:.2f} | | "
                 + " | ".join(f"{tot[c]:.2f}" for c in cols) + " |")
    return "\n".join(lines)


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--json", help="write every run's figures and rows to this file")
    ap.add_argument("--compile", action="store_true", help="measure `lasvm compile`")
    ap.add_argument("--njit-opts", help="JSON options added to every numba.njit of the package "
                    "(a what-if experiment: e.g. '{\"no_cfunc_wrapper\": true}')")
    ap.add_argument("--all", action="store_true", help="with --compile: every group")
    ap.add_argument("command", nargs="*")
    args = ap.parse_args()
    if args.njit_opts:
        os.environ["BENCH_COMPILE_NJIT_OPTS"] = args.njit_opts
    runs = []
    if args.compile:
        for i in range(args.repeat):
            r = measure_compile(args.all)
            r["load"] = load()
            runs.append(r)
            print(f"lasvm compile{' --all' if args.all else ''}: wall {r['wall']:.1f} s, "
                  f"CPU {r['cpu']:.1f} s (load {r['load']})", flush=True)
    else:
        argv = args.command
        if not argv:
            argv = ["svm-train", "-q", str(REPO / "data" / "heart_scale"), "{tmp}/model"]
        for i in range(args.repeat):
            r = measure_command(argv)
            r["load"] = load()
            runs.append(r)
            compile_cpu = sum(x["cpu_excl"] for x in r["rows"])
            print(f"{' '.join(argv)}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, of which "
                  f"compiling {compile_cpu:.1f} s CPU ({len(r['rows'])} signatures; load "
                  f"{r['load']})", flush=True)
        print(table(runs[-1]["rows"], args.top))
    if not args.compile:
        wrappers = sum(r.get("wrappers", 0.0) for r in runs[-1]["rows"])
        print(f"CPython and C wrappers (their IR, parsed, function passes; inside the phases "
              f"above): {wrappers:.2f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
