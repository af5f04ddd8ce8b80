"""svm-train --solver lasvm --stream (lasvm_cli/solvers/lasvm_stream.py): one sequential pass.

Oracles:
* same example order: the online core's primitives (seed_run, online_step, then the
  finishing of solvers/finishing.py) driven in file order over the in-memory data give the same run, bit for bit
  (same steps, same float32 kernel rows, same tie rules);
* the in-memory one-pass LASVM (random order, lasvm.py's solve_lasvm through train()): dual
  objective within 0.5% and test accuracy within 1 point after finishing.
"""

import lzma

import numpy as np
import pytest

from lasvm_cli.numerics import kernels
from lasvm_cli.numerics.data import Problem
from lasvm_cli.base.errors import InputFormatError, ParameterError
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.training.params import TrainParams
from lasvm_cli.numerics.cache import make_cache
from lasvm_cli.qp import online_core as L
from lasvm_cli.solvers.finishing import start_finishing
from lasvm_cli.solvers.lasvm import result_of
from lasvm_cli.solvers import stream_trainer
from lasvm_cli.solvers.stream_source import StreamError
from lasvm_cli.training.stream import train_stream
from lasvm_cli.numerics.classes import group_classes
from lasvm_cli.training.train import train

from .conftest import shared_file


def file_order_lasvm(path, gamma, C, eps=1e-3, finish=True, stop=None):
    """In-memory LASVM (lasvm.py's primitives) with the stream's order: seeds (first 5 of each
    class), then every other example in file order, the online phase ended after ``stop``
    PROCESS calls (seeds included) when given; returns (obj, rho, n_sv, n_iter)."""
    d = read_svmlight(path)
    pr = Problem.from_svmlight(d, kernel_type=2)
    label = group_classes(d.y)[0]
    y = np.where(np.trunc(d.y) == label[0], 1.0, -1.0)
    kp = kernels.make_params(2, 3, gamma, 0.0)
    l = y.size
    kc = make_cache(l, 100.0)
    st = L.make_state(kc, y, *L.svc_boxes(y, C, C))

    def run(mode, n):
        return L.lasvm_run(st, kc, pr.kd, kp, np.int64(mode), np.int64(n), np.int64(0),
                           np.int64(1), float(eps), np.inf, np.int64(l + 1))

    run(L.MODE_NEW_EPOCH, 0)
    run(L.MODE_SEED, L.N_SEED)
    seeds = set(np.flatnonzero(st.labeled).tolist())
    for ex in range(l):
        if stop is not None and st.ist[L.I_PROCESSED] >= stop:
            break
        if ex not in seeds:
            L.online_step(st, kc, pr.kd, kp, ex, float(eps), np.inf)
    if finish:
        start_finishing(st, kc, pr.kd, kp, float(eps)).run()
    else:
        run(L.MODE_DELTA, 0)
    r = result_of(st, kc)
    return r.obj, r.rho[0], r.n_sv, r.n_iter


def run_stream(path, params, chunk_bytes=1 << 22):
    """svm-train --stream's model of ``params`` over ``path``: the stream's run (the row's
    start function) through the drive loop."""
    return train_stream(str(path), params, stream_trainer(params), chunk_bytes=chunk_bytes)


def stream(path, gamma, C, **kw):
    chunk = kw.pop("chunk_bytes", 1 << 22)
    return run_stream(path, TrainParams(solver="lasvm", gamma=gamma, C=C, **kw), chunk)


def accuracy(model, path):
    d = read_svmlight(path)
    kd = Problem.from_svmlight(d).kd
    return 100.0 * float((model.predict(kd) == d.y).mean())


@pytest.fixture(scope="module")
def adult2000(tmp_path_factory):
    """First 2000 rows of adult train and test (LASVM_DATA)."""
    out = {}
    for part in ("train", "test"):
        src = shared_file("adult", part)
        dst = tmp_path_factory.mktemp("adult") / f"{part}2000.svm"
        with lzma.open(src, "rb") as f, open(dst, "wb") as g:
            for _ in range(2000):
                g.write(f.readline())
        out[part] = dst
    return out


@pytest.mark.parametrize("finish", [True, False])
def test_same_order_as_in_memory_heart(heart_path, finish):
    obj, rho, n_sv, n_iter = file_order_lasvm(heart_path, 1 / 13, 1.0, finish=finish)
    m = stream(heart_path, 1 / 13, 1.0, finish=finish)
    assert m.counters["obj"] == obj
    assert m.rho[0] == pytest.approx(rho, abs=1e-12)
    assert m.total_sv == n_sv
    assert m.counters["iterations"] == n_iter


