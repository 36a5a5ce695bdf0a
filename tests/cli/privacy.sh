#!/usr/bin/env bash
# Command-line checks of `hdpsgd privacy` (docs/theory.md §6): JSON keys and values, the
# reference conversion, calibration, the accountant on every schedule kind, full-batch
# DP-GD, and exit status 2 with no output on bad input.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
py() { python3 - "$@"; }

"$bin" privacy --json "$work/d.json" >"$work/out" 2>"$work/err"
check "privacy exits 0 on the default model" test $? -eq 0
for key in rho rho_z epsilon delta epsilon_bs epsilon_cks rho_accounted at_delta; do
  check "JSON has $key" grep -q "\"$key\":" "$work/d.json"
done
check "default values: rho_z = rho^2/2, delta = privacy.delta's 1e-5, accountant = rho" py "$work/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['rho'] == 0.5 and abs(d['rho_z'] - 0.125) < 1e-15 and d['delta'] == 1e-5
assert d['epsilon'] == d['epsilon_cks'] and d['at_delta'] == []
assert abs(d['rho_accounted'] - 0.5) <= 1e-12 * 0.5
assert d['epsilon_cks'] < d['epsilon_bs']
PY
check "says CKS is the one to use" grep -q 'Canonne-Kamath-Steinke (tighter: the one to use)' "$work/out"

"$bin" privacy --set privacy.rho=0.25 --set privacy.delta=1e-3 --json "$work/ref.json" >/dev/null 2>&1
check "reference: rho_z = 0.03125, delta = 1e-3 gives CKS 0.6880024554878086" py "$work/ref.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert abs(d['rho_z'] - 0.03125) < 1e-15
assert abs(d['epsilon_cks'] - 0.6880024554878086) < 1e-9, d['epsilon_cks']
bs = 0.03125 + 2 * math.sqrt(0.03125 * math.log(1e3))
assert abs(d['epsilon_bs'] - bs) < 1e-12, d['epsilon_bs']
PY

"$bin" privacy --epsilon 0.6880024554878086 --set privacy.delta=1e-3 --json "$work/cal.json" >"$work/cal.out" 2>&1
check "calibration exits 0" test $? -eq 0
check "calibration gives rho = 0.25 back" py "$work/cal.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['rho_for_target'] - 0.25) < 1e-8, d['rho_for_target']
assert abs(d['rho_z_for_target'] - 0.03125) < 1e-9
PY
set_text=$(grep -o -- '--set privacy.rho=[0-9.e+-]*' "$work/cal.out")
check "prints the --set text with 17 significant digits" \
  bash -c "[[ '$set_text' =~ ^--set\ privacy.rho=0\.[0-9]{17}$ ]]"
"$bin" privacy ${set_text} --set privacy.delta=1e-3 --json "$work/back.json" >/dev/null 2>&1
check "the printed rho meets the target epsilon" py "$work/back.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['epsilon_cks'] - 0.6880024554878086) < 1e-9, d['epsilon_cks']
PY

"$bin" privacy --set privacy.rho=0.25 --delta 1e-6 --delta 1e-4,1e-3 --json "$work/list.json" \
  >"$work/list.out" 2>"$work/list.err"
check "--delta list: the model's delta first, then each asked for" py "$work/list.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['delta'] == 1e-5 and d['epsilon'] == d['epsilon_cks']
assert [a['delta'] for a in d['at_delta']] == [1e-6, 1e-4, 1e-3], d['at_delta']
assert abs(d['at_delta'][2]['epsilon'] - 0.6880024554878086) < 1e-9
e = [a['epsilon'] for a in d['at_delta']]
assert e[0] > d['epsilon'] > e[1] > e[2]
PY
check "--delta list: the table names each delta" grep -q 'at delta = 0.0001 (--delta)' "$work/list.out"
check "no warning at delta = 1e-5 < 1/n" test ! -s "$work/list.err"
"$bin" privacy --set privacy.delta=1e-3 >/dev/null 2>"$work/w.err"
check "warning when delta >= 1/n" grep -q 'warning: privacy.delta = 0.001 is not below 1/n' "$work/w.err"

printf '0 3\n0.3 3\n0.6 1\n1 0.2\n' > "$work/tab.txt"
for kind in output linear-noise optimal table; do
  "$bin" privacy --set schedule.kind=$kind --set schedule.file="$work/tab.txt" --set privacy.rho=0.7 \
    --json "$work/k.json" >/dev/null 2>&1
  rc=$?
  check "accountant = rho on the $kind schedule (exit $rc)" py "$work/k.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['rho_accounted'] - 0.7) <= 1e-12 * 0.7 and d['accountant_equals_rho'] is True
