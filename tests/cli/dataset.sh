#!/usr/bin/env bash
# Command-line checks of `hdpsgd dataset` (hdpsgd/dataset.h, docs/theory.md §9).
#   dataset.sh HDPSGD [small|real] [PYTHON]     (PYTHON: a python3 with NumPy; exit 77 without)
#   small (default)            small files written by NumPy (.npy C and Fortran order, float32
#                              and float64, gzipped; CSV with a header): every number of the
#                              JSON against NumPy's own computation; bad input: exit 2, the
#                              file named, nothing written.
#   real                       the real data sets when installed (exit 77 when neither is):
#                              Fashion-MNIST (Debian's dataset-fashion-mnist) against NumPy,
#                              and scikit-learn's digits (python3-sklearn's digits.csv.gz).
set -u
bin=$1
mode=${2:-small}
py=${3:-python3} # a python3 with NumPy (CMake's HDP_PYTHON_NUMPY)
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "skipped: no python3 with NumPy (apt-get install python3-numpy), the reference of these checks"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...

# the reference: NumPy's own centring, scaling, eigenvalues and least squares (pinv)
cat > "$work/ref.py" <<'PY'
import json, sys
import numpy as np
def reference(X, y, positive, center=True, ridge=0.0):
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if center:
        X = X - X.mean(axis=0)
    S = X.T @ X / n
    s = np.sqrt(d / np.trace(S))
    S = S * s * s
    lam, U = np.linalg.eigh(S)
    out = {"scale_factor": s, "eigenvalues": lam[::-1]}
    if y is not None:
        y = np.asarray(y, dtype=np.float64)
        if positive is not None:
            y = np.where(np.isin(y, positive), 1.0, -1.0)
        if center:
            y = y - y.mean()
        b = (s * X).T @ y / n
        if ridge > 0:
            th = np.linalg.solve(S + ridge * np.eye(d), b)
        else:
            th = np.linalg.pinv(S, rcond=1e-12, hermitian=True) @ b
        z = y - (s * X) @ th
        out.update(theta_norm=np.linalg.norm(th), risk0=0.5 * th @ S @ th,
                   residual_variance=np.mean(z * z))
    return out
def compare(jpath, ref, tol, top=None):
    j = json.load(open(jpath))
    bad = []
    for k, v in ref.items():
        got = np.asarray(j[k], dtype=np.float64)
        want = np.asarray(v)
        if top:
            got, want = np.atleast_1d(got)[:top], np.atleast_1d(want)[:top]
        scale = np.maximum(np.abs(want), 1e-6 * np.max(np.abs(want)))
        err = np.max(np.abs(got - want) / scale)
        if not err <= tol:
            bad.append(f"{k}: relative error {err:.3g} > {tol}")
    if bad:
        print("\n".join(bad))
        sys.exit(1)
PY

if [[ $mode == small ]]; then
  "$py" - "$work" <<'PY'
import gzip, sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(7)
n, d = 500, 20
X = rng.standard_normal((n, d)) @ np.diag(np.linspace(0.2, 3, d)) @ (np.eye(d) + 0.3 * rng.standard_normal((d, d))) + 5
y = rng.integers(0, 5, n)
np.save(f"{w}/x64.npy", X)
with gzip.open(f"{w}/x32f.npy.gz", "wb") as f:
    np.save(f, np.asfortranarray(X.astype(np.float32)))
np.save(f"{w}/y.npy", y.astype(np.int64))
np.savetxt(f"{w}/y.csv", y, fmt="%d", header="label", comments="")
np.savetxt(f"{w}/x.csv", X, delimiter=",", fmt="%.17g", header=",".join(f"f{j}" for j in range(d)), comments="")
np.save(f"{w}/y_short.npy", y[:-1])
bad = X.copy(); bad[3, 7] = np.nan
np.save(f"{w}/nan.npy", bad)
np.save(f"{w}/X32.npy", X.astype(np.float32))
Xt = rng.standard_normal((120, d)) @ np.diag(np.linspace(0.2, 3, d)) + 5
np.save(f"{w}/xt.npy", Xt); np.save(f"{w}/yt.npy", rng.integers(0, 5, 120).astype(np.uint8))
np.save(f"{w}/xt19.npy", Xt[:, :19])
PY
  for f in x64.npy x32f.npy.gz x.csv; do
    "$bin" dataset "$work/$f" --labels "$work/y.npy" --positive 1,3 --json "$work/$f.json" >"$work/$f.out" 2>"$work/$f.err"
    check "$f: exit 0" test $? -eq 0
    src=$f; [[ $f == x32f.npy.gz ]] && src=X32.npy
    tol=1e-9; [[ $f == x32f.npy.gz ]] && tol=1e-5
    check "$f: scale, eigenvalues, |theta*|, R(0), residual variance = NumPy's ($tol)" \
      "$py" - "$work" "$src" "$f.json" "$tol" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from ref import reference, compare
