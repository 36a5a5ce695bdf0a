#!/usr/bin/env bash
# Command-line checks of `hdpsgd sim-index` (the single-index notes; docs/theory.md §6 to §8): CSV
# columns and rows, JSON keys, identical bytes for any --threads, bad input (exit 2 naming the key,
# no output).
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
small=(--set si.d=16 --set si.p=12 --set si.n=500 --set si.test_size=200)

"$bin" sim-index "${small[@]}" --runs 20 --threads 1 --seed 3 -o "$work/a1.csv" --json "$work/a1.json" 2>"$work/err"
check "sim-index exits 0" test $? -eq 0
"$bin" sim-index "${small[@]}" --runs 20 --threads 2 --seed 3 -o "$work/a2.csv" 2>"$work/err"
check "sim-index --threads 2 exits 0" test $? -eq 0
check "sim-index: --threads 1 and 2 give identical CSV bytes" cmp -s "$work/a1.csv" "$work/a2.csv"
check "sim-index CSV header" grep -qx 'mode,lambda_k,pred_mean,mc_mean,mc_mean_se,z_mean,pred_var,mc_var,mc_var_se,z_var,ou_mean,ou_var,gd_mean,gd_var' "$work/a1.csv"
check "sim-index: 12 mode rows" test "$(grep -cv '^#' "$work/a1.csv")" -eq 13
check "sim-index metadata" grep -qx '# p = 12' "$work/a1.csv"
for key in test_risk test_risk_stderr ou_expected_risk alignment_mean clipped_fraction \
           epsilon_stage1 epsilon_stage2 epsilon_total rho_z delta stage2 eta_lambda_max; do
  check "sim-index JSON has $key" grep -q "\"$key\":" "$work/a1.json"
done
"$bin" sim-index "${small[@]}" --set si.stage2=ou --runs 10 -o "$work/ou.csv" --json "$work/ou.json" 2>/dev/null
check "sim-index stage2 = ou exits 0" test $? -eq 0
check "sim-index stage2 = ou in the JSON" grep -q '"stage2": "ou"' "$work/ou.json"

bad() { # bad NAME FRAGMENT ARGS...: exit 2, message names FRAGMENT, no output file
  local name=$1 frag=$2; shift 2
  rm -f "$work/bad.csv"
  "$bin" sim-index "${small[@]}" "$@" -o "$work/bad.csv" 2>"$work/err"
  local rc=$?
  check "bad $name: exit 2" test $rc -eq 2
  check "bad $name: names $frag" grep -q -- "$frag" "$work/err"
  check "bad $name: no output" test ! -e "$work/bad.csv"
}
bad "he1 = 0" "he1" --set si.he1=0
bad "unstable eta_a" "eta_a" --set si.eta_a=1000
bad "negative d" "si.*d\|\[si\] d\|d:" --set si.d=-3
bad "C_a = inf with noise" "C_a" --set si.C_a=inf
bad "stage2 value" "stage2" --set si.stage2=sde
bad "unknown key" "si" --set si.nope=1
bad "runs" "runs" --runs 1
bad "experiment" "experiment" --experiment nope
bad "epsilon and epsilon_total" "si.epsilon (stage 2 alone) or si.epsilon_total" --set si.epsilon=4 --set si.epsilon_total=4
bad "sigma_W with epsilon_total" "sigma_W" --set si.epsilon_total=4 --set si.sigma_W=1e-3
bad "stage1_share = 1" "stage1_share" --set si.epsilon_total=4 --set si.stage1_share=1

# the total budget: the reported total epsilon is the target (1e-6), the split is reported
"$bin" sim-index "${small[@]}" --set si.epsilon_total=3 --set si.stage1_share=0.3 --runs 4 \
  -o "$work/tot.csv" --json "$work/tot.json" 2>"$work/tot.err"
check "epsilon_total exits 0" test $? -eq 0
check "epsilon_total: total epsilon = 3 to 1e-6, split 0.3" python3 -c "
import json, sys; d = json.load(open(sys.argv[1]))
assert abs(d['epsilon_total'] - 3) <= 1e-6, d['epsilon_total']
assert d['epsilon_form'] == 'total' and d['stage1_share'] == 0.3
assert abs(d['rho_z1'] / d['rho_z'] - 0.3) < 1e-9 and abs(d['rho_z'] - d['rho_z_target']) < 1e-12
assert d['epsilon_stage1'] < 3 and d['epsilon_stage2'] < 3" "$work/tot.json"
check "epsilon_total: the split is printed" grep -q "split stage 1" "$work/tot.err"
check "epsilon_total: the budget in the CSV header" grep -q "^# ; budget: si.epsilon_total = 3" "$work/tot.csv"
"$bin" sim-index "${small[@]}" --set si.epsilon_total=3 --runs 3 --experiment eps \
  -o "$work/toteps.csv" --figure "$work/toteps.png" 2>/dev/null
check "epsilon_total --experiment eps exits 0" test $? -eq 0
check "epsilon_total --experiment eps sweeps the total" python3 -c "
import csv, math, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#')))
for r in rows:
    t, e = float(r['epsilon_target']), float(r['epsilon_total'])
    assert (math.isinf(t) and math.isinf(e)) or abs(t - e) <= 1e-6 * max(1, t), (t, e)
assert len(rows) == 9" "$work/toteps.csv"

echo "$pass passed, $fail failed"
test $fail -eq 0
