"""lasvm plot: learning curves from svm-train --trace files (test error, or the dual
objective / the tracking solvers' gap when the trace has no test error, against time,
iterations, support vectors, kernel evaluations or examples seen)."""

from ..base.errors import ParameterError
from .report import UsageExit

USAGE = """\
Usage: lasvm plot [options] trace_file [trace_file ...] -o output.png
options:
-o file : output image (format from the extension: png, pdf, svg ...; required)
--x time|iterations|sv|kernel|examples : x axis (default time): training seconds, online
	iterations, support vectors, kernel evaluations or examples seen (t, tracking traces)
--y error|gap|dual|column : y axis: test error, the gap (tracking traces: normalised), the
	dual objective, or any numeric column of the traces by name (sv, kernel_evals, prbep
	...); default: test error when the trace has it, else the dual objective, else the gap
--label name : legend entry of the next trace file (repeatable; default: file name)
--title text : plot title
--logx : logarithmic x axis
--logy : logarithmic y axis
Needs matplotlib: pip install 'lasvm-cli[plot]'
"""


def parse_command_line(argv):
    opts = dict(out=None, x="time", y=None, labels=[], title=None, logx=False, logy=False,
                traces=[])
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--x", "--y", "--label", "--title") or \
                a.split("=", 1)[0] in ("--x", "--y", "--label", "--title"):
            if "=" in a and a.startswith("--"):
                name, value = a.split("=", 1)
            else:
                name = a
                i += 1
                if i >= len(argv):
                    raise UsageExit(USAGE, f"{a} needs a value")
                value = argv[i]
            if name == "-o":
                opts["out"] = value
            elif name == "--x":
                opts["x"] = value
            elif name == "--y":
                opts["y"] = value
            elif name == "--label":
                opts["labels"].append(value)
            else:
                opts["title"] = value
        elif a in ("--logx", "--logy"):
            opts[a[2:]] = True
        elif a.startswith("-") and a != "-":
            raise UsageExit(USAGE, f"Unknown option: {a}")
        else:
            opts["traces"].append(a)
        i += 1
    if not opts["traces"]:
        raise UsageExit(USAGE)
    if not opts["out"]:  # named, as click names a missing required option
        raise ParameterError("Error: Missing option '-o' (the output image, e.g. -o curve.png)."
                             "\nRun lasvm plot without arguments for its options.")
    return opts


def main(argv):
    from ..tools.plot import X_AXES, PlotError, plot_traces

    o = parse_command_line(argv)
    if o["x"] not in X_AXES:
        raise UsageExit(USAGE, f"unknown --x '{o['x']}' (choose from {', '.join(X_AXES)})")
    try:
        plot_traces(o["traces"], o["out"], x=o["x"], labels=o["labels"] or None,
                    title=o["title"], logx=o["logx"], y=o["y"], logy=o["logy"])
    except OSError as e:
        raise PlotError(f"can't write {o['out']}: {e.strerror}") from None
    return 0
