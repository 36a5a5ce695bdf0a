#!/usr/bin/env bash
# Command-line checks of `hdpsgd nc` (the NC paper, docs/theory.md §8): the single run (JSON keys,
# Monte Carlo against the exact one-step error, the privacy report), --exact against the
# closed forms, identical numbers for any --threads, a small --sweep (CSV columns, figure,
# JSON), and exit status 2 naming the key, with no output, on bad input.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
py() { python3 - "$@"; }

"$bin" nc --set nc.p=50 --draws 2000 --seed 7 --json "$work/a.json" -o "$work/a.csv" >"$work/out" 2>&1
check "nc exits 0 on the default model" test $? -eq 0
for key in K p n loss perturbation remedy rho rho_total epsilon delta sigma exact_error draws \
           error_mean error_stderr z_exact clipped_fraction max_clipped_norm seed; do
  check "JSON has $key" grep -q "\"$key\":" "$work/a.json"
done
check "Monte Carlo within 4 stderr of the exact error; sigma = G/sqrt(2 rho); epsilon by CKS" \
  py "$work/a.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d['z_exact'] < 4, d
assert abs(d['sigma'] - 1 / math.sqrt(2 * 0.005)) < 1e-12
assert d['rho_total'] == d['rho'] and 0.3 < d['epsilon'] < 0.45, d['epsilon']
assert d['clipped_fraction'] == 0 and d['max_clipped_norm'] <= 1
PY
check "the CSV has one row with the documented columns" py "$work/a.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
assert len(rows) == 1
for k in ['curve', 'name', 'p', 'error', 'stderr', 'exact', 'z_exact', 'epsilon', 'rho_total']:
    assert k in rows[0], k
PY
check "the report states the privacy convention" grep -q "zCDP per step (the NC paper's rho" "$work/out"

"$bin" nc --exact --set nc.K=2 --set nc.n=30 --json "$work/k2.json" >/dev/null 2>&1
"$bin" nc --exact --set nc.K=2 --set nc.n=30 --set nc.loss=logistic --json "$work/lg.json" >/dev/null 2>&1
"$bin" nc --exact --set nc.K=2 --set nc.n=30 --set nc.imbalance=0.2 --json "$work/im.json" >/dev/null 2>&1
check "--exact: Phi(-n/(sqrt2 sigma)) for K = 2, Phi(-n/(2 sigma)) logistic, balance-free" \
  py "$work/k2.json" "$work/lg.json" "$work/im.json" <<'PY'
import json, math, sys
Phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
k2, lg, im = (json.load(open(f)) for f in sys.argv[1:4])
s = 10.0
assert abs(k2['exact_error'] - Phi(-30 / (math.sqrt(2) * s))) < 1e-9 * k2['exact_error'], k2
assert abs(lg['exact_error'] - Phi(-30 / (2 * s))) < 1e-12, lg
assert abs(im['exact_error'] - k2['exact_error']) < 1e-9 * k2['exact_error'], im
assert 'error_mean' not in k2
PY

"$bin" nc --set nc.perturbation=per-sample --set nc.p=300 --set nc.steps=2 --draws 40 --threads 1 \
  --json "$work/t1.json" >/dev/null 2>&1
"$bin" nc --set nc.perturbation=per-sample --set nc.p=300 --set nc.steps=2 --draws 40 --threads 2 \
  --json "$work/t2.json" >/dev/null 2>&1
check "the same numbers for --threads 1 and 2" py "$work/t1.json" "$work/t2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ['error_mean', 'error_stderr', 'max_clipped_norm', 'clipped_fraction']:
    assert a[k] == b[k], k
PY

"$bin" nc --sweep perturb --ps 10,100 --draws 60 -o "$work/s.csv" --figure "$work/s.png" \
  --json "$work/s.json" >/dev/null 2>"$work/s.err"
check "--sweep perturb exits 0" test $? -eq 0
check "--sweep writes the figure" test -s "$work/s.png"
check "--sweep CSV: 8 curves x 2 p, exact where it applies, growth with p" py "$work/s.csv" "$work/s.json" <<'PY'
import csv, json, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
assert len(rows) == 16, len(rows)
by = {(r['name'], int(r['p'])): r for r in rows}
assert by[('adversarial', 10)]['exact'] == ''  # does not apply: an empty field, never nan
assert math.isfinite(float(by[('both', 10)]['exact']))
assert all('nan' not in v.lower() for r in rows for v in r.values())
assert float(by[('both', 100)]['error']) > float(by[('both', 10)]['error'])
d = json.load(open(sys.argv[2]))
assert d['sweep'] == 'perturb' and 'none_flat_z' in d and 'per-sample_error_last' in d
PY

# bad input: exit 2, the key named, no output file
bad() { # bad NAME FRAGMENT ARGS...
  local name=$1 frag=$2; shift 2
  rm -f "$work"/out.*
  "$bin" nc "$@" -o "$work/out.csv" --json "$work/out.json" >/dev/null 2>"$work/err"
  local rc=$?
  check "$name: exit 2 ($rc)" test $rc -eq 2
  check "$name: message names '$frag'" grep -qF -- "$frag" "$work/err"
  check "$name: no output" test ! -e "$work/out.csv" -a ! -e "$work/out.json"
}
bad "p < K" "[nc] p: p = 5 is smaller than K = 10" --set nc.p=5
bad "logistic with K = 10" "[nc] loss:" --set nc.loss=logistic
bad "batch > n" "[nc] batch:" --set nc.batch=1000
bad "unknown perturbation" "[nc] perturbation = 'sideways' is not accepted" --set nc.perturbation=sideways
bad "rho = 0" "[nc] rho = 0 is out of range" --set nc.rho=0
bad "negative beta" "[nc] beta = -1 is out of range" --set nc.beta=-1
bad "--exact on a random perturbation" "[nc] perturbation:" --exact --set nc.perturbation=stochastic
bad "--exact with steps = 2" "[nc] steps:" --exact --set nc.steps=2
bad "unknown sweep" "--sweep 'wide'" --sweep wide
bad "--ps below K" "--ps: p = 5" --sweep flat --ps 5,50
bad "--ps malformed" "--ps '10,x'" --sweep flat --ps 10,x
bad "--draws 0" "--draws 0" --draws 0
bad "frame_classes < K" "[nc] frame_classes: frame_classes = 5 is smaller than K = 10" --set nc.frame_classes=5
bad "frame_classes > p" "[nc] frame_classes: frame_classes = 2000 is larger than p = 1000" --set nc.frame_classes=2000
bad "projection_beta = 1" "[nc] projection_beta = 1 is out of range" --set nc.projection_beta=1
bad "projection on a larger frame" "[nc] remedy:" --set nc.remedy=projection --set nc.frame_classes=20
bad "--exact of Theorem 5 with clipping possible" "[nc] G: G = 1: Theorem 5" --exact --set nc.K=2 \
  --set nc.perturbation=per-sample --set nc.remedy=projection --set nc.projection_beta=0.1
bad "--sweep projection needs K = 2" "needs nc.K = 2" --sweep projection --ps 10,20

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