def test_same_order_as_in_memory_adult(adult2000):
    obj, rho, n_sv, n_iter = file_order_lasvm(adult2000["train"], 0.01, 1.0)
    m = stream(adult2000["train"], 0.01, 1.0, chunk_bytes=20000)  # many blocks
    assert m.counters["obj"] == pytest.approx(obj, rel=1e-9)
    assert m.rho[0] == pytest.approx(rho, abs=1e-6)
    assert m.total_sv == n_sv
    assert m.counters["iterations"] == n_iter


def _in_memory(path, gamma, C):
    d = read_svmlight(path)
    pr = Problem.from_svmlight(d, kernel_type=2)
    model = train(pr, TrainParams(solver="lasvm", gamma=gamma, C=C))
    return model, model.counters


@pytest.mark.parametrize("which", ["heart", "adult"])
def test_one_pass_close_to_in_memory(which, heart_path, request):
    if which == "heart":
        tr = te = heart_path
        gamma = 1 / 13
    else:
        a = request.getfixturevalue("adult2000")
        tr, te = a["train"], a["test"]
        gamma = 0.01
    mem, _ = _in_memory(tr, gamma, 1.0)
    m = stream(tr, gamma, 1.0)
    # the model's objective: LIBSVM's 0.5 a'Qa - e'a, recomputed from each model's SVs
    def obj(model):
        kd = model.sv_data()
        K = np.empty((model.total_sv, model.total_sv))
        kp = model.kernel_params()
        for i in range(model.total_sv):
            kernels.kernel_row_serial(kd, i, kd, np.arange(model.total_sv), kp, K[i])
        a = model.sv_coef[0]
        return 0.5 * a @ K @ a - np.abs(a).sum()
    o_mem, o_str = obj(mem), obj(m)
    assert abs(o_str - o_mem) <= 0.005 * abs(o_mem)
    assert abs(accuracy(m, te) - accuracy(mem, te)) <= 1.0


