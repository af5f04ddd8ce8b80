"""svm-train --stream (the SOLVERS rows' ``streams``: each names the function that starts a run):
the run, fed by its file in blocks (solvers/stream_source.py's RowSource; the runs in
lasvm_stream.py, lasvm_g_stream.py, lasvm_ovr_stream.py, s2do_stream.py), goes through the online driver
(run_control.py's OnlineControl and the one drive loop) as an in-memory machine does, so the
trace (with --test), the stopping limits, snapshots and the state file apply to it. What
differs from an in-memory machine: the model is the run's own (its SVs are the rows the
stream holds), the training data's fingerprint is the file's, and the test set is stored in
the stream's columns as they are when a trace row is written."""

import hashlib
import os

import numpy as np

from ..base.errors import InputFormatError, ParameterError
from .online_options import OnlineOptions
from .run_control import OnlineControl

HEAD_BYTES = 1 << 20  # the file's fingerprint: its size and the sha256 of its first MiB


def stream_fingerprint(source):
    """What a state file records of a streamed training file (a resume on another file is an
    error): its size on disk and a hash of its first MiB (decompressed)."""
    from ..io.svmlight import open_binary

    if os.fspath(source) == "-":
        return dict(n=-1, label_sum=0.0, rows_sha256="standard input")
    with open_binary(source) as f:
        head = f.read(HEAD_BYTES)
    return dict(n=os.path.getsize(source), label_sum=0.0,
                rows_sha256=hashlib.sha256(head).hexdigest()[:32])


class StreamControl(OnlineControl):
    """OnlineControl over one streamed machine: the file's fingerprint."""

    def __init__(self, opts, source, **kw):
        super().__init__(opts, **kw)
        self.source = source

    def _fingerprint(self, run):
        return stream_fingerprint(self.source)


class StreamTestSet:
    """--test's rows for a streamed run: read once, stored in the stream's feature columns at
    each trace row (``run.rows_like``); a binary machine's two labels (``run.label``), or the
    classes of an all-in-one machine or of one-vs-rest machines (``run.labels``, in the order
    of the expansion's rows; ``ARG_MAX``: arg-max even over one row)."""

    def __init__(self, path, zero_based=False):
        from ..io.svmlight import read_svmlight

        try:
            d = read_svmlight(path, zero_based=zero_based)
        except OSError:
            raise ParameterError(f"ERROR: can't open test file {path}") from None
        self.d = d
        self.y = np.trunc(np.asarray(d.y, np.float64))

    def error(self, run, machine=None):
        """Test error of the run's current expansion: a binary machine on the test rows of
        its two classes (positive where f > 0); an all-in-one machine or one-vs-rest machines
        on every test row, the arg-max over the classes' decision values, as svm-predict
        decides (a class the stream has not met yet is never predicted)."""
        from ..numerics.kernels import expansion_values

        sv, coef, rho = run.expansion()
        binary = coef.shape[0] == 1 and not getattr(run, "ARG_MAX", False)
        if binary:
            pos, neg = run.label[0], run.label[1]
            rows = np.flatnonzero((self.y == pos) | (self.y == neg))
        else:
            rows = np.arange(self.y.size)
        if rows.size == 0:
            return float("nan")
        kd = run.rows_like(self.d.indptr, self.d.indices, self.d.values)
        dec = np.zeros((coef.shape[0], rows.size))
        if sv.size:
            for c in range(coef.shape[0]):
                expansion_values(kd, rows.astype(np.int64), run.kd, sv,
                                 np.ascontiguousarray(coef[c]), run.kp, dec[c])
        if binary:
            return float(np.mean((dec[0] - rho[0] > 0) != (self.y[rows] == pos)))
        labels = np.asarray(run.labels, np.float64)
        dec[np.isnan(labels)] = -np.inf  # a class index no row has had
        return float(np.mean(labels[np.argmax(dec - rho[:, None], axis=0)] != self.y))


def train_stream(source, params, start, *, zero_based=False, info=None, warn=None,
                 progress=None, chunk_bytes=1 << 22):
    """One pass over ``source`` by the run ``start(source, params, ...)`` makes, driven with
    the observers svm-train's options ask for; prints LIBSVM's lines and returns the model.
    A bad row or label (an input error, or a file the solver cannot train on) leaves no
    output behind: the trace, snapshots and a state file this training created are
    removed."""
    from ..solvers.stream_source import StreamError

    info = info or (lambda _m: None)
    warn = warn or (lambda _m: None)
    opts = OnlineOptions.from_params(params) or OnlineOptions()
    test = StreamTestSet(params.test_file, zero_based) if params.test_file else None
    run = start(source, params, zero_based=zero_based, chunk_bytes=chunk_bytes, warn=warn)
    control = StreamControl(opts, source, machines=[(1, -1)], test=test,
                            build_model=lambda results: results[0].model, info=info,
                            warn=warn)
    existed = {path: os.path.exists(path) for path in (opts.trace, opts.save_state) if path}
    bar = progress(run.TITLE) if progress else None
    try:
        res = control.drive(run, bar.update if bar else None)
    except (InputFormatError, ParameterError, StreamError):
        control.close()
        _remove_outputs(opts, existed, control)
        raise
    finally:
        control.close()
        if bar:
            bar.close()
    for line in res.model_lines:
        info(line)
    return res.model


def _remove_outputs(opts, existed, control):
    """The outputs of a training that failed on its input: the trace unless it was resumed,
    the snapshot models written, a state file that was not there before."""
    paths = [entry["path"] for entry in control.snapshots_written]
    if opts.trace and not (opts.resume and existed.get(opts.trace)):
        paths.append(opts.trace)
    if opts.save_state and not existed.get(opts.save_state):
        paths.append(opts.save_state)
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass
