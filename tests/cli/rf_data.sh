#!/usr/bin/env bash
# `hdpsgd rf` on a data set's rows (data.source = file, docs/theory.md §7.5): the random features
# of the real rows, not of drawn Gaussian inputs. On a 300 x 10 matrix with labels and a 100-row
# held-out set written here by NumPy: the JSON says which inputs, labels and test set were used
# and differs from the synthetic run; the losses of theta = 0 are NumPy's mean squared centred
# labels; with linear features and p = d the min-norm interpolator is the rows' least squares
# (NumPy's train and held-out MSE); unclipped DP-GD on the rows' features within 4 standard
# errors of the closed forms (the recursion's and the exact OU step's); the test set held out
# from the file without a held-out file; bad combinations refused (exit 2, the key named,
# nothing written).
#   rf_data.sh HDPSGD [PYTHON]   (PYTHON: a python3 with NumPy; exit 77 without)
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
# refused NAME PATTERN ARGS...: rf exits 2, the message matches PATTERN, no output file
refused() {
  local name=$1 pat=$2; shift 2
  rm -f out.csv out.json
  "$bin" rf "$@" -o out.csv --json out.json 2> err.txt
  local rc=$?
  if [[ $rc -eq 2 ]] && grep -q -- "$pat" err.txt && [[ ! -e out.csv && ! -e out.json ]]; then
    pass=$((pass + 1)); echo "ok   refused: $name"
  else
    fail=$((fail + 1)); echo "FAIL refused: $name (exit $rc)"; cat err.txt
  fi
}

"$py" - <<'PY'
import json
import numpy as np
rng = np.random.default_rng(11)
N, Nt, d = 300, 100, 10
scales = np.linspace(2.5, 0.4, d)
X = rng.standard_exponential((N, d)) * scales + 2.0       # skewed, not Gaussian, not centred
w = rng.standard_normal(d) * 0.5
y = X @ w + 0.3 * rng.standard_normal(N) + 1.0
Xt = rng.standard_exponential((Nt, d)) * scales + 2.0
yt = Xt @ w + 0.3 * rng.standard_normal(Nt) + 1.0
np.save("X.npy", X); np.save("y.npy", y); np.save("Xt.npy", Xt); np.save("yt.npy", yt)
# the reference: the data set's preparation (centring, trace scaling) and least squares
mu = X.mean(0); Xc = X - mu; s = np.sqrt(d / np.trace(Xc.T @ Xc / N)); Xc *= s
yc = y - y.mean()
theta = np.linalg.lstsq(Xc, yc, rcond=None)[0]
Xtc = (Xt - mu) * s; ytc = yt - y.mean()
json.dump({"zero_train": float(np.mean(yc ** 2)), "zero_test": float(np.mean(ytc ** 2)),
           "ls_train": float(np.mean((Xc @ theta - yc) ** 2)),
           "ls_test": float(np.mean((Xtc @ theta - ytc) ** 2))}, open("ref.json", "w"))
PY

data=(--set data.source=file --set data.features=X.npy --set data.labels=y.npy
      --set data.test_features=Xt.npy --set data.test_labels=yt.npy)
rfs=(--set rf.p=120 --set rf.records=4 --seed 5 --runs 3)

"$bin" rf "${data[@]}" "${rfs[@]}" -o d.csv --json d.json 2>/dev/null
"$bin" rf "${rfs[@]}" --set rf.d=10 --set rf.n=300 --set rf.test_size=100 -o g.csv --json g.json 2>/dev/null
check "the rows are the inputs: sizes from the files, labels and test set named, not the synthetic run" \
  "$py" - <<'PY'
import json, sys
d, g, r = json.load(open("d.json")), json.load(open("g.json")), json.load(open("ref.json"))
ok = (d["inputs"], d["labels"], d["test_set"]) == ("data", "data", "held-out file")
ok &= (g["inputs"], g["labels"], g["test_set"]) == ("gaussian", "sign", "drawn")
ok &= (d["d"], d["n"], d["test_size"], d["p"]) == (10, 300, 100, 120)
ok &= abs(d["dpgd_test"] - g["dpgd_test"]) > 1e-3 and abs(d["minnorm_test"] - g["minnorm_test"]) > 1e-3
for k in ("zero_train", "zero_test"):   # theta = 0: the mean squared centred labels
    print(f"  {k}: {d[k]:.15g} vs NumPy {r[k]:.15g}")
    ok &= abs(d[k] - r[k]) <= 1e-12 * r[k]
print(f"  DP-GD test loss {d['dpgd_test']:.6g} (rows) vs {g['dpgd_test']:.6g} (Gaussian inputs)")
sys.exit(0 if ok else 1)
PY
"$bin" rf "${data[@]}" "${rfs[@]}" --threads 2 -o d2.csv 2>/dev/null
"$bin" rf "${data[@]}" "${rfs[@]}" --threads 1 -o d1.csv 2>/dev/null
check "the same CSV bytes on 1 and 2 threads" cmp -s d1.csv d2.csv
check "rf -o's header names the inputs" grep -q "^# ; inputs = data, labels = data, test set = held-out file" d.csv

# linear features with p = d: Phi = X V^T spans the rows' column space, so the min-norm
# interpolator (least squares, p < n) fits what least squares on the rows fits
"$bin" rf "${data[@]}" --set rf.p=10 --set rf.activation=linear --set rf.records=2 --runs 1 \
  --set dpgd.epsilon=inf --set dpgd.C=inf -o l.csv --json l.json 2>/dev/null
