"""The summary numbers svm-predict and svm-train -v print, computed and formatted as LIBSVM's C
does (sums in file order, IEEE division, printf's %g with glibc's -nan)."""

import math


def cfmt_g(x):
    """C's printf("%g") (glibc prints 0.0/0.0 as -nan)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return "%g" % x


def cdiv(a, b):
    """IEEE division as C does it (x/0 is inf or -nan instead of an exception)."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return -math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def summary(pred, target):
    """(correct, total, error, sump, sumt, sumpp, sumtt, sumpt), summed in file order as C."""
    correct = 0
    error = sump = sumt = sumpp = sumtt = sumpt = 0.0
    for v, t in zip(pred.tolist(), target.tolist()):
        if v == t:
            correct += 1
        error += (v - t) * (v - t)
        sump += v
        sumt += t
        sumpp += v * v
        sumtt += t * t
        sumpt += v * t
    return correct, len(pred), error, sump, sumt, sumpp, sumtt, sumpt


def regression_measures(pred, target):
    """(mean squared error, squared correlation coefficient) of predicted values, as LIBSVM's
    svm-predict and svm-train -v compute them."""
    _, total, error, sump, sumt, sumpp, sumtt, sumpt = summary(pred, target)
    num = (total * sumpt - sump * sumt) * (total * sumpt - sump * sumt)
    den = (total * sumpp - sump * sump) * (total * sumtt - sumt * sumt)
    return cdiv(error, total), cdiv(num, den)
