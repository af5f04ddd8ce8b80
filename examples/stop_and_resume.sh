#!/bin/sh
# A long LASVM run cut in two: the first session stops after 100 iterations (saving its state
# and two snapshot models), the second resumes it; the result is the model of an uninterrupted
# run, byte for byte.
#
#   examples/stop_and_resume.sh [TRAIN [SVM-TRAIN OPTIONS...]]
set -eu
TRAIN=${1:-data/heart_scale}
[ $# -ge 1 ] && shift
OUT=${OUT:-lasvm-example}
mkdir -p "$OUT"
common="--solver lasvm --epochs 2 --seed 3 -q"

svm-train $common "$@" --save-state "$OUT/run.state" --stop-iterations 100 \
    --snapshots 50,100 "$TRAIN" "$OUT/stopped.model"
ls "$OUT"/stopped.model*
svm-train $common "$@" --resume "$OUT/run.state" "$TRAIN" "$OUT/resumed.model"
svm-train $common "$@" "$TRAIN" "$OUT/uninterrupted.model"
cmp "$OUT/resumed.model" "$OUT/uninterrupted.model" && echo "resumed == uninterrupted"
