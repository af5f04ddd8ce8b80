"""The SMO decomposition core: state, steps, working-set selection and the loop.

The QP (LIBSVM's ``Solver`` header, Fan, Chen & Lin 2005), over positions 0..l-1:

    min_a  0.5 a'Qa + p'a   s.t.  y'a = Delta,  0 <= a_t <= C_t,   Q_st = y_s y_t K(x_s, x_t)

K comes from the shared row cache (:mod:`lasvm_cli.numerics.cache`, rows of K, not Q); the core
forms y_s y_t K_st on the fly, which is exact in floating point, so its arithmetic is LIBSVM's.
Internally the core keeps LIBSVM's unsigned variables ``a`` and gradient ``G = Qa + p``. The
signed form of Bordes et al. 2005 eq. 9 (alpha = y a, g = -y G for p = -1) is what the solver adapters hand
back (sv_coef = alpha) and what :mod:`lasvm_cli.qp.steps` offers to LASVM.

:class:`SmoState` is a namedtuple of arrays, all in *position order* (the cache's ``perm`` maps
positions to example ids; shrinking swaps positions and tells the cache). Scalars live in the
``ist`` (int64) and ``fst`` (float64) arrays at the named indices below.
"""

from collections import namedtuple

# The names of the cores' codes, in the order of the codes (the declared options' choices:
# lasvm_cli/solvers OPTIONS; this package is pure Python up to here, for svm-train's start).
WSS = ("mvp", "so", "hmg")                                 # --wss: WS_* below
SELECTIONS = ("random", "gradient", "active", "autoactive")  # --selection: online_core's SEL_*
REPROCESS_STEPS = ("one", "pair")                          # --reprocess: lasvm_g_core's pair step
FINISHINGS = ("smo", "reprocess", "reprocess-shrinking")   # --finishing: solvers/finishing.py's rules
BAIL_OUTS = ("lasvm11", "printed")                         # --bail-out: online_core's I_BAIL_PRINTED

SmoState = namedtuple("SmoState", "alpha y G G_bar p C QD status ist fst work")


def slot(array, index, kind=int):
    """A named scalar of a core state, for the Python side: entry ``index`` of its ``array``
    ("ist", "fst" ...), read as ``kind``. The compiled code indexes the arrays by constant;
    the layers above read and write the scalars through these names (a state file keeps the
    arrays as they are)."""
    def get(self):
        return kind(getattr(self.state, array)[index])

    def put(self, value):
        getattr(self.state, array)[index] = value
    return property(get, put)


class Scalars:
    """The named scalars of one core state (a subclass per state: its ``slot``s)."""
    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

# alpha status (LIBSVM's alpha_status)
LOWER, UPPER, FREE = 0, 1, 2

# working-set selection codes
WS_MVP, WS_SO, WS_HMG = 0, 1, 2
WS_CODES = dict(zip(WSS, (WS_MVP, WS_SO, WS_HMG)))

# ist indices
(ACTIVE, COUNTER, UNSHRINK, ITER, MAX_ITER, PREV_I, PREV_J, SHRINKING, WS, FINAL_KKT,
 N_SHRINK, N_RECON, N_MG, N_FALLBACK, N_KKT_CONT, N_MG_EXTRA_ROWS, N_SHRUNK_VARS,
 N_WARN_H0, LAST_KIND, ADAPT_WIDTH, N_IST) = range(21)

# fst indices
EPS, VIOL, ETA, N_FST = range(4)

# return codes of smo_run
RUNNING, OPTIMAL, MAX_ITER_REACHED = 0, 1, 2


class SmoScalars(Scalars):
    """An SmoState's scalars by name: ``SmoScalars(st).iterations`` is ``st.ist[ITER]``."""
    __slots__ = ()
    iterations = slot("ist", ITER)
