#!/usr/bin/env bash
# Standard DP-SGD on a data file's rows (issue 33, docs/theory.md §6.6): sgd.sampling = poisson |
# shuffle with data.source = file trains on the file's N rows for several epochs. On a tiny set
# written by NumPy: the JSON's N, q, steps and held-out test MSE, the same bytes on 1 and 2
# threads, planted labels; full-batch GD (sigma = 0, c = inf, B = N) against NumPy's own
# recursion on the prepared rows (the excess risk through Sigma and the held-out MSE, exactly for
# float64 rows, to float32 rounding for float32 rows); bad input exit 2 naming the key.
#   data_finite.sh HDPSGD [PYTHON]   (PYTHON: a python3 with NumPy; exit 77 without)
set -u
bin=$1
py=${2:-python3}
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "skipped: no python3 with NumPy (apt-get install python3-numpy), the reference of these checks"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
# refused FRAGMENT -- COMMAND...: exit 2, FRAGMENT in the message, no output file
refused() {
  local frag=$1; shift 2
  rm -f out.csv out.json
  "$@" -o out.csv --json out.json >/dev/null 2>err; local st=$?
  [[ $st -eq 2 && ! -e out.csv && ! -e out.json ]] && grep -qF -- "$frag" err ||
    { echo "    exit $st:"; sed 's/^/      /' err | head -3; return 1; }
}

"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(11)
N, d = 60, 6
scale = np.array([2.0, 1.5, 1.0, 0.7, 0.5, 0.3])
X = rng.standard_normal((N, d)) * scale + 0.4
w = rng.standard_normal(d)
y = X @ w + 0.3 * rng.standard_normal(N)
Xt = rng.standard_normal((25, d)) * scale + 0.4
yt = Xt @ w + 0.3 * rng.standard_normal(25)
np.save("X.npy", X); np.save("y.npy", y)
np.save("X32.npy", X.astype(np.float32))
np.savetxt("Xt.csv", Xt, delimiter=","); np.savetxt("yt.csv", yt)
PY
data=(--set data.source=file --set data.features=X.npy --set data.labels=y.npy
      --set data.test_features=Xt.csv --set data.test_labels=yt.csv)
run=("${data[@]}" --set sgd.batch=10 --set sgd.epochs=2 --set clip.c=0.5 --runs 7)

for s in poisson shuffle; do
  for t in 1 2; do
    "$bin" sim "${run[@]}" --set sgd.sampling=$s --threads $t -o $s$t.csv --json $s$t.json 2>$s$t.err
    check "$s, $t thread(s): exit 0" test $? -eq 0
  done
  check "$s: the same CSV on 1 and 2 threads" cmp -s ${s}1.csv ${s}2.csv
  check "$s: the same JSON numbers on 1 and 2 threads" "$py" - ${s}1.json ${s}2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for d in (a, b):
    for k in ('seconds', 'threads', 'version'):
        d.pop(k, None)
assert a == b
PY
  check "$s: N = 60 rows, q = 1/6, 12 steps, the held-out MSE recorded" "$py" - $s <<'PY'
import json, math, sys
s = sys.argv[1]
d = json.load(open(f"{s}1.json"))
assert d["sample_rate"] == 10 / 60 and d["steps"] == 12, d
assert d["accounted_steps"] == (12 if s == "poisson" else 2), d
assert d["noise_calibrated"] is True and d["noise_multiplier"] > 0
assert math.isfinite(d["test_mse"]) and d["test_mse_stderr"] > 0, d
assert d["rho_accounted"] is None
PY
done
check "the summary names the file's 60 rows" grep -q 'Poisson DP-SGD on 60 rows: batch 10' poisson1.err

"$bin" sim "${run[@]}" --set sgd.sampling=poisson --set data.target=planted --set data.tau2=0.2 \
  -o pl.csv --json pl.json 2>/dev/null
check "planted labels: runs, the held-out MSE includes tau^2" "$py" -c '
import json; d = json.load(open("pl.json"))
assert d["test_mse"] > 0.2 and d["final_risk_mean"] > 0 and d["steps"] == 12, d'
"$bin" sim "${run[@]}" --set sgd.sampling=poisson --set data.train_size=60 -o n.csv --json n.json 2>/dev/null
check "data.train_size = N is accepted (the same run)" "$py" -c '
import json; a, b = json.load(open("n.json")), json.load(open("poisson1.json"))
assert a["final_risk_mean"] == b["final_risk_mean"] and a["test_mse"] == b["test_mse"]'

# full-batch GD: sigma = 0 (no budget), c = inf, B = N: theta_{k+1} = theta_k - eta X^T(X theta_k
# - y)/N on the centred, trace-scaled rows, every run the same; E = 15 epochs = 15 steps
gd=("${data[@]}" --set sgd.batch=60 --set sgd.epochs=15 --set clip.c=inf --set privacy.rho=inf
    --set schedule.kind=constant --set schedule.eta0=0.3 --runs 3)
for s in poisson shuffle; do
  "$bin" sim "${gd[@]}" --set sgd.sampling=$s -o gd$s.csv --json gd$s.json 2>/dev/null
  "$bin" sim "${gd[@]}" --set sgd.sampling=$s --set data.features=X32.npy -o gf$s.csv \
    --json gf$s.json 2>/dev/null
done
check "full-batch GD (poisson at q = 1 and shuffle) equals NumPy's recursion" "$py" - <<'PY'
import json, sys
import numpy as np
def reference(Xfile):
    X, y = np.load(Xfile).astype(np.float64), np.load("y.npy")
    Xt, yt = np.loadtxt("Xt.csv", delimiter=","), np.loadtxt("yt.csv")
    N, d = X.shape
    mu = X.mean(0); Xc = X - mu
    s = np.sqrt(d / np.trace(Xc.T @ Xc / N)); Xc *= s
    S = Xc.T @ Xc / N; yc = y - y.mean()
    theta_star = np.linalg.solve(S, Xc.T @ yc / N)
    Xtc = (Xt - mu) * s; ytc = yt - y.mean()
    th = np.zeros(d)
    for k in range(15):
        th = th - 0.3 * Xc.T @ (Xc @ th - yc) / N
    e = th - theta_star
    return 0.5 * e @ S @ e, np.mean((ytc - Xtc @ th) ** 2)
ok = True
for f, tol in (("X.npy", 1e-9), ("X32.npy", 1e-5)):
    R, mse = reference(f)
    for s in ("poisson", "shuffle"):
        d = json.load(open(f"{'gd' if f == 'X.npy' else 'gf'}{s}.json"))
        for name, got, want in (("R", d["final_risk_mean"], R), ("test MSE", d["test_mse"], mse)):
            rel = abs(got / want - 1)
            print(f"  {f} {s} {name}: {got:.15g} vs NumPy {want:.15g} ({rel:.1e})")
            ok = ok and rel <= tol
        ok = ok and d["steps"] == 15 and d["final_risk_stderr"] <= 1e-12 * R
sys.exit(0 if ok else 1)
PY

refused "train_size" -- "$bin" sim "${run[@]}" --set sgd.sampling=shuffle --set data.train_size=50
refused_st=$?; check "data.train_size other than the file's N refused" test $refused_st -eq 0
refused "batch" -- "$bin" sim "${run[@]}" --set sgd.sampling=poisson --set sgd.batch=61
refused_st=$?; check "batch above the file's N refused" test $refused_st -eq 0

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