def test_feature_width_grows(tmp_path, heart_path):
    """Rows with ever larger indices: the store widens (one column per index that occurs,
    new ones inserted in order); same run as in memory."""
    d = read_svmlight(heart_path)
    lines = []
    for i in range(d.n):
        lo, hi = d.indptr[i], d.indptr[i + 1]
        shift = 20 * (i // 50)  # features move to higher columns as the file goes on
        pairs = " ".join(f"{int(c) + shift}:{v:.6g}" for c, v in zip(d.indices[lo:hi],
                                                                    d.values[lo:hi]))
        lines.append(f"{int(d.y[i])} {pairs}\n")
    path = tmp_path / "wide.svm"
    path.write_text("".join(lines))
    obj, rho, n_sv, _ = file_order_lasvm(path, 0.05, 1.0)
    m = stream(path, 0.05, 1.0, chunk_bytes=3000)
    assert m.counters["store_width"] == np.unique(read_svmlight(path).indices).size
    assert m.counters["obj"] == pytest.approx(obj, rel=1e-6)
    assert m.total_sv == n_sv
    assert m.sv_indices.max() > 100
    assert accuracy(m, path) > 80


def test_third_label_names_file_and_line(tmp_path):
    path = tmp_path / "three.svm"
    path.write_text("1 1:1\n-1 1:-1\n# a comment line\n1 1:0.5\n2 1:0.3\n")
    with pytest.raises(InputFormatError) as e:
        stream(path, 1.0, 1.0)
    assert e.value.line == 5
    assert str(path) in str(e.value) and "two classes" in str(e.value)


def test_one_class_is_an_error(tmp_path):
    path = tmp_path / "one.svm"
    path.write_text("1 1:1\n1 1:-1\n")
    with pytest.raises(StreamError, match="two classes"):
        stream(path, 1.0, 1.0)


def test_label_order_libsvm(tmp_path):
    """-1 first then +1: +1 still comes first (LIBSVM's swap); other labels: file order."""
    rows = ["-1 1:-1 2:0.2", "-1 1:-0.8", "1 1:1", "1 1:0.9 2:0.1"] * 4
    path = tmp_path / "pm.svm"
    path.write_text("\n".join(rows) + "\n")
    m = stream(path, 1.0, 1.0)
    assert list(m.label) == [1, -1]
    assert (m.predict(Problem.from_svmlight(read_svmlight(path)).kd) ==
            read_svmlight(path).y).all()
    path2 = tmp_path / "57.svm"
    path2.write_text("\n".join(r.replace("-1 ", "7 ", 1).replace("1 1:", "5 1:", 1)
                               if r.startswith("1 ") else r.replace("-1 ", "7 ", 1)
                               for r in rows) + "\n")
    m2 = stream(path2, 1.0, 1.0)
    assert list(m2.label) == [7, 5]


def test_missing_gamma(heart_path, tmp_path):
    from lasvm_cli.cli.train import main

    with pytest.raises(ParameterError, match="needs -g"):
        main(["--solver", "lasvm", "--stream", "-q", heart_path, str(tmp_path / "m")])
    # linear kernel: no gamma needed
    assert main(["--solver", "lasvm", "--stream", "-q", "-t", "0", heart_path,
                 str(tmp_path / "m")]) == 0


def test_stream_needs_lasvm(heart_path, tmp_path):
    from lasvm_cli.cli.train import main

    with pytest.raises(ParameterError, match="--solver lasvm"):
        main(["--stream", "-g", "0.1", heart_path, str(tmp_path / "m")])


@pytest.mark.parametrize("selection", ["active", "gradient", "autoactive"])
def test_candidate_window_independent_of_blocks(heart_path, selection):
    """The window carries over block boundaries: tiny blocks give the same run."""
    a = stream(heart_path, 1 / 13, 1.0, selection=selection, candidates=10,
               chunk_bytes=700)
    b = stream(heart_path, 1 / 13, 1.0, selection=selection, candidates=10)
    assert a.counters["obj"] == b.counters["obj"]
    assert a.counters["processed"] == 270 == b.counters["processed"]
    assert accuracy(a, heart_path) > 80


def test_small_cache_same_result(heart_path):
    """-m bounds the row cache; a tiny cache recomputes rows but gives the same run."""
    a = stream(heart_path, 1 / 13, 1.0, cache_size=0.01)
    b = stream(heart_path, 1 / 13, 1.0)
    assert a.counters["cache_rows"] < b.counters["cache_rows"]
    assert a.counters["obj"] == b.counters["obj"]
    assert a.counters["kernel_evals"] > b.counters["kernel_evals"]


def test_cli_writes_libsvm_model(heart_path, tmp_path, capsys):
    from lasvm_cli.cli.train import main
    from lasvm_cli.io.model_file import read_model

    out = tmp_path / "h.model"
    assert main(["--solver", "lasvm", "--stream", "-g", str(1 / 13), heart_path,
                 str(out)]) == 0
    text = capsys.readouterr().out
    for key in ("optimization finished, #iter =", "nu =", "obj =", "nSV =", "Total nSV ="):
        assert key in text
    model = read_model(out)
    assert list(model.label) == [1, -1] and model.total_sv == int(model.nSV.sum())
    assert accuracy(model, heart_path) > 80


# ---------------------------------------------------------------------------------------------
# all-in-one machines: --multiclass llw|cs --solver online --stream (solvers/s2do_stream.py)


def write_classes(path, labels, n=300, seed=21, dim=5, late=None):
    """Gaussian classes (one centre per label), dense rows written sparse. ``late``: (label,
    row): that label's first row is ``row`` (no row of it before)."""
    rng = np.random.default_rng(seed)
    k = len(labels)
    centres = rng.normal(size=(k, dim)) * 1.2
    yc = rng.integers(0, k, n)
    if late is not None:
        c = labels.index(late[0])
        yc[:late[1]] = np.where(yc[:late[1]] == c, (c + 1) % k, yc[:late[1]])
        yc[late[1]] = c
    X = centres[yc] + rng.normal(size=(n, dim))
    with open(path, "w") as f:
        for y, x in zip(np.array(labels)[yc], X):
            f.write(f"{y} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x)) + "\n")
    return path


def allinone_params(scheme, **kw):
    return TrainParams(solver="online", multiclass=scheme, gamma=kw.pop("gamma", 0.5),
                       C=kw.pop("C", 2.0), **kw)


def stream_allinone(path, params, chunk_bytes=1 << 22):
    return run_stream(path, params, chunk_bytes)


def in_memory_file_order(path, params, kernel_cost, monkeypatch):
    """The in-memory one-pass run (train_allinone, --epochs 1) with the stream's order (file
    order instead of the --seed permutation) and its kernel cost (the scheduling's cost of a
    kernel value), on float64 rows without the transposed copy or the by-column index of sparse
    rows (whole rows per example would count other kernel values)."""
    from lasvm_cli.numerics.kernels import NO_CSC, NO_XT
    from lasvm_cli.solvers import s2do_online
    from lasvm_cli.training.allinone import train_allinone

    d = read_svmlight(str(path))
    pr = Problem.from_svmlight(d, kernel_type=params.kernel_type, x_storage="float64")
    pr.kd = pr.kd._replace(XT=NO_XT, csc=NO_CSC)
    order = np.argsort(group_classes(d.y)[3]).astype(np.int64)  # file row -> grouped example

    class FileOrder:
        def permutation(self, l):
            assert l == order.size
            return order

    setup = s2do_online.S2doRun._setup

    def file_order_setup(run):
        setup(run)
        run._rng = FileOrder()
        run._kcost = kernel_cost

    monkeypatch.setattr(s2do_online.S2doRun, "_setup", file_order_setup)
    quiet = lambda _m: None  # noqa: E731
    return train_allinone(pr, params, None, quiet, quiet, None, None)


def model_text(model, path):
    from lasvm_cli.io.model_file import write_model

    write_model(model, path)
    return path.read_bytes()


@pytest.mark.parametrize("scheme", ["llw", "cs"])
@pytest.mark.parametrize("chunk, printed", [(1 << 22, False), (700, False), (700, True)])
def test_allinone_stream_is_the_in_memory_pass_in_file_order(tmp_path, scheme, chunk, printed,
                                                              monkeypatch):
    """Same order, same classes from the first block, the whole cache: the same model file,
    byte for byte (one block, or blocks of about 700 bytes: 12 rows), through slot growth;
    with the default schedule and with the thesis's printed one (--step-schedule steps, and for CS
    --cs-second gradient)."""
    path = write_classes(tmp_path / "four.svm", [7, -1, 3, 2])
    first = open(path).read(chunk).splitlines()[:-1] if chunk < 1 << 22 else None
    if first is not None:  # every class in the first block
        assert {ln.split()[0] for ln in first} == {"7", "-1", "3", "2"}
    options = dict(schedule="steps", cs_second="gradient" if scheme == "cs" else "gain")
    p = allinone_params(scheme, **(options if printed else {}))
    m = stream_allinone(path, p, chunk)
    assert m.counters["store_slots"] > 64 and m.counters["classes_grown"] == 0
    mem = in_memory_file_order(path, p, m.counters["kernel_cost"], monkeypatch)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")
    assert m.counters["kernel_evals"] == mem.counters["kernel_evals"]
    y = read_svmlight(str(path)).y
    first = [int(v) for v in y[np.sort(np.unique(y, return_index=True)[1])]]
    assert list(m.label) == first and first != sorted(first)  # order of first appearance


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_allinone_stream_two_classes_libsvm_order(tmp_path, scheme, monkeypatch):
    """-1 before +1: LIBSVM's label order puts +1 first, as the in-memory machine (same model
    file); a linear kernel needs no -g."""
    path = write_classes(tmp_path / "pm.svm", [-1, 1], n=150, seed=4)
    assert open(path).readline().startswith("-1 ")
    p = allinone_params(scheme, kernel_type=0, gamma=0.0)
    m = stream_allinone(path, p)
    assert list(m.label) == [1, -1]
    mem = in_memory_file_order(path, p, m.counters["kernel_cost"], monkeypatch)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")


@pytest.mark.parametrize("scheme", ["llw", "cs"])
def test_allinone_stream_class_first_appearing_late(tmp_path, scheme):
    """A class first seen after the first block grows the machine (one more class, W's
    gradients recomputed); labels stay in LIBSVM's order of first appearance over the file
    ({-1,+1} of the first block swapped there, not in the model's three labels), the model
    predicts every class, and close to the in-memory machine."""
    path = write_classes(tmp_path / "late.svm", [-1, 1, 4], n=400, seed=3, late=(4, 250))
    d = read_svmlight(str(path))
    assert int(np.flatnonzero(d.y == 4)[0]) == 250
    p = allinone_params(scheme)
    m = stream_allinone(path, p, chunk_bytes=2000)
    assert m.counters["classes_grown"] == 1
    assert list(m.label) == [-1, 1, 4]
    kd = Problem.from_svmlight(d).kd
    pred = m.predict(kd)
    assert set(np.unique(pred)) == {-1, 1, 4}
    mem = train(Problem.from_svmlight(d), p)
    assert abs(100 * float((pred == d.y).mean()) -
               100 * float((mem.predict(kd) == d.y).mean())) <= 2.0
    one = stream_allinone(path, p)  # one block: every class known from the start
    assert one.counters["classes_grown"] == 0 and list(one.label) == [-1, 1, 4]


def train_late_class_cli(tmp_path, capsys, options, multiclass, n, late_from):
    """svm-train --stream OPTIONS on classes 2, 1, 3 (class 3 from row ``late_from`` on):
    LIBSVM's summary lines on stdout, the model's kind and labels in order of first appearance;
    returns the model's path."""
    from lasvm_cli.cli.train import main
    from lasvm_cli.io.model_file import read_model

    path = write_classes(tmp_path / "late.svm", [2, 1, 3], n=n, seed=5, late=(3, late_from))
    out = tmp_path / "m"
    assert main(options + ["--multiclass", multiclass, "--stream", "-g", "0.5",
                           str(path), str(out)]) == 0
    text = capsys.readouterr().out
    for key in ("optimization finished, #iter =", "obj =", "Total nSV ="):
        assert key in text
    model = read_model(out)
    assert model.multiclass == multiclass and list(model.label) == [2, 1, 3]
    return out


def test_allinone_stream_cli_and_late_class_message(tmp_path, capsys):
    train_late_class_cli(tmp_path, capsys, ["--solver", "online"], "cs", n=200, late_from=150)


def test_allinone_stream_one_class_is_an_error(tmp_path):
    path = tmp_path / "one.svm"
    path.write_text("3 1:1\n3 1:-1\n")
    with pytest.raises(StreamError, match="at least two classes"):
        stream_allinone(path, allinone_params("llw"))


@pytest.mark.parametrize("args, message", [
    (["--solver", "lasvm", "--multiclass", "ovr", "--selection", "active"],
     "(--selection random)"),
    (["--solver", "lasvm", "--multiclass", "ovr", "--epochs", "2"], "--epochs must be 1"),
    (["--solver", "smo", "--multiclass", "ovr"], "not --solver smo --multiclass ovr"),
    (["--solver", "lasvm-g", "--multiclass", "ovr"], "not --solver lasvm-g --multiclass ovr"),
    (["--solver", "lasvm-nc"], "two classes: third label"),  # an input error (FILE:LINE)
    (["--solver", "track1"], "--solver track1"),
    (["--solver", "smo"], "not --solver smo"),
    (["--solver", "smo", "--multiclass", "llw"], "not --solver smo --multiclass llw"),
    (["--solver", "online", "--multiclass", "cs", "--epochs", "2"], "--epochs must be 1"),
    (["--solver", "online", "--multiclass", "llw", "-b", "1"], "-b 1"),
])
def test_stream_unsupported_combinations(tmp_path, args, message):
    """Exit status 1 and an ERROR: line naming what --stream trains."""
    path = write_classes(tmp_path / "three.svm", [1, 2, 3], n=30)
    from click.testing import CliRunner

    from lasvm_cli.cli.main import svm_train

    r = CliRunner().invoke(svm_train, ["--stream", "-g", "0.5", *args, str(path),
                                       str(tmp_path / "m")])
    assert r.exit_code == 1, (r.stdout, r.stderr)
    if "third label" in message:
        assert r.stderr.startswith(f"{path}:4: ") and "--multiclass llw|cs --solver online" \
            in r.stderr, r.stderr
    else:
        assert r.stderr.startswith("ERROR: "), r.stderr
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "m").exists()


# ---------------------------------------------------------------------------------------------
# LASVM-G, -NC, -I and FULL SVM: --solver lasvm-g|lasvm-nc|lasvm-i|full-svm --stream
# (solvers/lasvm_g_stream.py)

G_SOLVERS = ["lasvm-g", "lasvm-nc", "lasvm-i", "full-svm"]


def g_file_order_driver(order):
    """A driver for train.train (lasvm_cli/training/driver.py): the in-memory LasvmGRun
    (lasvm_nc.py) taking its one epoch's examples in ``order`` (grouped index of each file row)
    instead of random draws."""
    from lasvm_cli.training.driver import Direct
    from lasvm_cli.qp import lasvm_g_core as G
    from lasvm_cli.solvers.lasvm_nc import LasvmGRun

    class FileOrder(Direct):
        def solve(self, machine, p, progress=None):
            return solve(machine.kd, machine.y, machine.Cp, machine.Cn, p)

    def solve(kd, y, Cp, Cn, p, progress=None):
        run = LasvmGRun(kd, kernels.make_params(p.kernel_type, p.degree, p.gamma, p.coef0), y,
                        Cp, Cn, solver=p.solver, ramp_s=p.ramp_s, sv_threshold=p.sv_threshold,
                        clean_every=p.clean_every, clean_keep=p.clean_keep, eps=p.eps,
                        cache_mb=p.cache_size, finish=p.finish_tau,
                        reprocess=p.reprocess or "one", ramp_start=p.ramp_start)
        run.begin()
        variant, s, sv_thr, start, clean_every, clean_keep, Cp_, Cn_, C, tau, pair = run._args
        for lo in range(0, order.size, L.CHUNK):
            L.fit_width(run.kc, run.st)
            for ex in order[lo:lo + L.CHUNK]:
                G.iteration(run.st, run.kc, run.kd, run.kp, ex, variant, s, sv_thr, start, Cp_,
                            Cn_, C, tau, pair, run.region, run.gst, run.gfs)
                if variant != G.V_FULL and run.gst[G.G_SINCE_CLEAN] >= clean_every:
                    G.clean(run.st, run.kc, clean_keep, run.gst, run.region)
                    run.gst[G.G_SINCE_CLEAN] = 0
        run.st.ist[L.I_EPOCH] += 1
        if run.finish_tau:
            while not run._g(G.M_FINISH, L.CHUNK):
                pass
        run._end()
        return run.result()

    return FileOrder()


@pytest.mark.parametrize("solver", G_SOLVERS)
@pytest.mark.parametrize("finish_tau", [False, True])
def test_g_family_stream_is_the_in_memory_pass_in_file_order(heart_path, tmp_path, solver,
                                                             finish_tau):
    """Same order: the same model file, byte for byte (small blocks: the rows cross block
    boundaries and the store grows)."""
    d = read_svmlight(heart_path)
    p = TrainParams(solver=solver, gamma=1 / 13, C=1.0, finish_tau=finish_tau)

    m = run_stream(heart_path, p, 3000)
    order = np.argsort(group_classes(d.y)[3]).astype(np.int64)
    mem = train(Problem.from_svmlight(d, kernel_type=2), p, driver=g_file_order_driver(order))
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")
    assert m.total_sv > 0 and list(m.label) == [1, -1]
    assert accuracy(m, heart_path) > 75


def test_g_family_stream_cli(heart_path, tmp_path):
    from lasvm_cli.cli.train import main
    from lasvm_cli.io.model_file import read_model

    out = tmp_path / "h.model"
    assert main(["--solver", "lasvm-i", "--stream", "-q", "-g", str(1 / 13), heart_path,
                 str(out)]) == 0
    assert "rho 0\n" in out.read_text()
    model = read_model(out)
    assert list(model.label) == [1, -1] and accuracy(model, heart_path) > 75


# ---------------------------------------------------------------------------------------------
# one-vs-rest LASVM: --multiclass ovr --solver lasvm --stream (solvers/lasvm_ovr_stream.py)


def ovr_file_order_driver(path, starts):
    """A driver for training/ovr.py's train_ovr: each machine (class c against the rest) runs
    the online core in memory on the file's rows from row ``starts[label]`` on, in file order,
    PROCESS alone for the first N_SEED examples of each side, PROCESS + REPROCESS for the
    others, then the finishing step: the stream's rule, one machine after the other."""
    from lasvm_cli.training.driver import Direct

    y_file = read_svmlight(str(path)).y
    label, _, _, perm = group_classes(y_file)
    grouped_of_row = np.argsort(perm)

    class FileOrder(Direct):
        def begin(self, machines, assemble):
            self.labels = [lab[0] for _, lab in machines]
            self.c = 0

        def solve(self, machine, p, progress=None):
            v = int(self.labels[self.c])
            self.c += 1
            kd, kp, y, Cp, Cn = machine[:5]
            kc = make_cache(y.size, 100.0)
            st = L.make_state(kc, y, *L.svc_boxes(y, Cp, Cn))
            seeds = [0, 0]
            for row in range(starts[v], y_file.size):
                ex = int(grouped_of_row[row])
                side = 0 if y[ex] > 0 else 1
                if seeds[side] < L.N_SEED:
                    seeds[side] += 1
                    L.process(st, kc, kd, kp, ex, float(p.eps))
                else:
                    L.online_step(st, kc, kd, kp, ex, float(p.eps), np.inf)
            if p.finish:
                start_finishing(st, kc, kd, kp, float(p.eps)).run()
            else:
                L.lasvm_run(st, kc, kd, kp, np.int64(L.MODE_DELTA), np.int64(0), np.int64(0),
                            np.int64(1), 0.0, np.inf, np.int64(1))
            return result_of(st, kc)

    return FileOrder()


def ovr_stream(path, chunk_bytes=1 << 22, **kw):
    p = TrainParams(solver="lasvm", multiclass="ovr", gamma=kw.pop("gamma", 0.5),
                    C=kw.pop("C", 2.0), **kw)
    return p, run_stream(path, p, chunk_bytes)


def ovr_in_memory(path, p, m):
    from lasvm_cli.training.ovr import train_ovr

    d = read_svmlight(str(path))
    pr = Problem.from_svmlight(d, kernel_type=p.kernel_type)
    starts = dict(zip((int(v) for v in m.label), m.counters["start_rows"]))
    quiet = lambda _m: None  # noqa: E731
    return train_ovr(pr, p, None, quiet, quiet, None, None,
                     driver=ovr_file_order_driver(path, starts))


@pytest.mark.parametrize("finish", [True, False])
@pytest.mark.parametrize("chunk", [1 << 22, 700])
def test_ovr_stream_is_the_in_memory_pass_in_file_order(tmp_path, chunk, finish):
    """Same order, same seeds: the same model file as training/ovr.py's, byte for byte (one
    block, or blocks of about 700 bytes: the rows cross block boundaries, the store grows)."""
    path = write_classes(tmp_path / "four.svm", [7, -1, 3, 2], n=400)
    first = open(path).read(chunk).splitlines()[:-1] if chunk < 1 << 22 else None
    if first is not None:  # every class in the first block
        assert {ln.split()[0] for ln in first} == {"7", "-1", "3", "2"}
    p, m = ovr_stream(path, chunk, finish=finish)
    assert m.counters["store_slots"] > 64 and m.counters["classes_late"] == 0
    assert m.counters["start_rows"] == [0, 0, 0, 0]
    mem = ovr_in_memory(path, p, m)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")
    y = read_svmlight(str(path)).y
    first = [int(v) for v in y[np.sort(np.unique(y, return_index=True)[1])]]
    assert m.multiclass == "ovr" and list(m.label) == first  # order of first appearance
    assert m.total_sv == int(m.nSV.sum()) and accuracy(m, path) > 80


@pytest.fixture(scope="module")
def usps600(tmp_path_factory):
    """The first 600 rows of usps train (LASVM_DATA): 10 classes, 256 dense features."""
    src = shared_file("usps", "train")
    dst = tmp_path_factory.mktemp("usps") / "train600.svm"
    with lzma.open(src, "rb") as f, open(dst, "wb") as g:
        for _ in range(600):
            g.write(f.readline())
    return dst


def test_ovr_stream_usps_small_blocks(usps600, tmp_path):
    """Ten classes, blocks of about 50 rows (class 9 first in the second block), weights on
    two classes: the in-memory machines in file order, with the same start rows, write the
    same model file."""
    d = read_svmlight(str(usps600))
    chunk = 100_000
    p, m = ovr_stream(usps600, chunk, gamma=1 / 256, C=10.0, weights={1: 2.0, 7: 0.5})
    head = tmp_path / "first_block.svm"
    head.write_bytes(open(usps600, "rb").read(chunk).rsplit(b"\n", 1)[0] + b"\n")
    first_block = read_svmlight(str(head))
    assert np.unique(d.y).size == 10 and first_block.n < d.n
    # class 9 first appears after the first block: its machine starts later
    assert m.counters["classes_late"] == 10 - np.unique(first_block.y).size == 1
    mem = ovr_in_memory(usps600, p, m)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")
    assert m.counters["store_slots"] > 64 and m.counters["max_live_slots"] < d.n
    assert accuracy(m, usps600) > 95


def test_ovr_stream_class_first_appearing_late(tmp_path, capsys):
    """A class first seen in a later block starts its machine at that block's first row: the
    in-memory machines with the same start rows write the same model file; the late machine
    still predicts its class. With one block every machine starts at row 0."""
    path = write_classes(tmp_path / "late.svm", [-1, 1, 4], n=400, seed=3, late=(4, 250))
    d = read_svmlight(str(path))
    assert int(np.flatnonzero(d.y == 4)[0]) == 250
    p, m = ovr_stream(path, 2000)
    starts = dict(zip((int(v) for v in m.label), m.counters["start_rows"]))
    assert m.counters["classes_late"] == 1 and starts[-1] == starts[1] == 0
    assert 0 < starts[4] <= 250
    assert list(m.label) == [-1, 1, 4]  # order of first appearance (three labels: no swap)
    mem = ovr_in_memory(path, p, m)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")
    pred = m.predict(Problem.from_svmlight(d).kd)
    assert set(np.unique(pred)) == {-1, 1, 4} and 100 * float((pred == d.y).mean()) > 75
    _, one = ovr_stream(path)
    assert one.counters["classes_late"] == 0 and one.counters["start_rows"] == [0, 0, 0]


def test_ovr_stream_two_classes(tmp_path):
    """Two classes, -1 first: LIBSVM's order puts +1 first; the same file as in memory."""
    path = write_classes(tmp_path / "pm.svm", [-1, 1], n=150, seed=4)
    assert open(path).readline().startswith("-1 ")
    p, m = ovr_stream(path, 900)
    assert list(m.label) == [1, -1] and m.nr_class == 2
    mem = ovr_in_memory(path, p, m)
    assert model_text(m, tmp_path / "s.model") == model_text(mem, tmp_path / "m.model")


def test_ovr_stream_one_class_is_an_error(tmp_path):
    path = tmp_path / "one.svm"
    path.write_text("3 1:1\n3 1:-1\n")
    with pytest.raises(StreamError, match="at least two classes"):
        ovr_stream(path)


def test_ovr_stream_cli_and_predict(tmp_path, capsys):
    """svm-train --stream --solver lasvm --multiclass ovr, then svm-predict."""
    from lasvm_cli.cli.predict import main as predict

    out = train_late_class_cli(tmp_path, capsys, ["--solver", "lasvm"], "ovr", n=300,
                               late_from=200)
    test = write_classes(tmp_path / "test.svm", [2, 1, 3], n=300, seed=5)
    assert predict([str(test), str(out), str(tmp_path / "pred")]) == 0
    acc = float(capsys.readouterr().out.split("Accuracy = ")[1].split("%")[0])
    assert acc > 75


def test_ovr_stream_caches_share_the_cache_size():
    """-m is the machines' caches together: a new class's machine takes its share out of the
    others', and a grown store's caches stay within it."""
    from lasvm_cli.solvers.lasvm_ovr_stream import _OvrStore

    mb = 8.0
    store = _OvrStore(mb, cap=2000)
    kp = kernels.make_params(kernels.RBF, gamma=0.5)
    for c in range(4):
        store.add_machine(c + 1, 1.0, 1.0, 0, kp)
        assert sum(m.kc.buf.nbytes for m in store.machines) <= mb * 2**20
    store.grow(10)
    assert sum(m.kc.buf.nbytes for m in store.machines) <= mb * 2**20
    assert all(m.kc.perm.shape[0] == store.cap for m in store.machines)


def test_regrown_cache_releases_the_old_rows_first(monkeypatch):
    """The old row storage is freed before the new one is taken: the two never add up."""
    import types
    import weakref

    from lasvm_cli.numerics import cache as kc

    owner = types.SimpleNamespace(kc=kc.make_cache(50, 1.0))
    owner.kc.perm[:] = np.arange(50)[::-1]
    owner.kc.stats[2] = 77
    old_buf = weakref.ref(owner.kc.buf)
    seen = []
    make = kc.make_cache

    def watched(*args, **kwargs):
        seen.append(old_buf() is None)
        return make(*args, **kwargs)

    monkeypatch.setattr(kc, "make_cache", watched)
    new = kc.regrow_cache(owner, "kc", 80, 1.0)
    assert seen == [True] and owner.kc is new
    assert list(new.perm) == list(range(50))[::-1] + list(range(50, 80))
    assert new.stats[2] == 77


@pytest.mark.parametrize("kind", ["lasvm", "lasvm-g", "ovr", "cs"])
def test_streamed_svs_keep_entries_stored_as_zero(tmp_path, kind):
    """``3:0`` in the file stays in the model's SVs, as LIBSVM and the in-memory path write
    it: every row stores feature 6 as 0, and every other row feature 3."""
    from lasvm_cli.io.model_file import write_model
    labels = [1, -1] if kind in ("lasvm", "lasvm-g") else [2, 1, 3]
    plain = write_classes(tmp_path / "plain.svm", labels, n=240, seed=9)
    path = tmp_path / "zeros.svm"
    with open(plain) as f, open(path, "w") as g:
        for i, line in enumerate(f):
            words = line.split()
            if i % 2 == 0:
                words[3] = "3:0"
            g.write(" ".join(words + ["6:0"]) + "\n")
    solver, multiclass = {"lasvm": ("lasvm", "ovo"), "lasvm-g": ("lasvm-g", "ovo"),
                          "ovr": ("lasvm", "ovr"), "cs": ("online", "cs")}[kind]
    p = TrainParams(solver=solver, multiclass=multiclass, gamma=0.5, C=2.0)
    model = run_stream(path, p, 2000)  # blocks of about 30 rows
    write_model(model, tmp_path / "m")
    sv_lines = (tmp_path / "m").read_text().split("\nSV\n")[1].splitlines()
    assert len(sv_lines) > 10
    for line in sv_lines:
        entries = dict(w.split(":") for w in line.split() if ":" in w)
        assert sorted(entries, key=int) == ["1", "2", "3", "4", "5", "6"]
        assert entries["6"] == "0"