check "linear features, p = d: the min-norm interpolator is the rows' least squares (NumPy)" \
  "$py" - <<'PY'
import json, sys
l, r = json.load(open("l.json")), json.load(open("ref.json"))
ok = l["modes"] == 10
for a, b in (("minnorm_train", "ls_train"), ("minnorm_test", "ls_test")):
    print(f"  {a}: {l[a]:.15g} vs NumPy {r[b]:.15g}")
    ok &= abs(l[a] - r[b]) <= 1e-8 * r[b]
sys.exit(0 if ok else 1)
PY

# no clipping (C_clip far above every gradient), private noise: DP-GD on the rows' tanh
# features against the closed forms of docs/theory.md §7.3 computed from their Phi
"$bin" rf "${data[@]}" --set rf.p=200 --set rf.records=5 --runs 40 --seed 2 --set dpgd.T=300 \
  --set dpgd.clip=1000 --set dpgd.sigma=0.02 -o u.csv --json u.json 2>/dev/null
check "unclipped DP-GD on the rows within 4 standard errors of the recursion's closed form and the exact OU step of the OU law" \
  "$py" - <<'PY'
import json, sys
u = json.load(open("u.json"))
z1 = (u["dpgd_test"] - u["ou_em_expected_test"]) / u["dpgd_test_stderr"]
z2 = (u["ou_exact_step_test"] - u["ou_exact_test"]) / u["ou_exact_step_test_stderr"]
print(f"  DP-GD {u['dpgd_test']:.6g} +- {u['dpgd_test_stderr']:.2g} vs recursion {u['ou_em_expected_test']:.6g} ({z1:+.2f} se); "
      f"exact step {u['ou_exact_step_test']:.6g} vs OU {u['ou_exact_test']:.6g} ({z2:+.2f} se); s = {u['s']:.3g}")
ok = u["max_clipped_fraction"] == 0 and u["s"] > 0 and abs(z1) <= 4 and abs(z2) <= 4
ok &= u["strong_error_em_max"] <= 1e-9      # DP-GD = its Euler-Maruyama OU path while unclipped
ok &= abs(u["dpgd_test"] - u["minnorm_test"]) > 4 * u["dpgd_test_stderr"]   # the noise is seen
sys.exit(0 if ok else 1)
PY

# without a held-out file: rf.test_size rows of the file held out (default 20 %), n the rest
"$bin" rf --set data.source=file --set data.features=X.npy --set data.labels=y.npy "${rfs[@]}" \
  --json h.json -o h.csv 2>/dev/null
"$bin" rf --set data.source=file --set data.features=X.npy --set data.labels=y.npy "${rfs[@]}" \
  --set rf.test_size=50 --set rf.n=250 --json h2.json -o h2.csv 2>/dev/null
check "without data.test_features: 20 % of the rows held out (or rf.test_size), n the rest" \
  "$py" - <<'PY'
import json, sys
h, h2 = json.load(open("h.json")), json.load(open("h2.json"))
ok = (h["n"], h["test_size"], h["test_set"]) == (240, 60, "rows held out")
ok &= (h2["n"], h2["test_size"]) == (250, 50)
sys.exit(0 if ok else 1)
PY

# without labels: rf.target's labels on the rows (sign: every label +-1, mean square 1)
"$bin" rf --set data.source=file --set data.features=X.npy --set data.test_features=Xt.npy \
  "${rfs[@]}" --set rf.target=sign --json s.json -o s.csv 2>/dev/null
check "rows without labels: rf.target = sign on the rows" "$py" -c '
import json, sys
s = json.load(open("s.json"))
sys.exit(0 if (s["labels"], s["zero_train"], s["zero_test"], s["n"]) == ("sign", 1, 1, 300) else 1)'

refused "rf.d against the file" "\[rf\] d: d = 12 with data.source = file.*have 10 columns" \
  "${data[@]}" "${rfs[@]}" --set rf.d=12
refused "rf.n against the file" "\[rf\] n: n = 200 .*set it to 300" "${data[@]}" "${rfs[@]}" \
  --set rf.n=200
refused "rf.n against the file less the held-out rows" "\[rf\] n: .*set it to 240" \
  --set data.source=file --set data.features=X.npy --set data.labels=y.npy "${rfs[@]}" --set rf.n=300
refused "rf.test_size against the held-out file" "\[rf\] test_size: .*set it to 100" \
  "${data[@]}" "${rfs[@]}" --set rf.test_size=50
refused "rf.test_size of all the rows" "\[rf\] test_size: .*need test_size <= 299" \
  --set data.source=file --set data.features=X.npy --set data.labels=y.npy "${rfs[@]}" \
  --set rf.test_size=300
refused "rf.target with the data set's labels" "\[rf\] target: the labels are the data set's" \
  "${data[@]}" "${rfs[@]}" --set rf.target=linear
refused "rf.label_noise with the data set's labels" "\[rf\] label_noise: " \
  "${data[@]}" "${rfs[@]}" --set rf.label_noise=0.1
refused "n p above 2e8, with the file's n" "\[rf\] p: p = 1000000 with the 300 training rows of X.npy" \
  "${data[@]}" --set rf.p=1000000
mkdir -p p1
"$bin" rf-experiment P1 "${data[@]}" -o p1 2> err.txt
check "rf-experiment refuses a data set: exit 2, data.source named, nothing written" \
  bash -c '[[ $0 -eq 2 ]] && grep -q "\[data\] source: rf-experiment draws its inputs" err.txt && [[ -z $(ls p1) ]]' $?

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