w, src, js, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
X = np.loadtxt(f"{w}/{src}", delimiter=",", skiprows=1) if src.endswith(".csv") else np.load(f"{w}/{src}")
compare(f"{w}/{js}", reference(X, np.load(f"{w}/y.npy"), [1, 3]), tol)
PY
  done
  check "prints N, d, the factor, the eigenvalues and the target" \
    grep -q -e 'N = 500 rows, d = 20' "$work/x64.npy.out"
  check "the float32 file stays float32" grep -q 'float32 storage' "$work/x32f.npy.gz.out"
  "$bin" dataset "$work/x.csv" --labels "$work/y.csv" --ridge 0.5 --json "$work/r.json" >/dev/null 2>&1
  check "CSV labels with a header, ridge 0.5, labels as numbers = NumPy" "$py" - "$work" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from ref import reference, compare
w = sys.argv[1]
X = np.loadtxt(f"{w}/x.csv", delimiter=",", skiprows=1)
compare(f"{w}/r.json", reference(X, np.load(f"{w}/y.npy"), None, ridge=0.5), 1e-9)
PY
  "$bin" dataset "$work/x64.npy" --labels "$work/y.npy" --positive 1,3 --test-features "$work/xt.npy" \
    --test-labels "$work/yt.npy" --json "$work/t.json" >"$work/t.out" 2>&1
  check "held-out set: exit 0, its MSE printed" grep -q 'test: .*xt.npy: 120 rows, mean squared error' "$work/t.out"
  check "held-out set: test_mse = NumPy's (training mean, scale and theta*)" "$py" - "$work" <<'PY'
import json, sys
import numpy as np
w = sys.argv[1]
X, y = np.load(f"{w}/x64.npy"), np.where(np.isin(np.load(f"{w}/y.npy"), [1, 3]), 1.0, -1.0)
Xt, yt = np.load(f"{w}/xt.npy"), np.where(np.isin(np.load(f"{w}/yt.npy"), [1, 3]), 1.0, -1.0)
mu, ym = X.mean(0), y.mean()
th = np.linalg.lstsq(X - mu, y - ym, rcond=None)[0]
mse = np.mean((yt - ym - (Xt - mu) @ th) ** 2)
j = json.load(open(f"{w}/t.json"))
assert j["test_n"] == 120 and abs(j["test_mse"] - mse) <= 1e-9 * mse, (j["test_mse"], mse)
PY

  # bad input: exit 2, the file named, no JSON written
  bad() { # bad NAME FRAGMENT ARGS...
    local name=$1 frag=$2; shift 2
    rm -f "$work/bad.json"
    "$bin" dataset "$@" --json "$work/bad.json" >"$work/bad.out" 2>"$work/bad.err"
    local rc=$?
    check "$name: exit 2" test $rc -eq 2
    check "$name: says '$frag'" grep -q -e "$frag" "$work/bad.err"
    check "$name: no JSON, nothing on stdout" test ! -e "$work/bad.json" -a ! -s "$work/bad.out"
  }
  bad "NaN entry" "nan.npy: row 4, column 8 is NaN" "$work/nan.npy"
  bad "labels of another length" "y_short.npy: 499 labels for the 500 rows" "$work/x64.npy" --labels "$work/y_short.npy"
  bad "missing file" "nothere.npy" "$work/nothere.npy"
  bad "test set of another d" "xt19.npy: rows of 19 values, the training rows have d = 20" "$work/x64.npy" --test-features "$work/xt19.npy"
  bad "test labels of another length" "y.npy: 500 labels for the 120 rows" "$work/x64.npy" --labels "$work/y.npy" --test-features "$work/xt.npy" --test-labels "$work/y.npy"
  cp "$work/y.npy" "$work/y2.npy"
  "$bin" dataset "$work/x64.npy" --labels "$work/y2.npy" --json "$work/y2.npy" >/dev/null 2>"$work/same.err"
  check "--json naming the labels' file: exit 2, the file kept" \
    bash -c "test $? -eq 2 && cmp -s '$work/y.npy' '$work/y2.npy' && grep -q 'would be overwritten' '$work/same.err'"
  "$bin" dataset "$work/x64.npy" --json "$work/x64.npy" >/dev/null 2>"$work/same.err"
  check "--json naming the features' file: exit 2" test $? -eq 2
  check "the features' file kept" "$py" -c "import numpy, sys; numpy.load(sys.argv[1])" "$work/x64.npy"
  bad "test labels without test rows" "needs --test-features" "$work/x64.npy" --labels "$work/y.npy" --test-labels "$work/yt.npy"
  printf '1,2,3\n4,5\n' > "$work/ragged.csv"
  bad "ragged CSV" "ragged.csv: line 2 has 2 columns" "$work/ragged.csv"
  printf '1,2\n3,four\n' > "$work/word.csv"
  bad "non-numeric CSV" "word.csv: line 2, column 2 is not a number" "$work/word.csv"
  head -c 300 "$work/x32f.npy.gz" > "$work/cut.npy.gz"
  bad "truncated gzip" "cut.npy.gz: truncated gzip" "$work/cut.npy.gz"
  : > "$work/empty.csv"
  bad "empty file" "empty.csv: the file is empty" "$work/empty.csv"
  bad "positive class absent" "the positive class 7 is not among the labels" "$work/x64.npy" --labels "$work/y.npy" --positive 7
  bad "positive list" "expected integer classes" "$work/x64.npy" --labels "$work/y.npy" --positive 1,x
  bad "positive without labels" "needs --labels" "$work/x64.npy" --positive 1
  bad "negative ridge" "ridge" "$work/x64.npy" --ridge -1
  "$bin" dataset >/dev/null 2>"$work/noarg.err"
  check "no file: exit 2" test $? -eq 2
