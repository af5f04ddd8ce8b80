#!/bin/sh
# Learning curves of online LASVM (Bordes et al. 2005, figures 11-15): test error against
# training time for random and active example selection, then one plot.
#
#   examples/learning_curves.sh [TRAIN [TEST [SVM-TRAIN OPTIONS...]]]
#
# Defaults to the bundled heart_scale (tested on itself). For the paper's adult figure:
#   examples/learning_curves.sh $LASVM_DATA/adult/train.svm.xz $LASVM_DATA/adult/test.svm.xz \
#       -c 100 -g 0.005
# Writes into $OUT (default ./lasvm-example): random.csv, active.csv, curves.png (the png needs
# the plot extra: pip install 'lasvm-cli[plot]').
set -eu
TRAIN=${1:-data/heart_scale}
TEST=${2:-$TRAIN}
[ $# -ge 2 ] && shift 2 || shift $#
OUT=${OUT:-lasvm-example}
mkdir -p "$OUT"

for selection in random active; do
    svm-train --solver lasvm --selection "$selection" --seed 1 -q \
        --trace "$OUT/$selection.csv" --trace-every "${EVERY:-20}" --test "$TEST" \
        "$@" "$TRAIN" "$OUT/$selection.model"
    echo "$selection: $(tail -n 1 "$OUT/$selection.csv")"
done
lasvm plot "$OUT/random.csv" "$OUT/active.csv" -o "$OUT/curves.png" --x time \
    --title "LASVM, one epoch" || echo "(no plot: install the plot extra)"
