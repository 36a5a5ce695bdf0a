#!/usr/bin/env bash
# Command-line checks of `hdpsgd ode`: CSV columns and rows, JSON keys, files
# written atomically, warnings, exit statuses.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...

"$bin" ode -o "$work/d.csv" --json "$work/d.json" 2>"$work/err"
check "ode exits 0 on the default model" test $? -eq 0
check "CSV header" grep -qx 't,risk,risk_upper,risk_lower,mu_c,nu_c,eta,sigma2' "$work/d.csv"
check "101 data rows" test "$(grep -cv '^#' "$work/d.csv")" -eq 102
check "metadata names the model" grep -qx '# kind = inverse-time' "$work/d.csv"
check "last row is t = 1" bash -c "tail -n1 '$work/d.csv' | grep -q '^1,'"
for key in final_risk risk_before_final_noise gamma n d rho stable rhs_evals steps solve_seconds; do
  check "JSON has $key" grep -q "\"$key\":" "$work/d.json"
done
check "no NaN anywhere" bash -c "! grep -qi nan '$work/d.csv' '$work/d.json'"
check "JSON parses" python3 -c "import json,sys; d=json.load(open('$work/d.json')); assert d['n']==2000 and d['d']==200 and d['stable'] is True"
check "final_risk equals the last CSV row" python3 - "$work/d.csv" "$work/d.json" <<'PY'
import json, sys
rows = [l for l in open(sys.argv[1]) if not l.startswith('#')][1:]
last = float(rows[-1].split(',')[1])
d = json.load(open(sys.argv[2]))
assert abs(last - d['final_risk']) <= 1e-9 * abs(d['final_risk']), (last, d['final_risk'])
assert abs(d['final_risk'] - d['risk_before_final_noise'] - 2*0.09*0.01*float(rows[-1].split(',')[6])**2/0.25) < 1e-9
PY
check "same as models/default.ini" bash -c "'$bin' ode '$src/models/default.ini' | grep -v '^# ; model:' > '$work/a'; grep -v '^# ; model:' '$work/d.csv' > '$work/b'; cmp -s '$work/a' '$work/b'"
"$bin" ode --set schedule.kind=output --set schedule.eta0=25 --set data.gamma=0.1 >/dev/null 2>"$work/err"
check "stability warning" grep -q 'past the stability limit' "$work/err"
echo old > "$work/keep.csv"
"$bin" ode --set clip.c=-1 -o "$work/keep.csv" 2>/dev/null
check "bad input exits 2" test $? -eq 2
check "old output untouched on error" grep -qx old "$work/keep.csv"
"$bin" ode --bogus >/dev/null 2>&1
check "unknown option exits 2" test $? -eq 2
"$bin" ode --help | grep -q 'Usage: hdpsgd ode'
check "ode --help" test $? -eq 0
"$bin" help ode | grep -q 'risk_upper'
check "help ode" test $? -eq 0
"$bin" --version | grep -q '^hdpsgd [0-9]'
check "--version" test $? -eq 0
"$bin" ode -o /dev/full 2>"$work/err"; rc=$?
check "unwritable output exits 3" test $rc -eq 3
# issue 29: a wide spectrum (ratio 2e8, as real data's) and an unclipped eta~ = 6 < 2/gamma: the
# upper bound's equation overflows; the risk must not (exit 0, the bound's cells empty, a note)
awk 'BEGIN { d = 784; for (j = 0; j < d; j++) { l[j] = j < 700 ? (j + 1) ^ -1.5 : 701 ^ -1.5 * (701 ^ 1.5 / 2e8) ^ ((j - 700) / 83); s += l[j] }
             for (j = 0; j < d; j++) printf "%.17g\n", l[j] * d / s }' > "$work/wide.txt"
"$bin" ode --set data.d=784 --set data.spectrum=file --set "data.spectrum_file=$work/wide.txt" \
  --set clip.c=inf --set privacy.rho=inf --set schedule.kind=constant --set schedule.eta0=6 \
  -o "$work/wide.csv" --json "$work/wide.json" 2>"$work/err"
check "a bound's overflow does not cost the risk (exit 0)" test $? -eq 0
check "the overflowing bound is noted" grep -q "^# ; note: the upper bound's equation overflows" "$work/wide.csv"
check "no NaN or inf in the CSV" bash -c "! grep -v '^#' '$work/wide.csv' | grep -qiE 'nan|inf'"
check "its cells are empty, the risk's are not" python3 - "$work/wide.csv" "$work/wide.json" <<'PY'
import json, math, sys
rows = [l.rstrip('\n').split(',') for l in open(sys.argv[1]) if not l.startswith('#')][1:]
d = json.load(open(sys.argv[2]))
until = d['upper_finite_until']
assert 0 < until < 1 and d['lower_finite_until'] == 1, (until, d['lower_finite_until'])
for r in rows:
    t, risk = float(r[0]), float(r[1])
    assert math.isfinite(risk) and 0 < risk < 1
    assert (r[2] == '') == (t > until + 1e-12), r
    assert r[3] != ''
assert abs(float(rows[-1][1]) - d['final_risk']) <= 1e-9 * d['final_risk']
PY
# the label-noise laws of issue 31: each alone is a valid model; the mixture and the empirical
# law derive tau2 and say so in the header; the empirical tau2 is the sample's variance
for law in laplace uniform mixture; do
  "$bin" ode --set data.noise=$law -o "$work/$law.csv" --json "$work/$law.json" 2>/dev/null
  check "data.noise=$law alone is a valid model" test $? -eq 0
done
check "laplace keeps data.tau2" grep -qx '# tau2 = 0.25' "$work/laplace.csv"
check "the mixture's tau2 is derived, and said so" grep -q '^# ; tau2 is derived: the variance of the mixture' "$work/mixture.csv"
"$bin" ode "$src/models/empirical-noise.ini" -o "$work/e.csv" --json "$work/e.json" 2>/dev/null
check "empirical noise from models/empirical-noise.txt" test $? -eq 0
check "the empirical header says tau2 is derived from 500 values" grep -q '^# ; tau2 is derived: the variance of the 500 centred values' "$work/e.csv"
check "empirical tau2 is the variance of the file's values" python3 - "$src/models/empirical-noise.txt" "$work/e.json" <<'PY'
import json, sys
z = [float(l) for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
m = sum(z) / len(z)
var = sum((x - m) ** 2 for x in z) / len(z)
tau2 = json.load(open(sys.argv[2]))['model']['data']['tau2']
assert len(z) == 500 and abs(tau2 - var) <= 1e-12 * var, (tau2, var)
PY

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
