"""The state file of a long online run (--save-state FILE, --resume FILE): an ``.npz`` written
atomically that holds the run's state arrays (solvers/run.py's ``state_arrays``), its phase,
its parameters and a fingerprint of the training data, so that a resume on other data or with
other parameters (anything but --epochs and the stopping options) is an error, and a resumed
run gives the uninterrupted run's model bit for bit (docs/commands.md, "Long online runs")."""

import contextlib
import dataclasses
import hashlib
import json
import signal
import threading
import time
import zipfile

import numpy as np

from ..base.errors import ParameterError, ReportedInterrupt
from .drive import Observer

STATE_VERSION = 4  # 3: the online core's scalars gained I_BAIL_PRINTED, the LASVM-G family's
#                    G_NONCONVEX; 4: I_ACTIVE and I_NEXT_SHRINK (the shrinking finishing)


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


def data_fingerprint(kd, y):
    """n, sum of the +-1 labels and a sha256 of 16 evenly spaced rows (storage independent)."""
    from ..numerics.data import row_to_csr
    from ..numerics.kernels import n_rows

    n = int(n_rows(kd))
    h = hashlib.sha256()
    for i in sorted(set(np.linspace(0, max(n - 1, 0), 16).astype(np.int64).tolist())):
        if n == 0:
            break
        idx, val = row_to_csr(kd, i)
        h.update(np.asarray(idx, np.int64).tobytes())
        h.update(np.asarray(val, np.float64).tobytes())
        h.update(np.float64(y[i]).tobytes())
    return dict(n=n, label_sum=float(np.sum(y)), rows_sha256=h.hexdigest()[:32])


def run_parameters(run):
    """What determines the run's result (everything but the number of epochs)."""
    kp = run.kp
    d = dict(run.config)
    d.pop("epochs", None)
    d.update(kernel_type=int(kp.kind), degree=int(kp.degree), gamma=float(kp.gamma),
             coef0=float(kp.coef0))
    return d


def save_state(path, run, meta, extra=None):
    """Write the run's state, ``meta`` (JSON-able) and the ``extra`` arrays to ``path``
    atomically."""
    from ..io.atomic import atomic_write

    arrays = run.state_arrays()
    arrays.update(extra or {})
    meta = dict(meta, version=STATE_VERSION, phase=run.PHASES[run.phase], epochs=run.epochs)
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_write(path, mode="wb") as f:
        np.savez(f, **arrays)


def load_state(path):
    """(meta dict, arrays dict) from a state file; ParameterError when it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays.pop("meta")))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        _error(f"cannot read LASVM state file {path}: {e}")
    if meta.get("version") != STATE_VERSION:
        _error(f"{path}: unsupported LASVM state version {meta.get('version')}")
    return meta, arrays


def check_resume(path, meta, fingerprint, params):
    check_resume_family(path, meta, params)  # first: another family labels the data otherwise
    if meta["fingerprint"] != fingerprint:
        _error(f"{path}: the state was saved for other training data (state: "
               f"{_fp_text(meta['fingerprint'])}; this data: {_fp_text(fingerprint)})")
    check_resume_params(path, meta, params)


def _family(params):
    """The runs whose states can be compared option by option: the multi-class schemes', the
    tracking solvers' (solvers/tracking.py's config has a teacher), LASVM's family."""
    return "multiclass" if "multiclass" in params else "tracking" if "teacher" in params \
        else "lasvm"


def _run_kind(params):
    if "multiclass" in params:
        solver = "lasvm" if params["multiclass"] == "ovr" else "online"
        return f"--multiclass {params['multiclass']} --solver {solver}"
    if "teacher" in params:
        return "a tracking solver"
    return "a LASVM-family solver"


def check_resume_family(path, meta, params):
    saved = meta["params"]
    if _family(saved) != _family(params):
        _error(f"{path}: the state was saved by {_run_kind(saved)}, not by "
               f"{_run_kind(params)} as this run")


def check_resume_params(path, meta, params):
    saved = meta["params"]
    diff = [f"{k} {saved.get(k)!r} (now {v!r})" for k, v in params.items()
            if saved.get(k) != v]
    if diff:
        _error(f"{path}: the state was saved with other parameters: " + ", ".join(diff))


def _fp_text(fp):
    return f"n = {fp['n']}, sum of labels = {fp['label_sum']:g}, rows {fp['rows_sha256'][:12]}"




def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def result_meta(res):
    """JSON-able fields of a SolverResult (its coef is saved as an array)."""
    d = {f.name: _plain(getattr(res, f.name)) for f in dataclasses.fields(res)
         if f.name != "coef"}
    d["rho"] = [float(v) for v in res.rho]
    d["counters"] = {k: _plain(v) for k, v in d["counters"].items()}
    return d


def result_from(meta, coef):
    from ..solvers.result import SolverResult

    meta = dict(meta, rho=np.asarray(meta["rho"], np.float64))
    return SolverResult(coef=np.asarray(coef, np.float64).reshape(meta["rho"].size, -1), **meta)




class StateSaver(Observer):
    """--save-state FILE: ``write(run)`` (the training's state blocks to FILE) every
    --save-every seconds of wall clock, after a step; and Ctrl-C: while a run is driven SIGINT
    only sets a flag, read after each step, where the arrays are consistent: the state is saved
    there, then the interrupt goes on (svm-train exits with 130)."""

    def __init__(self, path, every, write, warn):
        self.path, self.every, self._write, self.warn = path, every, write, warn
        self.last = time.monotonic()
        self.interrupted = False

    def save(self, run):
        self._write(run)
        self.last = time.monotonic()

    def after_step(self, run, drive):
        if time.monotonic() - self.last >= self.every:
            self.save(run)
        if self.interrupted:
            self.save(run)
            self.interrupt()

    def interrupt(self):
        """Ctrl-C once the state is saved: say where, and end with the interrupt."""
        self.warn(f"interrupted: state saved to {self.path} (--resume {self.path} "
                  "continues the run)")
        raise ReportedInterrupt

    @contextlib.contextmanager
    def deferred_interrupt(self):
        """SIGINT sets ``interrupted`` within the block (main thread only), then the caller's
        handler is back."""
        self.interrupted = False
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT,
                                     lambda *_: setattr(self, "interrupted", True))
        try:
            yield
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