PY
done

"$bin" privacy --set privacy.rho=inf --json "$work/inf.json" >/dev/null 2>&1
check "rho = inf: exit 0 and epsilon null" py "$work/inf.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['rho'] is None and d['epsilon_cks'] is None and d['epsilon_bs'] is None
PY

"$bin" privacy --dpgd --eta 0.01 --steps 1000 --sigma 5 --json "$work/s.json" >/dev/null 2>&1
check "--dpgd --sigma exits 0" test $? -eq 0
check "--dpgd --sigma: rho_z = eta T/(2 sigma^2), Bombari-Mondelli's epsilon" py "$work/s.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
for k in ['eta', 'steps', 'sigma', 'rho_z', 'epsilon_bs', 'epsilon_cks', 'epsilon_simple']:
    assert k in d, k
assert abs(d['rho_z'] - 0.01 * 1000 / 50) < 1e-15
e3 = math.sqrt(10) * math.sqrt(8 * math.log(1e5)) / 5
assert abs(d['epsilon_simple'] - e3) < 1e-12 and d['epsilon_cks'] < d['epsilon_bs']
assert d['delta'] == 1e-5 and d['epsilon'] == d['epsilon_cks']
PY
"$bin" privacy --dpgd --eta 0.01 --steps 1000 --epsilon 4 --json "$work/e.json" >/dev/null 2>&1
check "--dpgd --epsilon: Bombari-Mondelli's sigma and the smaller zCDP sigma" py "$work/e.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
s3 = math.sqrt(10) * math.sqrt(8 * math.log(1e5)) / 4
assert abs(d['sigma_simple'] - s3) < 1e-12
assert d['sigma_zcdp'] < s3 and abs(d['sigma'] - d['sigma_zcdp']) < 1e-15
assert abs(d['rho_z'] - 10 / (2 * d['sigma_zcdp'] ** 2)) < 1e-12
assert abs(d['epsilon_cks'] - 4) < 1e-9
PY
"$bin" privacy --dpgd --eta 1 --steps 100 --epsilon 50 --delta 0.01 >"$work/o.out" 2>&1
check "--dpgd: epsilon outside Bombari-Mondelli's range is reported" grep -q "Bombari-Mondelli's bound does not apply" "$work/o.out"

bad() { # bad NAME ARGS...: exit 2, a message, no JSON file
  local name=$1; shift
  rm -f "$work/bad.json"
  "$bin" privacy "$@" --json "$work/bad.json" >/dev/null 2>"$work/err"
  local rc=$?
  check "$name: exit 2 ($(head -n1 "$work/err" | cut -c1-90))" test $rc -eq 2
  check "$name: no output" bash -c "! ls '$work' | grep -q 'bad.json'"
}
# The accountant's precondition (docs/theory.md §6.1): every step non-expansive, eta_k ||x||^2 <= 2.
for key in nonexpansive_p_step nonexpansive_expected_violations nonexpansive_negligible feature_norm \
           feature_clip_fraction; do
  check "JSON has $key" grep -q "\"$key\":" "$work/d.json"
done
check "default model: ~1e-18 per step, negligible, no warning" py "$work/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 1e-19 < d['nonexpansive_p_step'] < 1e-17 and d['nonexpansive_negligible'] is True
assert d['nonexpansive_threshold'] == 800 and d['feature_norm'] == 0
PY
check "default model: the precondition is stated" grep -q 'eta_k ||x_k||^2 <= 2' "$work/out"
check "default model: no warning" bash -c "! grep -q WARNING '$work/out'"
near=(--set data.d=800 --set data.gamma=0.5 --set data.spectrum=isotropic --set clip.c=inf
      --set privacy.rho=inf --set schedule.kind=constant --set schedule.eta0=3.5)
"$bin" privacy "${near[@]}" --json "$work/near.json" >"$work/near.out" 2>&1
check "near-stability: 0.2999 % per step (chi2_800 > 914.29), 4.80 per run, a warning" py "$work/near.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['nonexpansive_p_step'] - 0.0029990) < 1e-6, d['nonexpansive_p_step']
assert abs(d['nonexpansive_expected_violations'] - 1600 * d['nonexpansive_p_step']) < 1e-9
assert d['nonexpansive_negligible'] is False and d['nonexpansive_expected_exact'] is True
PY
check "near-stability at rho = inf: a note, no warning" grep -q 'claims no privacy anyway' "$work/near.out"
priv=(--set data.d=800 --set data.gamma=0.5 --set data.spectrum=isotropic --set clip.c=1
      --set privacy.rho=1 --set schedule.kind=output --set schedule.eta0=3.5)
