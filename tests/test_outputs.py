"""Output files and streams: no progress bar on a pipe (LIBSVM's grid.py never reads
svm-train's stderr), atomic replacement that keeps symlinks, write-through for devices and
named pipes, and a full disk reported as a message, never a traceback."""

import errno
import fcntl
import io
import os
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from lasvm_cli.cli import scale as cli_scale
from lasvm_cli.cli.main import svm_predict, svm_train
from lasvm_cli.base.progress import SolverProgress, progress_factory
from lasvm_cli.cli.report import run_guarded
from lasvm_cli.base.errors import OutputError
from lasvm_cli.io.atomic import atomic_write, output_problem

from .conftest import HEART

F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032  # Linux fcntl commands


def test_train_under_a_stderr_pipe_nobody_reads(tmp_path):
    """grid.py runs svm-train with stderr=PIPE and never reads it. The pipe here is shrunk and
    filled up to 256 bytes, so a progress bar (~500 bytes/s before this fix) blocks svm-train
    within two seconds; the run must finish and add nothing to the pipe."""
    warm = CliRunner().invoke(svm_train, ["-q", "--solver", "lasvm", "--stop-seconds", "0.01",
                                          str(HEART), str(tmp_path / "warm")])
    assert warm.exit_code == 0, warm.stderr  # compiles here (JIT cache) rather than below
    rfd, wfd = os.pipe()
    try:
        try:
            fcntl.fcntl(wfd, F_SETPIPE_SZ, 4096)
        except OSError:
            pass
        filler = b"x" * (fcntl.fcntl(wfd, F_GETPIPE_SZ) - 256)
        os.write(wfd, filler)
        cmd = [sys.executable, "-c", "from lasvm_cli.cli.main import svm_train; svm_train()",
               "--solver", "lasvm", "--epochs", "1000000", "--stop-seconds", "2", str(HEART),
               str(tmp_path / "m")]
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=wfd)
        os.close(wfd)
        wfd = None
        try:
            rc = proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("svm-train blocked on a full stderr pipe")
        os.set_blocking(rfd, False)
        data = b""
        while True:
            try:
                chunk = os.read(rfd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        os.close(rfd)
        if wfd is not None:
            os.close(wfd)
    assert rc == 0
    assert data == filler  # not one byte of progress
    assert (tmp_path / "m").read_text().startswith("svm_type c_svc\n")


def test_progress_only_on_a_terminal():
    assert progress_factory(False, io.StringIO()) is None
    assert progress_factory(True, io.StringIO()) is None
    with open(os.devnull, "w") as f:
        assert progress_factory(False, f) is None
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "w") as tty:
            assert progress_factory(False, tty) is SolverProgress
            assert progress_factory(True, tty) is None
    finally:
        os.close(master)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "heart.model"
    r = CliRunner().invoke(svm_train, ["-q", str(HEART), str(path)])
    assert r.exit_code == 0, r.stderr
    return path


def _predict(args):
    r = CliRunner().invoke(svm_predict, [str(a) for a in args])
    assert "Traceback" not in r.stderr
    return r


def test_predict_to_dev_stdout(model, tmp_path):
    ref = tmp_path / "ref"
    assert _predict([HEART, model, ref]).exit_code == 0
    r = _predict([HEART, model, "/dev/stdout"])
    assert r.exit_code == 0, r.stderr
    # the predictions, then LIBSVM's summary line, in order on the same stream
    assert r.stdout == ref.read_text() + "Accuracy = 86.6667% (234/270) (classification)\n"


def test_predict_into_a_symlink_keeps_the_link(model, tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert _predict(["-q", HEART, model, link]).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(target.read_text().splitlines()) == 270
    assert os.stat(target).st_mode & 0o777 == 0o640  # the replaced file keeps its mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "target.txt"]


def test_predict_into_a_named_pipe(model, tmp_path):
    ref = tmp_path / "ref"
    assert _predict(["-q", HEART, model, ref]).exit_code == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = _predict(["-q", HEART, model, fifo])
    reader.join(timeout=60)
    assert r.exit_code == 0, r.stderr
    assert got == [ref.read_bytes()]
    assert fifo.is_fifo()  # still a pipe, not replaced by a regular file


def test_predict_to_dev_null(model):
    r = _predict([HEART, model, "/dev/null"])
    assert r.exit_code == 0 and r.stdout.startswith("Accuracy = ")
    assert not os.path.isfile("/dev/null")


def test_output_problem():
    assert output_problem("/dev/null") is None
    assert output_problem("/") == "is a directory"
    assert output_problem("/nonexistent-dir/x") == "no such directory /nonexistent-dir"
    assert output_problem(str(HEART) + "/x") == f"{HEART} is not a directory" or \
        output_problem(str(HEART) + "/x") == "Not a directory"
    assert output_problem("") == "empty file name"


def test_atomic_write_full_disk_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "out"
    path.write_text("old\n")

    def full(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError) as info:
        with atomic_write(path) as f:
            f.write("new\n")
    assert str(info.value) == f"can't write {path}: No space left on device"
    assert isinstance(info.value, OSError)
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out"]


def test_scale_output_on_a_full_disk(tmp_path, monkeypatch, capsys):
    """svm-scale data > /dev/full: one message, exit 1, and stdout is then pointed at
    /dev/null so that the interpreter's last flush does not fail again."""
    full = io.TextIOWrapper(open("/dev/full", "wb"), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", full)
    rc = run_guarded(cli_scale.main, [str(HEART)])
    assert rc == 1
    assert capsys.readouterr().err == "can't write standard output: No space left on device\n"
    full.write("more")
    full.flush()  # fd now on /dev/null: no error
    full.close()


def test_compile_notice_once_and_only_when_compiling(monkeypatch):
    """A first run's JIT compilation says so in one line on stderr (base/progress.py); loading
    from the cache fires no compile event, -q and LASVM_COMPILE_NOTICE=0 silence it."""
    import numba

    from lasvm_cli.base import progress

    def compile_something(k):
        numba.njit(lambda x: x + k)(1)  # a new function: a real compilation

    buf = io.StringIO()
    monkeypatch.setenv("LASVM_COMPILE_NOTICE", "1")
    progress.announce_compilation("svm-train", quiet=True, stream=buf)
    compile_something(1)
    assert buf.getvalue() == ""
    monkeypatch.setenv("LASVM_COMPILE_NOTICE", "0")
    progress.announce_compilation("svm-train", stream=buf)
    compile_something(2)
    assert buf.getvalue() == ""
    monkeypatch.setenv("LASVM_COMPILE_NOTICE", "1")
    progress.announce_compilation("svm-train", stream=buf)
    compile_something(3)
    compile_something(4)
    assert buf.getvalue() == progress.COMPILE_NOTICE.format(program="svm-train") + "\n"
    progress.announce_compilation("svm-train", quiet=True)  # leave the listener silent


def test_bar_starts_after_the_first_chunk():
    """The bar is created at the first update, after the chunk that holds the compilation."""
    bar = SolverProgress("x")
    assert bar._bar is None
    bar.close()  # closing a bar that never started is fine
