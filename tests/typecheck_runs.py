"""Checked by mypy (tests/test_run_protocol.py), never run: each run class is the protocol the
drive loop and its observers rely on (solvers/run.py)."""

from lasvm_cli.solvers.lasvm import LasvmRun
from lasvm_cli.solvers.lasvm_g_stream import LasvmGStreamRun
from lasvm_cli.solvers.lasvm_nc import LasvmGRun
from lasvm_cli.solvers.lasvm_ovr_stream import OvrStreamRun
from lasvm_cli.solvers.lasvm_stream import LasvmStreamRun
from lasvm_cli.solvers.run import SavedRun, TrackedRun
from lasvm_cli.solvers.s2do_online import S2doRun
from lasvm_cli.solvers.s2do_stream import S2doStreamRun
from lasvm_cli.solvers.tracking import TrackRun


def lasvm(r: LasvmRun) -> SavedRun:
    return r


def lasvm_g(r: LasvmGRun) -> SavedRun:
    return r


def lasvm_stream(r: LasvmStreamRun) -> SavedRun:
    return r


def lasvm_g_stream(r: LasvmGStreamRun) -> SavedRun:
    return r


def lasvm_ovr_stream(r: OvrStreamRun) -> SavedRun:
    return r


def s2do(r: S2doRun) -> SavedRun:
    return r


def s2do_stream(r: S2doStreamRun) -> SavedRun:
    return r


def track(r: TrackRun) -> TrackedRun:
    return r
