"""LIBSVM 3.37 model files: :func:`read_model` and :func:`write_model` (byte-identical output).

Written key by key as ``svm.cpp:svm_save_model`` writes them, so that LIBSVM and its tools read
our models and a LIBSVM model read and written here is unchanged; read as
``read_model_header`` reads them, with every malformed line an error (ModelFormatError: file,
line, reason) instead of a silently different model. Multi-class schemes LIBSVM cannot express
(one-vs-rest, LLW, Crammer-Singer) add one ``multiclass`` header line that LIBSVM's reader
rejects. The format and the extension: docs/model-file.md.
"""

from __future__ import annotations

import os

import numpy as np

from ..base.errors import InputFormatError, ModelFormatError
from ..base.options import SVM_TYPES
from ..numerics.kernels import KERNEL_NAMES, PRECOMPUTED
from ..numerics.model import SVMModel
from .atomic import atomic_write
from .svmlight import parse_block

EXTENSION_SCHEMES = ("ovr", "llw", "cs")
_ALL_IN_ONE = ("ovr", "llw", "cs")  # k coefficient rows, k rho values, argmax decision


def _g17(x):
    return "%.17g" % x


def _model_header(model: SVMModel):
    k = model.nr_class
    lines = [f"svm_type {model.svm_type}"]
    if model.multiclass in _ALL_IN_ONE:
        lines.append(f"multiclass {model.multiclass}")
    kt = model.kernel_type
    lines.append(f"kernel_type {KERNEL_NAMES[kt]}")
    if kt == 1:
        lines.append("degree %d" % model.degree)
    if kt in (1, 2, 3):
        lines.append("gamma " + _g17(model.gamma))
    if kt in (1, 3):
        lines.append("coef0 " + _g17(model.coef0))
    lines.append("nr_class %d" % k)
    lines.append("total_sv %d" % model.total_sv)
    n_rho = k if model.multiclass in _ALL_IN_ONE else k * (k - 1) // 2
    lines.append("".join(["rho"] + [" " + _g17(v) for v in model.rho[:n_rho]]))
    if model.label is not None:
        lines.append("".join(["label"] + [" %d" % v for v in model.label]))
    if model.probA is not None:
        lines.append("".join(["probA"] + [" " + _g17(v) for v in model.probA[:n_rho]]))
    if model.probB is not None:
        lines.append("".join(["probB"] + [" " + _g17(v) for v in model.probB[:n_rho]]))
    if model.prob_density_marks is not None:
        lines.append("".join(["prob_density_marks"] +
                             [" " + _g17(v) for v in model.prob_density_marks[:10]]))
    if model.nSV is not None:
        lines.append("".join(["nr_sv"] + [" %d" % v for v in model.nSV]))
    lines.append("SV")
    return "\n".join(lines) + "\n"


def format_model(model: SVMModel) -> str:
    """The model file text."""
    if model.kernel_type == PRECOMPUTED:
        return _model_header(model) + _precomputed_sv_lines(model)
    return _model_header(model) + _sv_lines(model)


def _coef_strings(model):
    """Each SV's coefficients, LIBSVM's "%.17g " each, as one string per SV."""
    if not model.sv_coef.shape[0]:
        return [""] * model.total_sv
    return ["".join(["%.17g " % c for c in row]) for row in model.sv_coef.T.tolist()]


def _sv_lines(model):
    """The SV lines: coefficients, then "index:%.8g " per stored value, then a newline.

    Formatting is the cost of writing a model (a float a microsecond), and SVs share most of
    their values and all of their indices, so each distinct value is formatted once (told apart
    by bit pattern, so that -0.0 stays "-0") and the line is assembled from the pieces."""
    n_sv = model.total_sv
    if not n_sv:
        return ""
    indptr = np.asarray(model.sv_indptr[:n_sv + 1], np.int64)
    nnz = int(indptr[-1])
    counts = np.diff(indptr)
    rows = np.arange(n_sv)
    # token slots of SV r: its coefficients at 2 indptr[r] + 2r, then index and value
    # strings of its pairs, then its newline; pair p sits at 2p + 2 row(p) + 1
    start = 2 * indptr[:-1] + 2 * rows
    pair_at = 2 * np.arange(nnz) + 2 * np.repeat(rows, counts) + 1
    tokens = np.empty(2 * nnz + 2 * n_sv, dtype=object)
    tokens[start] = _coef_strings(model)
    tokens[start + 2 * counts + 1] = "\n"
    uniq, which = np.unique(model.sv_indices[:nnz], return_inverse=True)
    tokens[pair_at] = np.array(["%d:" % i for i in uniq.tolist()], dtype=object)[which]
    bits = np.ascontiguousarray(model.sv_values[:nnz], np.float64).view(np.int64)
    uniq, which = np.unique(bits, return_inverse=True)
    tokens[pair_at + 1] = np.array(["%.8g " % v for v in uniq.view(np.float64).tolist()],
                                   dtype=object)[which]
    return "".join(tokens.tolist())


