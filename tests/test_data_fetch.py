"""``lasvm data fetch | list | path`` against a local HTTP server on 127.0.0.1 (no internet):
a mirror serving NAME/PART.svm.xz and, for the original-source path, a test registry whose
URLs point at the same server. Right checksum, wrong checksum, server gone, a body cut short,
Ctrl-C, already cached (no request), the LASVM_DATA override. Nothing may be left behind on a
failure: no ``.part`` file, no temporary folder, no empty set folder."""

import functools
import gzip
import hashlib
import http.server
import lzma
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lasvm_cli.tools import datasets
from lasvm_cli.cli import main as cli_main

REPO = Path(__file__).resolve().parent.parent
HEART = REPO / "data" / "heart_scale"  # byte-identical to the registry's heart_scale
SHA = re.compile(r"^[0-9a-f]{64}$")

TINY = b"+1 1:0.5 3:-1\n-1 2:0.25\n+1 1:1 2:1 3:1\n"
TINY_SHA = hashlib.sha256(TINY).hexdigest()


def _sha(b):
    return hashlib.sha256(b).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves ``directory``; paths in ``server.cut`` get their full Content-Length but only
    half the body before the connection closes. Every request path is logged."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        if self.path in self.server.cut:
            body = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


class Server:
    def __init__(self, root):
        self.root = root
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
        self.httpd.requests = []
        self.httpd.cut = set()
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"

    @property
    def requests(self):
        return self.httpd.requests

    def cut(self, path):
        self.httpd.cut.add(path)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _xz(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(data))


def _tiny_convert(paths):
    with gzip.open(paths["tiny.txt.gz"], "rt") as f:
        return {"all": iter(f.readlines())}


@pytest.fixture
def server(tmp_path):
    """A mirror (heart_scale, tiny) and original files (orig/tiny.txt.gz) on 127.0.0.1."""
    root = tmp_path / "served"
    _xz(root / "heart_scale" / "all.svm.xz", HEART.read_bytes())
    _xz(root / "tiny" / "all.svm.xz", TINY)
    (root / "orig").mkdir()
    (root / "orig" / "tiny.txt.gz").write_bytes(gzip.compress(TINY, mtime=0))
    s = Server(root)
    yield s
    s.stop()


def _tiny(server, sha=None, file_sha=None):
    orig = server.root / "orig" / "tiny.txt.gz"
    src = datasets.Source("a test server", (datasets.Download(
        "tiny.txt.gz", f"{server.url}/orig/tiny.txt.gz",
        file_sha or _sha(orig.read_bytes()), orig.stat().st_size),), _tiny_convert, "gunzip")
    return datasets.DataSet("tiny", "a tiny synthetic set", {"all": sha or TINY_SHA},
                            "public domain", src)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """An empty data folder as LASVM_DATA, no mirror in the environment."""
    data = tmp_path / "data"
    monkeypatch.setenv("LASVM_DATA", str(data))
    monkeypatch.delenv("LASVM_DATA_MIRROR", raising=False)
    return data


def run(capsys, *args):
    """``lasvm data ARGS`` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as e:
        cli_main.lasvm.main(["data", *args], prog_name="lasvm")
    out, err = capsys.readouterr()
    return e.value.code or 0, out, err


def _left(folder):
    """Every file or folder under ``folder`` (relative names)."""
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _one_error_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("lasvm data: "), err
    assert "Traceback" not in err
    return lines[0]


# --- right checksum ----------------------------------------------------------------------

def test_mirror_right_checksum(server, env, capsys):
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 0, err
    path = env / "heart_scale" / "all.svm.xz"
    assert lzma.decompress(path.read_bytes()) == HEART.read_bytes()
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600
    assert _left(env) == ["heart_scale", "heart_scale/all.svm.xz"]
    assert "heart_scale: done" in out and err == ""


def test_fetched_file_reads(server, env, capsys):
    """svm-train's reader takes the fetched file as it is (xz), as the bench scripts do."""
    from lasvm_cli.io.svmlight import read_svmlight

    assert run(capsys, "fetch", "--mirror", server.url, "heart_scale")[0] == 0
    d = read_svmlight(str(env / "heart_scale" / "all.svm.xz"))
    assert len(d.y) == 270 and set(d.y) == {-1.0, 1.0}


