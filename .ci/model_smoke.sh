#!/usr/bin/env bash
# Train and predict a small matrix of models with the environment whose bin/ is BIN, into OUT:
# every solver family, -s 0..4, -b 1, -v, --stream, a stopped and resumed online run, the warm
# server and the scikit-learn estimators. Run for two environments (the main one and the oldest
# numba and numpy that pyproject declares), every file must be byte-identical:
#   .ci/model_smoke.sh .venv/bin /tmp/a; .ci/model_smoke.sh /tmp/floor/bin /tmp/b; diff -r /tmp/a /tmp/b
# Data: heart_scale and a small three-class set written here (Python's own generator). Each
# command's stdout, stderr and exit status are kept (all runs are -q: nothing else on stderr).
set -u
BIN=$(cd "${1:?usage: model_smoke.sh BIN OUT}" && pwd)
OUT=${2:?usage: model_smoke.sh BIN OUT}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
cd "$OUT"
cp "$HERE/data/heart_scale" H
python3 - <<'EOF'
import random
r = random.Random(42)
with open("M", "w") as f:
    for i in range(150):
        c = i % 3
        x = [r.gauss(c * 0.6 if j < 3 else 0.0, 1.0) for j in range(8)]
        f.write(f"{c + 1} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(x) if v > -1.2)
                + "\n")
EOF
export LASVM_SERVER=0
run() {  # name program args...: stdout, stderr and the exit status kept under OUT
  local name=$1; shift
  local prog=$1; shift
  "$BIN/$prog" "$@" > "$name.out" 2> "$name.err"
  echo "$?" >> "$name.out"
}
for s in smo lasvm lasvm-g lasvm-nc lasvm-i track1 track2 rcd; do
  run h-$s svm-train -q --solver $s H h-$s.model
done
run h-hmg svm-train -q --wss hmg H h-hmg.model
for t in 1 2 3 4; do run h-s$t svm-train -q -s $t H h-s$t.model; done
run h-b1 svm-train -q -b 1 H h-b1.model
run h-b1-predict svm-predict -q -b 1 H h-b1.model h-b1.predict
run h-s3-predict svm-predict -q H h-s3.model h-s3.predict
run h-v5 svm-train -q -v 5 H
run h-stream svm-train -q --stream --solver lasvm -g 0.07 H h-stream.model
run m-ovo svm-train -q M m-ovo.model
run m-ovo-predict svm-predict -q M m-ovo.model m-ovo.predict
run m-ovr svm-train -q --multiclass ovr --solver lasvm M m-ovr.model
run m-cs svm-train -q --multiclass cs M m-cs.model
run m-llw-online svm-train -q --multiclass llw --solver online M m-llw-online.model
run m-cs-stop svm-train -q --multiclass cs --solver online --stop-iterations 80 --save-state m-state M m-cs-stop.model
run m-cs-resume svm-train -q --multiclass cs --solver online --resume m-state M m-cs-resume.model
rm -f m-state
run m-cs-stream svm-train -q --stream --multiclass cs --solver online -g 0.1 M m-cs-stream.model
run m-b1 svm-train -q -b 1 M m-b1.model

# the warm server: the first command starts one as it exits, the next ones are served
runtime=$(mktemp -d)
chmod 700 "$runtime"
LASVM_RUNTIME_DIR=$runtime LASVM_SERVER=1 "$BIN/svm-train" -q H started.model
for _ in $(seq 600); do
  ls "$runtime"/lasvm-cli-*/*.sock > /dev/null 2>&1 && break
  sleep 0.5
done
export LASVM_RUNTIME_DIR=$runtime
LASVM_SERVER=require run served-train svm-train -q --solver lasvm-g H served.model
LASVM_SERVER=require run served-predict svm-predict -q M m-ovo.model served.predict
"$BIN/lasvm" server stop > /dev/null
unset LASVM_RUNTIME_DIR
rm -rf "$runtime" started.model

# the scikit-learn estimators
"$BIN/python" - > sklearn.out 2> sklearn.err <<'EOF'
import numpy as np
from sklearn.datasets import load_svmlight_file
from lasvm_cli.sklearn import SVC, OnlineSVC

X, y = load_svmlight_file("H")
Xm, ym = load_svmlight_file("M")
for name, est, (A, b) in (("SVC", SVC(C=2.0), (X, y)), ("SVC-m", SVC(), (Xm, ym)),
                          ("OnlineSVC", OnlineSVC(), (X, y)),
                          ("OnlineSVC-m", OnlineSVC(), (Xm, ym))):
    est.fit(A, b)
    print(name, est.predict(A).tobytes().hex())
    print(name, np.asarray(est.decision_function(A), np.float64).tobytes().hex())
EOF
echo "$?" >> sklearn.out
rm -f H M