def _precomputed_sv_lines(model):
    """A precomputed-kernel SV is its coefficients and "0:serial" (the serial number as %d)."""
    ptr, val = model.sv_indptr.tolist(), model.sv_values.tolist()
    out = [c + "0:%d \n" % int(val[ptr[i]] if ptr[i + 1] > ptr[i] else 0.0)
           for i, c in enumerate(_coef_strings(model))]
    return "".join(out)


def write_model(model: SVMModel, path) -> None:
    """Write ``model`` to ``path`` atomically (temporary file, fsync, rename)."""
    text = format_model(model)
    with atomic_write(path) as f:
        f.write(text)


# ---------------------------------------------------------------------------------------------
# reading


class _Tokens:
    """Whitespace-separated tokens of the header, with line numbers (read_model_header's fscanf)."""

    def __init__(self, lines, path):
        self.lines = lines
        self.path = path
        self.li = 0  # index of current line
        self.toks = []
        self.ti = 0

    def next(self, what):
        while self.ti >= len(self.toks):
            if self.li >= len(self.lines):
                raise ModelFormatError(self.path, f"unexpected end of file: expected {what}",
                                       self.li if self.li else None)
            self.toks = self.lines[self.li].split()
            self.ti = 0
            self.li += 1
        tok = self.toks[self.ti]
        self.ti += 1
        return tok

    @property
    def line(self):
        return self.li


def _parse_float(tok, toks, what):
    try:
        if "_" in tok:
            raise ValueError
        v = float(tok)
    except ValueError:
        raise ModelFormatError(toks.path, f"bad number '{tok}' in {what}", toks.line) from None
    if not np.isfinite(v):
        raise ModelFormatError(toks.path, f"{what} '{tok}' is not a finite number", toks.line)
    return v


def _parse_int(tok, toks, what):
    try:
        if "_" in tok:
            raise ValueError
        return int(tok)
    except ValueError:
        raise ModelFormatError(toks.path, f"bad integer '{tok}' in {what}", toks.line) from None