def test_mirror_from_environment_and_plain_path(server, env, capsys, monkeypatch):
    monkeypatch.setenv("LASVM_DATA_MIRROR", str(server.root))  # a folder, not a URL
    code, out, err = run(capsys, "fetch", "heart_scale")
    assert code == 0, err
    assert (env / "heart_scale" / "all.svm.xz").is_file()
    assert server.requests == []  # read from the folder, not over HTTP


def test_source_right_checksum(server, env, capsys, monkeypatch):
    monkeypatch.setattr(datasets, "REGISTRY", {"tiny": _tiny(server)})
    code, out, err = run(capsys, "fetch", "tiny")
    assert code == 0, err
    assert lzma.decompress((env / "tiny" / "all.svm.xz").read_bytes()) == TINY
    assert server.requests == ["/orig/tiny.txt.gz"]
    assert _left(env) == ["tiny", "tiny/all.svm.xz"]  # no download folder left


# --- wrong checksum ----------------------------------------------------------------------

def test_mirror_wrong_checksum(server, env, capsys):
    _xz(server.root / "heart_scale" / "all.svm.xz", HEART.read_bytes() + b"+1 1:1\n")
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 1
    line = _one_error_line(err)
    assert "heart_scale/all.svm" in line and "differs from the recorded" in line
    assert _left(env) == []


def test_source_wrong_download_checksum(server, env, capsys, monkeypatch):
    monkeypatch.setattr(datasets, "REGISTRY", {"tiny": _tiny(server, file_sha="0" * 64)})
    code, out, err = run(capsys, "fetch", "tiny")
    assert code == 1
    line = _one_error_line(err)
    assert "tiny.txt.gz" in line and "differs from the recorded " + "0" * 64 in line
    assert _left(env) == []


def test_source_wrong_converted_checksum(server, env, capsys, monkeypatch):
    monkeypatch.setattr(datasets, "REGISTRY", {"tiny": _tiny(server, sha="1" * 64)})
    code, out, err = run(capsys, "fetch", "tiny")
    assert code == 1
    assert "tiny/all.svm converted from a test server" in _one_error_line(err)
    assert _left(env) == []


def test_source_unexpected_content(server, env, capsys, monkeypatch):
    """A converter that fails on the file (an unpinned download that changed): one line."""
    def convert(paths):
        return {"all": (f"{int(line)}\n" for line in gzip.open(paths["tiny.txt.gz"], "rt"))}

    tiny = _tiny(server)
    tiny = datasets.DataSet(tiny.name, tiny.title, tiny.parts, tiny.licence,
                            datasets.Source("a test server", tiny.source.files, convert))
    monkeypatch.setattr(datasets, "REGISTRY", {"tiny": tiny})
    code, out, err = run(capsys, "fetch", "tiny")
    assert code == 1
    assert "cannot convert the files from a test server (ValueError" in _one_error_line(err)
    assert _left(env) == []


def test_not_xz_on_mirror(server, env, capsys):
    (server.root / "heart_scale" / "all.svm.xz").write_bytes(HEART.read_bytes())
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 1
    assert "not one xz file" in _one_error_line(err)
    assert _left(env) == []


# --- server gone, body cut short, Ctrl-C ---------------------------------------------------

def test_server_gone(server, env, capsys):
    server.stop()
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 1
    line = _one_error_line(err)
    assert f"cannot reach {server.url[len('http://'):]}" in line
    assert _left(env) == []


def test_source_server_gone_hints_at_mirror(server, env, capsys, monkeypatch):
    monkeypatch.setattr(datasets, "REGISTRY", {"tiny": _tiny(server)})
    server.stop()
    code, out, err = run(capsys, "fetch", "tiny")
    assert code == 1
    line = _one_error_line(err)
    assert "cannot reach 127.0.0.1" in line and "--mirror" in line
    assert _left(env) == []


