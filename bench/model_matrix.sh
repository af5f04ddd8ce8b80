#!/bin/bash
# Train a matrix of svm-train models (every --solver, -s 0..4, --multiclass ovo/ovr/llw/cs,
# -b 1, -v, --stream (two classes, one-vs-rest, all-in-one), --save-state/--resume, snapshots,
# traces) into OUT, with the package at PYTHONPATH; stdout
# of -v runs is kept. Used to check that a refactor keeps every model byte-identical:
#   PYTHONPATH=old bench/model_matrix.sh /tmp/a; PYTHONPATH=new bench/model_matrix.sh /tmp/b
#   diff -r /tmp/a /tmp/b
# Data: heart_scale (data/), the first 500 rows of usps and of adult from the data folder
# (`lasvm data`'s: $LASVM_DATA, else the user's cache folder). Traces are kept without
# their "seconds" column (wall clock).
set -u
OUT=${1:?usage: model_matrix.sh OUTDIR}
PY=${PYTHON:-python}
HERE=$(cd "$(dirname "$0")/.." && pwd)
DATA=$(PYTHONPATH=${PYTHONPATH:-$HERE} "$PY" -c 'from lasvm_cli.tools.datasets import data_dir; print(data_dir())')
mkdir -p "$OUT"
H=$HERE/data/heart_scale
U=$OUT/usps500
A=$OUT/adult500
xzcat "$DATA/usps/train.svm.xz" | head -500 > "$U"
xzcat "$DATA/adult/train.svm.xz" | head -500 > "$A"
export LASVM_SERVER=0
untime() {  # trace CSV -> the same without its seconds column
  $PY - "$1" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, c in enumerate(rows[0]) if c != "seconds"]
with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(",".join(r[i] for i in keep if i < len(r)) + "\n")
PYEOF
}
train() {  # name args...
  local name=$1; shift
  $PY -c 'import sys; from lasvm_cli.cli import main; sys.argv = ["svm-train"] + sys.argv[1:]; main.svm_train()' "$@" > "$OUT/$name.out" 2>&1
  echo "$?" >> "$OUT/$name.out"
}
for s in smo lasvm lasvm-g full-svm lasvm-nc lasvm-i track1 track2 track2-lasvm rcd; do
  train h-$s -q --solver $s "$H" "$OUT/h-$s.model"