else
  fm=/usr/share/datasets/fashion-mnist
  digits=$("$py" -c 'import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), "data", "digits.csv.gz"))' 2>/dev/null)
  have=0
  if [[ -r $fm/train-images-idx3-ubyte.gz && -r $fm/train-labels-idx1-ubyte.gz ]]; then
    have=1
    start=$(date +%s.%N)
    "$bin" dataset "$fm/train-images-idx3-ubyte.gz" --labels "$fm/train-labels-idx1-ubyte.gz" \
      --positive 0 --test-features "$fm/t10k-images-idx3-ubyte.gz" \
      --test-labels "$fm/t10k-labels-idx1-ubyte.gz" --json "$work/fm.json" >"$work/fm.out" 2>&1
    check "Fashion-MNIST: exit 0" test $? -eq 0
    echo "Fashion-MNIST read and prepared (rotation and target included) in $("$py" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$start" "$(date +%s.%N)") s wall"
    check "Fashion-MNIST: 60000 x 784, float32" grep -q 'N = 60000 rows, d = 784 (float32' "$work/fm.out"
    check "Fashion-MNIST: eigenvalues, |theta*|, R(0), residual variance = NumPy's (1e-8)" \
      "$py" - "$work" "$fm" <<'PY'
import gzip, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from ref import reference, compare
w, fm = sys.argv[1], sys.argv[2]
X = np.frombuffer(gzip.open(f"{fm}/train-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(60000, 784)
y = np.frombuffer(gzip.open(f"{fm}/train-labels-idx1-ubyte.gz").read()[8:], np.uint8)
ref = reference(X, y, [0])
ref["eigenvalues"] = ref["eigenvalues"][:50]  # the bulk's small eigenvalues are rounding
compare(f"{w}/fm.json", ref, 1e-8, top=50)
# the held-out set (t10k) with the training mean, scale and target
Xt = np.frombuffer(gzip.open(f"{fm}/t10k-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(10000, 784)
yt = np.where(np.frombuffer(gzip.open(f"{fm}/t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8) == 0, 1.0, -1.0)
Xf = X.astype(np.float64); mu = Xf.mean(0); yp = np.where(y == 0, 1.0, -1.0); ym = yp.mean()
S = (Xf - mu).T @ (Xf - mu) / 60000
th = np.linalg.pinv(S, rcond=1e-12, hermitian=True) @ ((Xf - mu).T @ (yp - ym) / 60000)
mse = np.mean((yt - ym - (Xt - mu) @ th) ** 2)
compare(f"{w}/fm.json", {"test_mse": mse}, 1e-7)
PY
  fi
  if [[ -n $digits && -r $digits ]]; then
    have=1
    "$bin" dataset "$digits" --json "$work/dg.json" >"$work/dg.out" 2>&1
    check "digits.csv.gz: exit 0, 1797 x 65 (64 pixels and the class)" grep -q 'N = 1797 rows, d = 65' "$work/dg.out"
    "$py" - "$work" "$digits" <<'PY'
import sys
import numpy as np
w, p = sys.argv[1], sys.argv[2]
a = np.loadtxt(p, delimiter=",")
np.save(f"{w}/dx.npy", a[:, :64]); np.save(f"{w}/dy.npy", a[:, 64].astype(np.int32))
PY
    "$bin" dataset "$work/dx.npy" --labels "$work/dy.npy" --positive 0 --json "$work/dxy.json" >/dev/null 2>&1
    check "digits, class 0 vs the rest: = NumPy's (1e-9)" "$py" - "$work" "$digits" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from ref import reference, compare
w, p = sys.argv[1], sys.argv[2]
a = np.loadtxt(p, delimiter=",")
compare(f"{w}/dg.json", reference(a, None, None), 1e-9)
compare(f"{w}/dxy.json", reference(a[:, :64], a[:, 64], [0]), 1e-9)
PY
  fi
  if [[ $have -eq 0 ]]; then
    echo "skipped: neither dataset-fashion-mnist nor python3-sklearn's digits is installed"
    exit 77
  fi
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