def read_model(path) -> SVMModel:
    """Read a LIBSVM model file (or our extension); OSError if it cannot be opened."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_model(text, path)


def parse_model(text: str, path="<model>") -> SVMModel:
    lines = text.split("\n")
    toks = _Tokens(lines, path)
    hdr = {}
    nr_class = None

    def need_nr_class(key):
        if nr_class is None:
            raise ModelFormatError(path, f"'{key}' before 'nr_class'", toks.line)
        return nr_class

    def n_pairwise():
        k = nr_class
        return k if hdr.get("multiclass", "ovo") in _ALL_IN_ONE else k * (k - 1) // 2

    def floats(key, n):
        return np.array([_parse_float(toks.next(f"{n} values after '{key}'"), toks, key)
                         for _ in range(n)], np.float64)

    def ints(key, n):
        return np.array([_parse_int(toks.next(f"{n} values after '{key}'"), toks, key)
                         for _ in range(n)], np.int64)

    while True:
        try:
            cmd = toks.next("'SV'")
        except ModelFormatError:
            raise ModelFormatError(path, "no 'SV' line: the model header is incomplete",
                                   None) from None
        if cmd == "svm_type":
            v = toks.next("svm type")
            if v not in SVM_TYPES:
                raise ModelFormatError(path, f"unknown svm type '{v}'", toks.line)
            hdr["svm_type"] = v
        elif cmd == "multiclass":
            v = toks.next("multiclass scheme")
            if v not in EXTENSION_SCHEMES:
                raise ModelFormatError(path, f"unknown multiclass scheme '{v}'", toks.line)
            hdr["multiclass"] = v
        elif cmd == "kernel_type":
            v = toks.next("kernel type")
            if v not in KERNEL_NAMES:
                raise ModelFormatError(path, f"unknown kernel function '{v}'", toks.line)
            hdr["kernel_type"] = KERNEL_NAMES.index(v)
        elif cmd == "degree":
            hdr["degree"] = int(_parse_int(toks.next("degree"), toks, "degree"))
        elif cmd == "gamma":
            hdr["gamma"] = _parse_float(toks.next("gamma"), toks, "gamma")
        elif cmd == "coef0":
            hdr["coef0"] = _parse_float(toks.next("coef0"), toks, "coef0")
        elif cmd == "nr_class":
            nr_class = _parse_int(toks.next("nr_class"), toks, "nr_class")
            if nr_class < 1:
                raise ModelFormatError(path, f"nr_class {nr_class} < 1", toks.line)
        elif cmd == "total_sv":
            hdr["total_sv"] = _parse_int(toks.next("total_sv"), toks, "total_sv")
            if hdr["total_sv"] < 0:
                raise ModelFormatError(path, "total_sv < 0", toks.line)
        elif cmd in ("rho", "probA", "probB"):
            need_nr_class(cmd)
            hdr[cmd] = floats(cmd, n_pairwise())
        elif cmd == "label":
            hdr["label"] = ints("label", need_nr_class(cmd))
        elif cmd == "nr_sv":
            hdr["nr_sv"] = ints("nr_sv", need_nr_class(cmd))
        elif cmd == "prob_density_marks":
            hdr["prob_density_marks"] = floats(cmd, 10)
        elif cmd == "SV":
            # the rest of this line is skipped (read_model_header reads up to '\n')
            toks.toks = []
            break
        else:
            raise ModelFormatError(path, f"unknown text in model file: [{cmd}]", toks.line)

    for key in ("svm_type", "kernel_type", "total_sv"):
        if key not in hdr:
            raise ModelFormatError(path, f"missing '{key}' in model header")
    if nr_class is None:
        raise ModelFormatError(path, "missing 'nr_class' in model header")
    if "rho" not in hdr:
        raise ModelFormatError(path, "missing 'rho' in model header")
    svm_type = hdr["svm_type"]
    kt = hdr["kernel_type"]
    multiclass = hdr.get("multiclass", "ovo")
    classification = svm_type in ("c_svc", "nu_svc")
    if multiclass != "ovo" and not classification:
        raise ModelFormatError(path, f"'multiclass {multiclass}' needs a classification "
                               f"svm_type, not {svm_type}")
    if kt == 1 and "degree" not in hdr:
        raise ModelFormatError(path, "missing 'degree' for the polynomial kernel")
    if kt in (1, 2, 3) and "gamma" not in hdr:
        raise ModelFormatError(path, f"missing 'gamma' for the {KERNEL_NAMES[kt]} kernel")
    if kt in (1, 3) and "coef0" not in hdr:
        raise ModelFormatError(path, f"missing 'coef0' for the {KERNEL_NAMES[kt]} kernel")
    total_sv = hdr["total_sv"]
    if classification:
        for key in ("label", "nr_sv"):
            if key not in hdr:
                raise ModelFormatError(path, f"missing '{key}' in a {svm_type} model header")
        if int(hdr["nr_sv"].sum()) != total_sv or (hdr["nr_sv"] < 0).any():
            raise ModelFormatError(path, f"nr_sv {' '.join(map(str, hdr['nr_sv']))} does not "
                                   f"add up to total_sv {total_sv}")
    elif nr_class != 2:
        raise ModelFormatError(path, f"nr_class must be 2 for {svm_type}, not {nr_class}")

    n_coef = nr_class if multiclass in _ALL_IN_ONE else nr_class - 1
    sv_start = toks.li  # index of the first SV line
    coef, indptr, indices, values = _parse_sv_block(lines, sv_start, total_sv, n_coef, path)
    return SVMModel(
        svm_type=svm_type, kernel_type=kt, degree=hdr.get("degree", 3),
        gamma=hdr.get("gamma", 0.0), coef0=hdr.get("coef0", 0.0), nr_class=nr_class,
        label=hdr.get("label"), rho=hdr["rho"], nSV=hdr.get("nr_sv"), sv_coef=coef,
        sv_indptr=indptr, sv_indices=indices, sv_values=values, probA=hdr.get("probA"),
        probB=hdr.get("probB"), prob_density_marks=hdr.get("prob_density_marks"),
        multiclass=multiclass,
    )


def _parse_sv_block(lines, start, total_sv, n_coef, path):
    have = len(lines) - start - (1 if lines[-1] == "" else 0)
    if have < total_sv:
        raise ModelFormatError(path, f"total_sv is {total_sv} but only {max(have, 0)} SV lines "
                               "follow", len(lines))
    if total_sv and start + total_sv >= len(lines):
        # the last SV line has no newline: LIBSVM's writer ends every line with one, so the
        # file was cut inside that line (its last number may be cut short too)
        raise ModelFormatError(path, "truncated model file: the last SV line does not end "
                               "with a newline", start + total_sv)
    block = lines[start:start + total_sv]
    parsed = _scanned_sv_block(block, total_sv, n_coef)
    if parsed is not None:
        return parsed
    coef = np.empty((n_coef, total_sv), np.float64)
    counts = np.empty(total_sv, np.int64)
    pair_strs = []
    coef_rows = []
    for i, line in enumerate(block):
        parts = line.split()
        if len(parts) < n_coef:
            raise ModelFormatError(path, f"SV line has {len(parts)} fields, expected at least "
                                   f"{n_coef} coefficients", start + i + 1)
        coef_rows.append(parts[:n_coef])
        pairs = parts[n_coef:]
        counts[i] = len(pairs)
        pair_strs.extend(pairs)
    # fast path: one vectorised conversion; on any failure find the offending line
    try:
        if n_coef and total_sv:
            coef[:, :] = np.array(coef_rows, dtype=np.float64).T
        flat = " ".join(pair_strs).replace(":", " ").split()
        if len(flat) != 2 * len(pair_strs):
            raise ValueError
        arr = np.array(flat, dtype=np.float64).reshape(-1, 2) if flat else np.zeros((0, 2))
        idx = arr[:, 0]
        if not np.all(idx == np.floor(idx)) or (idx.size and (idx.min() < 0 or
                                                                idx.max() > 2**31 - 1)):
            raise ValueError
        indices = idx.astype(np.int32)
        values = arr[:, 1].copy()
        if any("_" in line for line in block):  # float() would read "1_0" as 10
            raise ValueError
        if not (np.isfinite(coef).all() and np.isfinite(values).all()):
            raise ValueError
    except ValueError:
        _locate_sv_error(block, start, n_coef, path)
        raise ModelFormatError(path, "malformed SV block", start + 1) from None
    indptr = np.zeros(total_sv + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return coef, indptr, indices, values


def _scanned_sv_block(block, n_sv, n_coef):
    """The SV lines read by the svmlight reader's compiled tokenizer (which svm-predict has
    loaded for its test file anyway; a model's lines are often millions of numbers): each
    line's n_coef coefficients are split off here and the rest read as an svmlight row.
    None when a line is not plain (too short, a comment mark, qid, "_", indices that do not
    ascend, any fault): the Python parse below then reads the block or names the fault."""
    if any(c in line for line in block for c in "#qQ_"):
        return None  # the reader skips comments and qid tokens; float() reads "1_0"
    coef_rows = []
    rows = []
    for line in block:
        parts = line.split(None, n_coef)
        if len(parts) < n_coef:
            return None
        coef_rows.append(parts[:n_coef])
        rows.append("0 " + parts[n_coef] if len(parts) > n_coef else "0")
    text = "\n".join(rows)
    try:
        buf = np.frombuffer(bytearray(text.encode("latin-1")), dtype=np.uint8)
        _, counts, indices, values, _ = parse_block(buf, 0, 1, "<model>")
        coef = np.array(coef_rows, dtype=np.float64).reshape(n_sv, n_coef).T.copy()
    except (InputFormatError, UnicodeEncodeError, ValueError):
        return None
    if counts.shape[0] != n_sv or not np.isfinite(coef).all():
        return None
    indptr = np.zeros(n_sv + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return coef, indptr, indices, values


def _locate_sv_error(block, start, n_coef, path):
    for i, line in enumerate(block):
        lineno = start + i + 1
        parts = line.split()
        for c in parts[:n_coef]:
            try:
                if "_" in c:
                    raise ValueError
                v = float(c)
            except ValueError:
                raise ModelFormatError(path, f"bad SV coefficient '{c}'", lineno) from None
            if not np.isfinite(v):
                raise ModelFormatError(path, f"SV coefficient '{c}' is not a finite number",
                                       lineno)
        for tok in parts[n_coef:]:
            idx, sep, val = tok.partition(":")
            ok = bool(sep) and ":" not in val and "_" not in tok
            if ok:
                try:
                    iv = int(idx)
                    fv = float(val)
                    ok = 0 <= iv <= 2**31 - 1
                except ValueError:
                    ok = False
            if not ok:
                raise ModelFormatError(path, f"bad SV feature '{tok}' (expected index:value)",
                                       lineno)
            if not np.isfinite(fv):
                raise ModelFormatError(path, f"SV feature value '{tok}' is not a finite number",
                                       lineno)