def test_mirror_missing_file(server, env, capsys):
    code, out, err = run(capsys, "fetch", "--mirror", server.url + "/nowhere", "heart_scale")
    assert code == 1
    assert "HTTP 404" in _one_error_line(err)
    assert _left(env) == []


@pytest.mark.parametrize("where", ["mirror", "source"])
def test_interrupted_download(server, env, capsys, monkeypatch, where):
    """The server sends half the body it announced, then closes: no partial file."""
    if where == "mirror":
        server.cut("/heart_scale/all.svm.xz")
        args = ["--mirror", server.url, "heart_scale"]
    else:
        monkeypatch.setattr(datasets, "REGISTRY", {"tiny": _tiny(server)})
        server.cut("/orig/tiny.txt.gz")
        args = ["tiny"]
    code, out, err = run(capsys, "fetch", *args)
    assert code == 1
    assert "interrupted" in _one_error_line(err)
    assert _left(env) == []


def test_interrupted_keeps_other_files(server, env, capsys):
    """A set folder that was there before stays, with what it held; only the new file goes."""
    (env / "heart_scale").mkdir(parents=True)
    (env / "heart_scale" / "notes.txt").write_text("mine")
    server.cut("/heart_scale/all.svm.xz")
    assert run(capsys, "fetch", "--mirror", server.url, "heart_scale")[0] == 1
    assert _left(env) == ["heart_scale", "heart_scale/notes.txt"]


def test_ctrl_c(server, env, capsys, monkeypatch):
    class Bar:
        def update(self, n):
            raise KeyboardInterrupt

        def close(self):
            pass

    monkeypatch.setattr(datasets, "_progress", lambda *a: Bar())
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 130
    assert _one_error_line(err) == "lasvm data: interrupted"
    assert _left(env) == []


# --- cached, override, list, names ----------------------------------------------------------

def test_cached_makes_no_request(server, env, capsys):
    assert run(capsys, "fetch", "--mirror", server.url, "heart_scale")[0] == 0
    server.requests.clear()
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 0 and server.requests == []
    assert "heart_scale: cached" in out
    server.stop()  # no server at all: still nothing to do
    assert run(capsys, "fetch", "--mirror", server.url, "heart_scale")[0] == 0


def test_damaged_cache_is_fetched_again(server, env, capsys):
    _xz(env / "heart_scale" / "all.svm.xz", b"+1 1:1\n")
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "heart_scale")
    assert code == 0, err
    assert server.requests == ["/heart_scale/all.svm.xz"]
    assert lzma.decompress((env / "heart_scale" / "all.svm.xz").read_bytes()) == HEART.read_bytes()


