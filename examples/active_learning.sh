#!/bin/sh
# Active learning with a label budget (Bordes et al. 2005, section 4): LASVM reads at most N
# labels, choosing which by the active criterion (closest to the boundary), and reports how
# many it used; compare with the same budget spent on random examples.
#
#   examples/active_learning.sh [TRAIN [TEST [BUDGET]]]
set -eu
TRAIN=${1:-data/heart_scale}
TEST=${2:-$TRAIN}
BUDGET=${3:-60}
OUT=${OUT:-lasvm-example}
mkdir -p "$OUT"

svm-train --solver lasvm --label-budget "$BUDGET" --seed 1 -q --counters \
    "$TRAIN" "$OUT/active.model" 2>&1 | grep -o "labels_used[^,]*"
printf 'active (%s labels chosen by LASVM): ' "$BUDGET"
svm-predict "$TEST" "$OUT/active.model" "$OUT/active.out"
svm-train --solver lasvm --stop-iterations "$BUDGET" --seed 1 -q \
    "$TRAIN" "$OUT/random.model"
printf 'random (%s examples drawn at random): ' "$BUDGET"
svm-predict "$TEST" "$OUT/random.model" "$OUT/random.out"
