"""The named scalars of the core states (lasvm_cli/qp: Scalars, slot): each name reads and
writes exactly its own entry of its array, no two names share one, and the state arrays (the
compiled code's and the state file's layout) are the ones the cores make."""

from types import SimpleNamespace

import numpy as np
import pytest

from lasvm_cli import qp
from lasvm_cli.qp import lasvm_g_core, online_core, s2do, tracking_core

CASES = {
    "LasvmScalars": (online_core.LasvmScalars,
                     dict(ist=(online_core.N_IST, np.int64), fst=(online_core.N_FST, float))),
    "LasvmGScalars": (lasvm_g_core.LasvmGScalars,
                      dict(gst=(lasvm_g_core.N_GST, np.int64), gfs=(lasvm_g_core.N_GFS, float))),
    "S2doScalars": (s2do.S2doScalars, dict(ist=(s2do.N_IST, np.int64), fst=(s2do.N_FST, float))),
    "TrackScalars": (tracking_core.TrackScalars, dict(tis=(tracking_core.N_TIS, np.int64))),
    "SmoScalars": (qp.SmoScalars, dict(ist=(qp.N_IST, np.int64), fst=(qp.N_FST, float))),
}


@pytest.mark.parametrize("name", CASES)
def test_each_name_is_its_own_entry(name):
    cls, arrays = CASES[name]
    names = [n for n, v in vars(cls).items() if isinstance(v, property)]
    assert names, name
    taken = set()
    for n in names:
        state = SimpleNamespace(**{a: np.zeros(size, dtype) for a, (size, dtype) in
                                   arrays.items()})
        sc = cls(state)
        setattr(sc, n, 7)
        hits = [(a, int(i)) for a, arr in vars(state).items() for i in np.flatnonzero(arr)]
        assert len(hits) == 1, (n, hits)  # exactly one entry
        assert hits[0] not in taken, (n, hits)  # and no other name's
        taken.add(hits[0])
        value = getattr(sc, n)
        assert type(value) in (int, float, bool), (n, value)  # a Python number, not numpy's
        assert value == (True if type(value) is bool else 7), (n, value)


def test_names_read_the_compiled_codes_slots():
    """The names are the cores' constants: LasvmScalars(st).n_s is st.ist[I_NS] ..."""
    st = SimpleNamespace(ist=np.arange(online_core.N_IST, dtype=np.int64),
                         fst=np.arange(online_core.N_FST, dtype=float))
    sc = online_core.LasvmScalars(st)
    assert (sc.n_s, sc.pool, sc.epoch, sc.labels) == (
        online_core.I_NS, online_core.I_POOL, online_core.I_EPOCH, online_core.I_LABELS)
    assert sc.delta == online_core.F_DELTA
    tr = SimpleNamespace(tis=np.arange(tracking_core.N_TIS, dtype=np.int64))
    assert tracking_core.TrackScalars(tr).nnz == tracking_core.T_NNZ
    st2 = SimpleNamespace(ist=np.arange(s2do.N_IST, dtype=np.int64),
                          fst=np.arange(s2do.N_FST, dtype=float))
    assert (s2do.S2doScalars(st2).active, s2do.S2doScalars(st2).gain) == (s2do.ACTIVE, s2do.GAIN)
