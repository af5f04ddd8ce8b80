"""Two looks at one recorded LASVM-I order on adult (bench/paper_001_stall.py's orders.npz),
through the numpy reference of the paper's pseudo-code (tests/reference_lasvm_nc.py):

    python bench/paper_001_stall_detail.py state ORDERS.npz SEED N
    python bench/paper_001_stall_detail.py rounding ORDERS.npz SEED N

``state``: every PROCESS of the first N draws (label, z before, alpha after, REPROCESS steps,
sum alpha), then the machine after draw N: its alphas, the range of K(SV, x) and of f over the
whole training set, and the share of each class inside the ramp region s <= z <= 1 (what
LASVM-I can still PROCESS). ``rounding``: two references on the same order that differ only
in the summation order of f(x_i) (numpy's dot against a reversed Python sum): the first draw
where their steps differ and their largest alpha difference every 250 draws, i.e. how far a
rounding difference of 1e-16 carries on adult's near-constant kernel.

adult with the paper's C = 100, gamma = 0.005, s = -1; kernel rows from the library's
kernel_row_serial rounded to float32, as bench/paper_001_stall.py --reference uses them.
"""

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from bench_lasvm import data_dir  # noqa: E402
from reference_lasvm_nc import ReferenceLasvm  # noqa: E402

from lasvm_cli.numerics.data import kernel_data  # noqa: E402
from lasvm_cli.io.svmlight import read_svmlight  # noqa: E402
from lasvm_cli.numerics.kernels import RBF, kernel_row_serial, make_params  # noqa: E402

C, GAMMA = 100.0, 0.005


class ReversedSum(ReferenceLasvm):
    """The reference with f(x_i) summed over S in reverse order, one term at a time."""

    def f(self, i):
        return float(sum(self.alpha[s] * self.K[s, i] for s in self.S[::-1]))


def main():
    what, orders, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tr = read_svmlight(str(data_dir() / "adult" / "train.svm.xz"))
    y = np.where(tr.y > 0, 1.0, -1.0)
    kd = kernel_data(tr.indptr, tr.indices, tr.values, width=int(tr.max_index) + 1,
                     dense=False, training=True)
    kp = make_params(RBF, gamma=GAMMA)
    order = np.load(orders)[f"lasvm-i_{seed}"][:n]
    K = np.empty((order.size, order.size))
    for q, ex in enumerate(order):
        kernel_row_serial(kd, int(ex), kd, order, kp, K[q])
    K = K.astype(np.float32).astype(np.float64)
    yo = y[order]
    if what == "rounding":
        a = ReferenceLasvm(K, yo, C, "lasvm-i", start="printed")
        b = ReversedSum(K, yo, C, "lasvm-i", start="printed")
        first = None
        for t in range(n):
            ra, rb = a.online_iteration(t), b.online_iteration(t)
            if first is None and (ra["action"] != rb["action"]
                                  or ra["reprocessed"] != rb["reprocessed"]):
                first = t + 1
                print(f"first different step at draw {first}: {len(ra['reprocessed'])} and "
                      f"{len(rb['reprocessed'])} REPROCESS steps")
            if (t + 1) % 250 == 0:
                print(f"draw {t + 1}: max |alpha_A - alpha_B| "
                      f"{np.abs(a.alpha - b.alpha).max():.3g}, #SV {a.n_sv()} / {b.n_sv()}")
        return
    ref = ReferenceLasvm(K, yo, C, "lasvm-i", start="printed")  # section 2: the printed block
    for t in range(n):
        rec = ref.online_iteration(t)
        if rec["action"] == "process":
            print(f"draw {t + 1}: y {yo[t]:+.0f} z {rec['z']:+.4f} -> alpha {ref.alpha[t]:+.4f}"
                  f" ({len(rec['reprocessed'])} REPROCESS), sum alpha "
                  f"{sum(ref.alpha[s] for s in ref.S):+.4f}")
    S = np.array(ref.S, np.int64)
    print("alphas:", np.round(ref.alpha[S], 4).tolist(), "labels:", yo[S].tolist())
    rows = np.arange(y.size)
    K_all = np.empty((S.size, y.size))
    for q, s in enumerate(S):
        kernel_row_serial(kd, int(order[s]), kd, rows, kp, K_all[q])
    f = ref.alpha[S] @ K_all
    z = y * f
    ramp = (z >= ref.s) & (z <= 1.0)
    print(f"K(expansion, any training example) in [{K_all.min():.4f}, {K_all.max():.4f}]")
    print(f"f over the training set in [{f.min():.4f}, {f.max():.4f}], mean {f.mean():.4f}")
    print(f"inside s <= z <= 1: {ramp.mean():.4f} (negatives {ramp[y < 0].mean():.4f}, "
          f"positives {ramp[y > 0].mean():.4f}); negatives with z > 1 "
          f"{np.mean(z[y < 0] > 1):.4f}, positives with z < s {np.mean(z[y > 0] < ref.s):.4f}")


if __name__ == "__main__":
    main()