"$bin" privacy "${priv[@]}" --json "$work/priv.json" >"$work/priv.out" 2>&1
check "near-stability, private (rho = 1, output schedule): the same 0.2999 %, a WARNING" \
  grep -q 'WARNING: the expected number of violating steps, 4.8 per run' "$work/priv.out"
"$bin" privacy "${priv[@]}" --set clip.feature_norm=auto >"$work/priv2.out" 2>&1
check "near-stability, private, feature_norm = auto: no warning" bash -c "! grep -q WARNING '$work/priv2.out'"
"$bin" privacy "${near[@]}" --set clip.feature_norm=auto --json "$work/auto.json" >"$work/auto.out" 2>&1
check "feature_norm = auto: no violation left, 0.3 % of rows clipped, no warning" py "$work/auto.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['nonexpansive_p_step'] == 0 and d['nonexpansive_expected_violations'] == 0
assert d['nonexpansive_log10_p_step'] is None and d['nonexpansive_negligible'] is True
assert abs(d['feature_norm'] ** 2 - 3200 / 3.5) < 1e-9 and abs(d['feature_clip_fraction'] - 0.002999) < 1e-6
assert 0 < d['feature_clip_moment'] < 1e-4 and d['model']['clip']['feature_norm'] == 'auto'
PY
check "feature_norm = auto: no warning" bash -c "! grep -q WARNING '$work/auto.out'"
"$bin" sim "${near[@]}" --runs 20 --seed 2 -o "$work/s.csv" --json "$work/s.json" 2>"$work/s.err"
check "sim counts violating steps within 4 standard errors of 0.2999 %, with a warning" py "$work/s.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
p, steps = 0.0029990, 20 * 1600
assert d['nonexpansive_violations'] == d['nonexpansive_violations_per_run'] * 20
assert abs(d['nonexpansive_violation_fraction'] - p) < 4 * math.sqrt(p * (1 - p) / steps), d
PY
check "sim: the warning names the precondition" grep -q 'not non-expansive' "$work/s.err"
"$bin" sim "${near[@]}" --set clip.feature_norm=auto --runs 20 --seed 2 -o "$work/s2.csv" --json "$work/s2.json" 2>"$work/s2.err"
check "sim with feature_norm = auto: no violation, the same rows clipped" py "$work/s.json" "$work/s2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b['nonexpansive_violations'] == 0 and b['feature_clipped'] == a['nonexpansive_violations'] > 0
PY
check "sim with feature_norm = auto: no warning" bash -c "! grep -q 'non-expansive' '$work/s2.err'"
"$bin" ode "${near[@]}" --set clip.feature_norm=auto -o /dev/null 2>"$work/o.err"
check "ode with feature_norm = auto near stability: a note that the ODE leaves 0.3 % of rows out" \
  grep -q 'clips a fraction 0.003 of the rows' "$work/o.err"
"$bin" ode --set clip.feature_norm=auto -o /dev/null 2>"$work/o2.err"
check "ode with feature_norm = auto on the default model: no note (1e-18 of the rows)" \
  bash -c "! grep -q 'clips a fraction' '$work/o2.err'"
"$bin" validate --set clip.feature_norm=auto --runs 20 --seed 3 --json "$work/v.json" >/dev/null 2>&1
check "validate passes on the default model with feature_norm = auto, no row clipped" py "$work/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['pass'] is True and d['feature_clipped'] == 0 and d['nonexpansive_violations'] == 0
assert abs(d['feature_norm'] - 800 ** 0.5) < 1e-12
PY
bad "feature_norm < 0" --set clip.feature_norm=-2
bad "feature_norm a word" --set clip.feature_norm=big

bad "epsilon 0" --epsilon 0
bad "epsilon < 0" --epsilon -1
bad "delta 0" --delta 0
bad "delta 1" --delta 1
bad "missing value" --delta
bad "delta list with a word" --delta 1e-6,big
bad "delta list with an empty item" --delta 1e-6,
bad "dpgd with two deltas" --dpgd --eta 0.1 --steps 10 --sigma 1 --delta 1e-6,1e-5
bad "dpgd without eta" --dpgd --steps 10 --sigma 1
bad "dpgd without steps" --dpgd --eta 0.1 --sigma 1
bad "dpgd without sigma or epsilon" --dpgd --eta 0.1 --steps 10
bad "dpgd with both" --dpgd --eta 0.1 --steps 10 --sigma 1 --epsilon 1
bad "eta without dpgd" --eta 0.1
bad "dpgd eta <= 0" --dpgd --eta 0 --steps 10 --sigma 1
bad "dpgd sigma <= 0" --dpgd --eta 1 --steps 10 --sigma -2
bad "bad model key" --set privacy.rho=-1
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
