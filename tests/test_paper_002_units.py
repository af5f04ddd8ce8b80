"""bench/paper_002.py resumes by part: a finished run (one curve, one seed) is read back
instead of run again, with the same mean trace; other settings or other data are run; a
long run notes its headway; a sitting stops cleanly; a dead process's lock is taken over.
On heart_scale (270 rows)."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

_threads = os.environ.get("NUMBA_NUM_THREADS")
paper = pytest.importorskip("paper_002")
if _threads is None:  # the script's one numba thread is for its runs, not for later tests'
    os.environ.pop("NUMBA_NUM_THREADS", None)  # subprocesses (test_warm_server's keys)
from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402


def _case(first=0):
    tr = read_svmlight(str(REPO / "data" / "heart_scale"))
    te = read_svmlight(str(REPO / "data" / "heart_scale"))
    tr = paper.sample(tr, np.arange(first, first + 150))
    te = paper.sample(te, np.arange(150, 270))
    return paper.Case("heart", tr, te, np.where(tr.y > 0, 1.0, -1.0),
                      np.where(te.y > 0, 1.0, -1.0), 1.0, 1.0)


def _same(a, b, but=()):
    """Equal trace rows (NaN equal to NaN: no test error is measured here)."""
    cols = [c for c in paper.TRACE_COLUMNS if c not in but]
    return np.array_equal([[r[c] for c in cols] for r in a], [[r[c] for c in cols] for r in b],
                          equal_nan=True)


class _Counting:
    """TrackRun, counting the runs started."""

    def __init__(self, monkeypatch):
        self.n, real = 0, paper.TrackRun

        def make(*args, **kw):
            self.n += 1
            return real(*args, **kw)

        monkeypatch.setattr(paper, "TrackRun", make)


def test_finished_runs_are_read_back(tmp_path, monkeypatch):
    case, runs = _case(), _Counting(monkeypatch)
    units = paper.Units(tmp_path)
    fresh = paper.curve(case, "track1", 3, "shuffle", 2, 25, units=units)
    assert runs.n == 2 and units.ran == 2 and len(list(tmp_path.glob("*.json"))) == 2
    assert not list(tmp_path.glob("*.lock"))
    again = paper.Units(tmp_path)
    assert _same(paper.curve(case, "track1", 3, "shuffle", 2, 25, units=again), fresh)
    assert runs.n == 2 and again.read == 2 and again.ran == 0
    # and equal to a run that keeps nothing (but for the clock)
    plain = paper.curve(case, "track1", 3, "shuffle", 2, 25)
    assert len(plain) == len(fresh) > 1 and _same(plain, fresh, but=("seconds",))
    # a third seed runs alone; the active teacher, another K, other rows are other units
    paper.curve(case, "track1", 3, "shuffle", 3, 25, units=again)
    assert runs.n == 5 and again.ran == 1
    paper.curve(case, "track1", 3, "active", 1, 25, units=again, with_error=True)
    progress = next(tmp_path.glob("*active*.progress")).read_text().split("\n")
    assert [line.split()[0] for line in progress[:-1]] == ["25", "50", "75", "100", "125", "150"]
    paper.curve(case, "track1", 4, "shuffle", 1, 25, units=again)
    paper.curve(_case(first=10), "track1", 3, "shuffle", 1, 25, units=again)
    assert runs.n == 8 and again.ran == 4 and len(list(tmp_path.glob("*.json"))) == 6


def test_a_sitting_stops_and_a_stale_lock_is_taken(tmp_path, monkeypatch):
    case, runs = _case(), _Counting(monkeypatch)
    units = paper.Units(tmp_path, stop_after=0.0)
    with pytest.raises(paper.SittingOver):
        paper.curve(case, "track1", 2, "shuffle", 2, 50, units=units)
    assert runs.n == 0 and not list(tmp_path.iterdir())
    # nor does it wait for a run that a live process holds, once its time is up
    units = paper.Units(tmp_path)
    held = dict(data="heart", digest=case.digest, l=150, C=1.0, gamma=0.005, cache_mb=1.0,
                algorithm="track1", K=2, teacher="shuffle", seed=0, every=50,
                max_examples=None, batch_iters=None, with_error=False, at=None)
    units.path(held).with_suffix(".lock").write_text(str(os.getpid()))
    up = iter([False, False, True])  # seed 0: held; seed 1: runs; then the time is up
    monkeypatch.setattr(units, "time_is_up", lambda: next(up))
    monkeypatch.setattr(paper.time, "sleep", lambda s: pytest.fail("waited past its time"))
    with pytest.raises(paper.SittingOver):
        paper.curve(case, "track1", 2, "shuffle", 2, 50, units=units)
    assert runs.n == 1 and len(list(tmp_path.glob("*seed1*.json"))) == 1
    units.path(held).with_suffix(".lock").unlink()
    units = paper.Units(tmp_path)
    spec = dict(data="heart", algorithm="track1", K=2, teacher="shuffle", seed=0)
    units.path(spec).with_suffix(".lock").write_text("999999999")  # no such process
    assert units.claim(spec) and not units.claim(spec)
    units.release(spec)
    assert units.claim(spec)
