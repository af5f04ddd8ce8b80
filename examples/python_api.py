"""The library under the CLI: read a file, train with SMO and with LASVM, predict.

    python examples/python_api.py [TRAIN [TEST]]      (default: the bundled heart_scale)

Writes smo.model and lasvm.model (LIBSVM's format) into $OUT (default ./lasvm-example), as
the other examples do.
"""

import os
import sys
from pathlib import Path

import numpy as np

from lasvm_cli.numerics.data import Problem, kernel_data
from lasvm_cli.io.model_file import write_model
from lasvm_cli.io.svmlight import read_svmlight
from lasvm_cli.training.params import TrainParams
from lasvm_cli.training.train import train


HEART = str(Path(__file__).resolve().parent.parent / "data" / "heart_scale")


def main(train_path=HEART, test_path=None):
    data = read_svmlight(train_path)
    test = read_svmlight(test_path or train_path)
    problem = Problem.from_svmlight(data)
    gamma = 1.0 / max(data.max_index, 1)  # LIBSVM's default 1/num_features
    # the test rows in the same storage as the model's SVs (any width works)
    test_kd = kernel_data(test.indptr, test.indices, test.values)
    out = Path(os.environ.get("OUT", "lasvm-example"))
    out.mkdir(parents=True, exist_ok=True)
    for solver in ("smo", "lasvm"):
        model = train(problem, TrainParams(solver=solver, C=1.0, gamma=gamma))
        accuracy = np.mean(model.predict(test_kd) == test.y)
        print(f"{solver:6s} nSV {int(model.nSV.sum()):5d}  accuracy {100 * accuracy:.2f}%")
        write_model(model, out / f"{solver}.model")  # LIBSVM's format: svm-predict reads it


if __name__ == "__main__":
    main(*sys.argv[1:3])