done
for t in 0 1 2 3 4; do train h-s$t -q -s $t "$H" "$OUT/h-s$t.model"; done
train h-mvp -q --wss mvp "$H" "$OUT/h-mvp.model"
train h-hmg -q --wss hmg "$H" "$OUT/h-hmg.model"
train h-hmg-mg -q --wss hmg --mg-stop "$H" "$OUT/h-hmg-mg.model"
train h-b1 -q -b 1 "$H" "$OUT/h-b1.model"
train h-s3b1 -q -s 3 -b 1 "$H" "$OUT/h-s3b1.model"
train h-v5 -q -v 5 "$H"
train h-lasvm-v5 -q -v 5 --solver lasvm "$H"
train h-t0-c10 -q -t 0 -c 10 -w1 2 "$H" "$OUT/h-t0-c10.model"
train h-stream -q --stream --solver lasvm -g 0.07 "$H" "$OUT/h-stream.model"
train h-lasvm-opts -q --solver lasvm --epochs 2 --selection gradient --candidates 20 --delta-max 0.5 "$H" "$OUT/h-lasvm-opts.model"
train h-lasvm-active -q --solver lasvm --selection active --label-budget 60 "$H" "$OUT/h-lasvm-active.model"
train h-lasvm-nofinish -q --solver lasvm --no-finish --seed 5 "$H" "$OUT/h-lasvm-nofinish.model"
train h-lasvmg-opts -q --solver lasvm-g --reprocess pair --clean-every 20 --clean-keep 30 --finish-tau "$H" "$OUT/h-lasvmg-opts.model"
train h-lasvmnc-opts -q --solver lasvm-nc --ramp-s -0.5 --sv-threshold 5 --epochs 2 "$H" "$OUT/h-lasvmnc-opts.model"
train h-track2-opts -q --solver track2 -K 3 --teacher sequential --no-average "$H" "$OUT/h-track2-opts.model"
train h-rcd-opts -q --solver rcd --average --batch-iters 3000 "$H" "$OUT/h-rcd-opts.model"
train h-track1-eps -q --solver track1 --eps 1 --max-examples 200 "$H" "$OUT/h-track1-eps.model"
train h-save -q --solver lasvm --stop-iterations 100 --save-state "$OUT/h-state" "$H" "$OUT/h-save.model"
train h-resume -q --solver lasvm --resume "$OUT/h-state" "$H" "$OUT/h-resume.model"
train h-track2-save -q --solver track2 --stop-iterations 100 --save-state "$OUT/h-tstate" "$H" "$OUT/h-track2-save.model"
train h-track2-resume -q --solver track2 --resume "$OUT/h-tstate" "$H" "$OUT/h-track2-resume.model"
rm -f "$OUT/h-state" "$OUT/h-tstate"
train h-snap -q --solver lasvm --snapshots 50,100 "$H" "$OUT/h-snap.model"
train u-smo -q "$U" "$OUT/u-smo.model"
train u-ovr -q --multiclass ovr "$U" "$OUT/u-ovr.model"
train u-lasvm -q --solver lasvm "$U" "$OUT/u-lasvm.model"
train u-lasvm-ovr -q --solver lasvm --multiclass ovr "$U" "$OUT/u-lasvm-ovr.model"
train u-lasvmg -q --solver lasvm-g "$U" "$OUT/u-lasvmg.model"
train u-track2 -q --solver track2 "$U" "$OUT/u-track2.model"
train u-llw -q --multiclass llw "$U" "$OUT/u-llw.model"
train u-cs -q --multiclass cs "$U" "$OUT/u-cs.model"
train u-llw-online -q --multiclass llw --solver online --llw-target 2 "$U" "$OUT/u-llw-online.model"
train u-cs-online -q --multiclass cs --solver online --epochs 2 --strategy random-pattern-s2do-pattern "$U" "$OUT/u-cs-online.model"
train u-b1 -q -b 1 "$U" "$OUT/u-b1.model"
train u-v3 -q -v 3 "$U"
train u-s1 -q -s 1 -n 0.1 "$U" "$OUT/u-s1.model"
train u-lasvm-snap -q --solver lasvm --snapshots 100,200 --stop-iterations 300 --trace "$OUT/u-lasvm-snap.trace" --test "$U" "$U" "$OUT/u-lasvm-snap.model"
untime "$OUT/u-lasvm-snap.trace"
train u-lasvmg-ovr-trace -q --solver lasvm-i --multiclass ovr --trace "$OUT/u-lasvmg-ovr.trace" --trace-every 100 "$U" "$OUT/u-lasvmg-ovr-trace.model"
untime "$OUT/u-lasvmg-ovr.trace"
train u-cs-online-driven -q --multiclass cs --solver online --snapshots 200 --trace "$OUT/u-cs-online.trace" --trace-every 100 --test "$U" "$U" "$OUT/u-cs-online-driven.model"
untime "$OUT/u-cs-online.trace"
train u-llw-online-stop -q --multiclass llw --solver online --stop-iterations 250 --save-state "$OUT/u-llw-state" "$U" "$OUT/u-llw-online-stop.model"
train u-llw-online-resume -q --multiclass llw --solver online --resume "$OUT/u-llw-state" "$U" "$OUT/u-llw-online-resume.model"
rm -f "$OUT/u-llw-state"
train u-track2-trace -q --solver track2 --runs 2 --trace "$OUT/u-track2.trace" --trace-every 100 --test "$U" "$U" "$OUT/u-track2-trace.model"
untime "$OUT/u-track2.trace"
train u-lasvm-ovo-resume0 -q --solver lasvm --stop-iterations 60 --save-state "$OUT/u-ovo-state" "$U" "$OUT/u-lasvm-ovo-stop.model"
train u-lasvm-ovo-resume1 -q --solver lasvm --resume "$OUT/u-ovo-state" "$U" "$OUT/u-lasvm-ovo-resume.model"
rm -f "$OUT/u-ovo-state"
for s in smo lasvm lasvm-i track2 rcd; do
  train a-$s -q --solver $s -g 0.05 "$A" "$OUT/a-$s.model"
done
for t in 1 2; do train a-s$t -q -s $t -g 0.05 "$A" "$OUT/a-s$t.model"; done
train a-stream -q --stream --solver lasvm -g 0.05 "$A" "$OUT/a-stream.model"
train a-stream-g -q --stream --solver lasvm-g -g 0.05 "$A" "$OUT/a-stream-g.model"
train u-stream-ovr -q --stream --solver lasvm --multiclass ovr -g 0.01 "$U" "$OUT/u-stream-ovr.model"
train u-stream-cs -q --stream --multiclass cs --solver online -g 0.01 "$U" "$OUT/u-stream-cs.model"
train a-b1 -q -b 1 -g 0.05 "$A" "$OUT/a-b1.model"
train a-v4 -q -v 4 --solver lasvm -g 0.05 "$A"
train a-ovr -q --multiclass ovr --solver lasvm-g -g 0.05 "$A" "$OUT/a-ovr.model"
rm -f "$U" "$A"
