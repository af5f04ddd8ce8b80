"""glibc's ``rand()``, so cross-validation folds and probability folds match LIBSVM's.

LIBSVM's svm-train never calls ``srand``, so on glibc its folds come from ``rand()`` seeded
with 1, and its cross-validation accuracy repeats from run to run. Using
the same generator here makes ``-v`` and ``-b 1`` comparable with LIBSVM number for number;
``--seed`` seeds it as ``srand(seed)`` would.

glibc's default generator (TYPE_3): an additive lagged Fibonacci generator
r[i] = r[i-3] + r[i-31] (mod 2^32) over a table seeded by a Park-Miller LCG, the first 310
outputs discarded, each result shifted right by one bit.
"""


def glibc_table(seed):
    """The 31 words srand(seed) puts in glibc's TYPE_3 table (Park-Miller LCG, as unsigned
    32-bit words). GlibcRand runs the generator in Python (folds); the online solvers run the
    same table in compiled code (qp/online_core.py)."""
    seed = int(seed) & 0xFFFFFFFF
    if seed == 0:
        seed = 1
    r = [seed if seed < 2**31 else seed - 2**32]
    for i in range(1, 31):
        hi, lo = divmod(r[i - 1], 127773) if r[i - 1] >= 0 else _cdivmod(r[i - 1], 127773)
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r.append(word)
    return [x & 0xFFFFFFFF for x in r]


class GlibcRand:
    def __init__(self, seed=1):
        r = glibc_table(seed)
        self._r = r + r[:3]
        for _ in range(310):
            self._next()

    def _next(self):
        r = self._r
        value = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(value)
        if len(r) > 64:
            del r[:-34]
        return value

    def rand(self):
        """Next value in [0, 2^31 - 1], exactly as glibc's rand()."""
        return self._next() >> 1


def _cdivmod(a, b):
    """C's truncating division for a negative dividend."""
    q = -((-a) // b)
    return q, a - q * b
