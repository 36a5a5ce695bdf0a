#!/usr/bin/env bash
# DP-GD on random features of real rows against its Ornstein-Uhlenbeck limit (docs/theory.md §7.5):
# `hdpsgd rf` with data.source = file on scikit-learn's digits (1797 x 64, class 0 against the
# rest; without a held-out file rf holds out 20 % of the rows) and on a Fashion-MNIST subset (the
# first 1500 training images and 1000 test images, 784 pixels, tops against the rest), at
# (epsilon, 1/n)-DP and several clipping constants. Prints one Markdown row per configuration: the
# largest fraction of clipped gradients, DP-GD's final test loss (mean +- standard error over the
# runs), the OU closed form computed from the rows' feature matrix and DP-GD's gap to it, the
# exact OU path driven by the same increments, the min-norm interpolator and theta = 0.
#   examples/rf_real_data.sh [HDPSGD] [PYTHON] [digits|fashion]   (defaults: build/hdpsgd,
#   python3 with NumPy, both data sets)
# Skips a data set that is not installed (python3-sklearn; Debian's dataset-fashion-mnist).
set -u
bin=${1:-build/hdpsgd}
py=${2:-python3}
only=${3:-}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$py" - <<'PY'
import gzip, os
import numpy as np
try:
    import sklearn.datasets as d
    a = np.loadtxt(os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"), delimiter=",")
    np.save("digits_x.npy", a[:, :64]); np.save("digits_y.npy", a[:, 64].astype(np.int32))
except (ImportError, OSError):
    pass
F = "/usr/share/datasets/fashion-mnist"
def idx(name, count, offset):
    with gzip.open(f"{F}/{name}") as f:
        b = f.read()
    return np.frombuffer(b, np.uint8, offset=offset)
if os.path.exists(f"{F}/train-images-idx3-ubyte.gz"):
    X = idx("train-images-idx3-ubyte.gz", 0, 16).reshape(-1, 784)[:1500]
    y = idx("train-labels-idx1-ubyte.gz", 0, 8)[:1500]
    Xt = idx("t10k-images-idx3-ubyte.gz", 0, 16).reshape(-1, 784)[:1000]
    yt = idx("t10k-labels-idx1-ubyte.gz", 0, 8)[:1000]
    np.save("fm_x.npy", X); np.save("fm_y.npy", y.astype(np.int32))
    np.save("fm_xt.npy", Xt); np.save("fm_yt.npy", yt.astype(np.int32))
PY
echo "| data | ε | p | T | C | max clipped | DP-GD test loss | OU closed form | gap | exact OU path (same increments) | min-norm | theta = 0 | CPU s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row() { # row NAME ARGS...
  local name=$1; shift
  OMP_NUM_THREADS=1 /usr/bin/time -f "%U" -o cpu.txt "$bin" rf "$@" --threads 1 -o r.csv --json r.json 2>/dev/null || { echo "| $name | failed |"; return; }
  "$py" - "$name" "$(cat cpu.txt)" <<'PY'
import json, sys
r = json.load(open("r.json"))
C = r["C_clip"] / r["p"] ** 0.5
gap = r["dpgd_test"] / r["ou_exact_test"] - 1
z = (r["dpgd_test"] - r["ou_exact_test"]) / r["dpgd_test_stderr"]
eps = "∞" if r["epsilon"] is None else f"{r['epsilon']:g}"
print(f"| {sys.argv[1]} | {eps} | {r['p']} | {r['T']} | {C:g} | {r['max_clipped_fraction']:.3f} | "
      f"{r['dpgd_test']:.4f} ± {r['dpgd_test_stderr']:.4f} | {r['ou_exact_test']:.4f} | "
      f"{100 * gap:+.1f} % ({z:+.1f} se) | {r['ou_exact_step_test']:.4f} ± {r['ou_exact_step_test_stderr']:.4f} | "
      f"{r['minnorm_test']:.4f} | {r['zero_test']:.4f} | {float(sys.argv[2]):.0f} |")
PY
}
if [[ -f digits_x.npy && $only != fashion ]]; then
  digits=(--set data.source=file --set data.features=digits_x.npy --set data.labels=digits_y.npy
          --set data.labels_positive=0 --set rf.p=2000 --set dpgd.CT=3 --set rf.records=10 --runs 20 --seed 1)
  for C in 4 2 0.5; do row "digits (0 vs rest)" "${digits[@]}" --set dpgd.C=$C; done
fi
if [[ -f fm_x.npy && $only != digits ]]; then
  fm=(--set data.source=file --set data.features=fm_x.npy --set data.labels=fm_y.npy
      --set data.test_features=fm_xt.npy --set data.test_labels=fm_yt.npy --set data.labels_positive=0
      --set rf.p=2000 --set dpgd.CT=1 --set rf.records=10 --runs 10 --seed 1)
  row "Fashion-MNIST 1500 (tops vs rest)" "${fm[@]}" --set dpgd.C=4
  for C in 4 1; do row "Fashion-MNIST 1500 (tops vs rest)" "${fm[@]}" --set dpgd.C=$C --set dpgd.epsilon=16; done
fi
