"""Every bad input in tests/bad_inputs/cases.txt: the exit status and the exact message, no
traceback, nothing on stdout, no output file left behind. In-process (click's CliRunner), so
the whole corpus runs in seconds once the JIT cache is warm."""

import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from lasvm_cli.cli.main import svm_predict, svm_scale, svm_train

from .conftest import HEART

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
COMMANDS = {"svm-train": svm_train, "svm-predict": svm_predict, "svm-scale": svm_scale}


def load_cases():
    cases, case = [], None
    for raw in (CORPUS / "cases.txt").read_text().splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            case = dict(title=line[1:-1], argv=None, exit=None, stderr=[], stdout=None)
            cases.append(case)
        elif case["argv"] is None:
            case["argv"] = shlex.split(line)
        elif line.startswith("exit "):
            case["exit"] = int(line[5:])
        elif line.startswith("stderr "):
            case["stderr"].append(line[7:])
        elif line.startswith("stdout "):
            case["stdout"] = (case["stdout"] or "") + line[7:] + "\n"
        else:
            raise ValueError(f"cases.txt: cannot read {line!r}")
    return cases


CASES = load_cases()


def test_corpus_is_read():
    assert len(CASES) >= 40
    assert all(c["argv"] and c["argv"][0] in COMMANDS and c["exit"] is not None for c in CASES)
    assert all(c["stderr"] for c in CASES if c["exit"] != 0)


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_bad_input(case, tmp_path):
    t = tmp_path / "t"
    t.mkdir()
    subst = dict(d=str(CORPUS), t=str(t), heart=str(HEART))
    argv = [a.format(**subst) for a in case["argv"]]
    result = CliRunner().invoke(COMMANDS[argv[0]], argv[1:])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exc_info
    assert "Traceback" not in result.stderr
    expected = "".join(line.format(**subst) + "\n" for line in case["stderr"])
    assert (result.exit_code, result.stderr) == (case["exit"], expected)
    if case["stdout"] is not None:
        assert result.stdout == case["stdout"].format(**subst)
    elif case["exit"] != 0:
        assert result.stdout == ""
        assert os.listdir(t) == []  # no output file, no temporary file


def test_out_of_memory_is_one_line_and_status_1(capsys):
    # an allocation that fails anywhere (numpy's MemoryError names its size) ends the command
    # with one line on stderr, not a traceback
    from lasvm_cli.cli.report import run_guarded

    def main(_argv):
        raise MemoryError("Unable to allocate 1.00 TiB for an array with shape (64, "
                          "2147483648) and data type float64")

    assert run_guarded(main, []) == 1
    err = capsys.readouterr().err
    assert err == ("out of memory: Unable to allocate 1.00 TiB for an array with shape (64, "
                   "2147483648) and data type float64\n")
