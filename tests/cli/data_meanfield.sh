#!/usr/bin/env bash
# ode.model = rows (docs/theory.md §9.5): the program's row-resolved mean-field recursion
# against scripts/data_meanfield.py (NumPy/SciPy, the same recursion written independently)
# on 300 rows of scikit-learn's digits (even against odd), every step of the curve and the
# held-out MSE to 1e-9 relative, at c = 0.3, 1, inf and rho = inf, 0.5; validate with it; bad
# input refused (exit 2, [ode] model named, nothing written).
#   data_meanfield.sh HDPSGD [PYTHON]   (PYTHON: a python3 with NumPy, SciPy and scikit-learn;
#                                        exit 77 without)
set -u
bin=$1
py=${2:-python3}
src=$(cd "$(dirname "$0")/../.." && pwd)
if ! "$py" -c 'import numpy, scipy.special, sklearn.datasets' 2>/dev/null; then
  echo "skipped: no python3 with NumPy, SciPy and scikit-learn (the reference and its data)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
refused() { # refused NAME PATTERN COMMAND ARGS...: exit 2, the message matches, no output
  local name=$1 pat=$2; shift 2
  rm -f "$work/out.csv"
  "$bin" "$@" -o "$work/out.csv" 2> "$work/err.txt" >/dev/null
  local rc=$?
  if [[ $rc -eq 2 ]] && grep -q -- "$pat" "$work/err.txt" && [[ ! -e $work/out.csv ]]; then
    pass=$((pass + 1)); echo "ok   refused: $name"
  else
    fail=$((fail + 1)); echo "FAIL refused: $name (exit $rc)"; cat "$work/err.txt"
  fi
}

"$py" - "$work" <<'PY'
import sys, numpy as np, sklearn.datasets as ds
X, y = ds.load_digits(return_X_y=True)
w = sys.argv[1]
# digits-like: a small jitter so that the rows are not exactly float32 (kept in double, as the
# script computes; exact float32 rows are rounded to float32 after the rotation, 6e-8)
X = X + 1e-3 * np.random.default_rng(1).standard_normal(X.shape)
np.save(f"{w}/X.npy", X[:300].astype(np.float64)); np.save(f"{w}/y.npy", y[:300].astype(np.float64))
np.save(f"{w}/Xt.npy", X[300:400].astype(np.float64)); np.save(f"{w}/yt.npy", y[300:400].astype(np.float64))
PY
# gamma = 0.32: n = 200 steps; ode.points = 201 records every step
cat > "$work/m.ini" <<EOF
[data]
source = file
features = $work/X.npy
labels = $work/y.npy
labels_positive = 0,2,4,6,8
test_features = $work/Xt.npy
test_labels = $work/yt.npy
gamma = 0.32
[ode]
model = rows
points = 201
EOF

for cfg in "0.3 inf" "0.3 0.5" "1 inf" "inf inf"; do
  read -r c rho <<<"$cfg"
  "$bin" ode "$work/m.ini" --set clip.c=$c --set privacy.rho=$rho -o "$work/o.csv" \
    --json "$work/o.json" 2>"$work/err.txt" || cat "$work/err.txt"
  "$py" "$src/scripts/data_meanfield.py" "$work/X.npy" "$work/y.npy" --positive 0,2,4,6,8 \
    --c $c --gamma 0.32 --rho $rho --test "$work/Xt.npy" "$work/yt.npy" --csv "$work/ref.csv" >/dev/null
  check "c = $c, rho = $rho: every step's risk and held-out MSE = data_meanfield.py (1e-9)" \
    "$py" - "$work" <<'PY'
import csv, json, sys
w = sys.argv[1]
rows = [r for r in csv.reader(l for l in open(f"{w}/o.csv") if not l.startswith("#"))]
head, data = rows[0], rows[1:]
R = [float(r[head.index("risk")]) for r in data]
T = [float(r[head.index("ode_test_mse")]) for r in data]
ref = [[float(v) for v in l.split(",")] for l in open(f"{w}/ref.csv")]
assert len(R) == len(ref) == 201, (len(R), len(ref))
worst = max(max(abs(a - b[1]) / abs(b[1]), abs(t - b[2]) / abs(b[2])) for a, t, b in zip(R, T, ref))
o = json.load(open(f"{w}/o.json"))
print(f"  R(1) = {R[-1]:.10g} (script {ref[-1][1]:.10g}), test MSE {T[-1]:.10g}; worst relative difference {worst:.2e}")
assert o["solver"] == "rows", o["solver"]
assert abs(o["final_risk"] / R[-1] - 1) < 1e-11 and abs(o["ode_test_mse"] / T[-1] - 1) < 1e-11
assert all(r[head.index("risk_upper")] == "" for r in data)
sys.exit(0 if worst < 1e-9 else 1)
PY
done

# validate: the same recursion against the rows' Monte Carlo (20 runs)
"$bin" validate "$work/m.ini" --set clip.c=0.3 --set sim.runs=20 --set ode.points=21 \
  --json "$work/v.json" -f "$work/v.png" >/dev/null 2>"$work/err.txt"
rc=$?
check "validate with model = rows runs (exit $rc), draws its figure and compares the recursion" \
  "$py" - "$work" $rc <<'PY'
import json, os, sys
assert sys.argv[2] in ("0", "1") and os.path.getsize(f"{sys.argv[1]}/v.png") > 0
v = json.load(open(f"{sys.argv[1]}/v.json"))
print(f"  ode {v['ode_final_risk']:.6g}, sim {v['final_risk']:.6g}")
sys.exit(0 if abs(v["ode_final_risk"] / v["final_risk"] - 1) < 0.2 else 1)
PY
check "validate with model = rows skips the SDE side (the bins ODE's SDE) with a note" \
  "$py" -c 'import json, sys; v = json.load(open(sys.argv[1]))
sys.exit(0 if "sde_pass" not in v and "sim_pass" in v else 1)' "$work/v.json"
check "  ... and says so" grep -q "ode.model = rows: the SDE side is skipped" "$work/err.txt"

# bad input: exit 2, [ode] model named, nothing written
refused "synthetic data" "\[ode\] model: rows steps a data set" ode --set ode.model=rows
refused "planted target" "\[ode\] model: rows needs data.target = least-squares" \
  ode "$work/m.ini" --set data.target=planted
refused "batch 2" "\[ode\] model: rows is the recursion of batch 1" ode "$work/m.ini" --set sgd.batch=2
refused "ode.discrete" "\[ode\] discrete" ode "$work/m.ini" --set ode.discrete=true
refused "N d^2 n above the budget" "N d^2 n = 300 x 64^2 x 6400000" \
  ode "$work/m.ini" --set data.gamma=1e-5
refused "schedule --optimize" "\[ode\] model: schedule design" schedule --optimize "$work/m.ini"
refused "unknown model name" "\[ode\] model" ode "$work/m.ini" --set ode.model=row

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