def test_data_dir(monkeypatch, tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    assert datasets.data_dir(env) == home / ".cache" / "lasvm-cli" / "data"
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    assert datasets.data_dir(env) == tmp_path / "xdg" / "lasvm-cli" / "data"
    env["LASVM_DATA"] = str(tmp_path / "mine")
    assert datasets.data_dir(env) == tmp_path / "mine"
    assert datasets.data_file("adult", "test", env) == tmp_path / "mine" / "adult" / "test.svm.xz"


def test_lasvm_data_override(server, env, capsys, monkeypatch, tmp_path):
    """Without LASVM_DATA the files go to $XDG_CACHE_HOME/lasvm-cli/data; with it, there."""
    monkeypatch.delenv("LASVM_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert run(capsys, "fetch", "-q", "--mirror", server.url, "heart_scale")[:2] == (0, "")
    assert (tmp_path / "xdg" / "lasvm-cli" / "data" / "heart_scale" / "all.svm.xz").is_file()
    assert run(capsys, "path")[1] == f"{tmp_path / 'xdg' / 'lasvm-cli' / 'data'}\n"
    monkeypatch.setenv("LASVM_DATA", str(env))
    assert run(capsys, "path", "adult")[1] == f"{env / 'adult'}\n"
    assert run(capsys, "fetch", "-q", "--mirror", server.url, "heart_scale")[0] == 0
    assert (env / "heart_scale" / "all.svm.xz").is_file()


def test_list(server, env, capsys):
    assert run(capsys, "fetch", "--mirror", server.url, "heart_scale")[0] == 0
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    assert f"data folder: {env} ($LASVM_DATA)" in out
    rows = {line.split()[0]: line for line in out.splitlines()[3:-1]}
    assert sorted(rows) == datasets.names()
    assert " cached " in rows["heart_scale"] and " missing " in rows["adult"]
    assert "mirror only" in rows["ames"]


def test_names(server, env, capsys, monkeypatch):
    code, out, err = run(capsys, "fetch")
    assert code == 1 and "name the sets to fetch, or 'all'" in _one_error_line(err)
    code, out, err = run(capsys, "fetch", "nosuchset")
    assert code == 1 and "unknown data set nosuchset" in _one_error_line(err)
    code, out, err = run(capsys, "path", "nosuchset")
    assert code == 1 and "unknown data set" in _one_error_line(err)


def test_mirror_only_set(server, env, capsys, monkeypatch):
    """A set without a public source: an error when named without a mirror; 'all' without a
    mirror skips it (one line on stderr, not a failure) and fetches the rest."""
    only = datasets.DataSet("only", "mirror only", {"all": TINY_SHA}, "none",
                            why_no_source="made by hand")
    monkeypatch.setattr(datasets, "REGISTRY", {"only": only, "tiny": _tiny(server)})
    code, out, err = run(capsys, "fetch", "only")
    line = _one_error_line(err)
    assert code == 1 and "made by hand" in line and "--mirror" in line
    code, out, err = run(capsys, "fetch", "all")
    assert code == 0
    assert "skipping only" in _one_error_line(err)
    assert (env / "tiny" / "all.svm.xz").is_file() and not (env / "only").exists()
    _xz(server.root / "only" / "all.svm.xz", TINY)
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "all")
    assert code == 0, err
    assert (env / "only" / "all.svm.xz").is_file()


def test_one_failure_does_not_stop_the_others(server, env, capsys):
    (server.root / "heart_scale" / "all.svm.xz").unlink()
    _xz(server.root / "adult" / "train.svm.xz", b"x")
    code, out, err = run(capsys, "fetch", "--mirror", server.url, "adult", "heart_scale")
    assert code == 1
    assert err.count("lasvm data: ") == 2 and "Traceback" not in err


# --- the registry -------------------------------------------------------------------------

def test_registry():
    for name, ds in datasets.REGISTRY.items():
        assert ds.name == name
        assert ds.parts and set(ds.parts) <= {"train", "test", "all"}
        assert all(SHA.match(s) for s in ds.parts.values())
        assert ds.licence and ds.xz_bytes > 0
        if ds.source is None:
            assert ds.why_no_source
            continue
        assert callable(getattr(datasets, ds.source.convert))
        for f in ds.source.files:
            assert f.url.startswith("https://")
            assert f.sha256 is None or SHA.match(f.sha256)
    # heart_scale's original file is the one the repository bundles
    assert _sha(HEART.read_bytes()) == datasets.REGISTRY["heart_scale"].parts["all"]
    assert datasets.REGISTRY["heart_scale"].source.files[0].sha256 == _sha(HEART.read_bytes())


def test_entry_point_runs_data_in_process(env, tmp_path):
    """`lasvm data` never goes through the warm server (the client's environment picks the
    folders), and the entry point imports nothing of it before the command runs."""
    code = ("import sys; import lasvm_cli.cli.entry as e; "
            "assert 'lasvm_cli.tools.datasets' not in sys.modules; "
            "sys.argv = ['lasvm', 'data', 'path']; e.lasvm()")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "LASVM_SERVER": "1",
                                          "LASVM_RUNTIME_DIR": str(tmp_path / "rt")})
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"{env}\n"
