#!/usr/bin/env bash
# Command-line checks of `hdpsgd rf` and `hdpsgd rf-experiment` (docs/theory.md §6, §7): CSV
# columns and rows, JSON keys and values, identical bytes for any --threads, the zCDP
# note, bad input (exit 2, the key named, no output file), unwritable output (exit 3),
# and every experiment on a tiny model (CSV, figure, identical bytes for any --threads).
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
small=(--set rf.d=10 --set rf.n=80 --set rf.p=200 --set rf.test_size=60 --set rf.records=10 --set dpgd.CT=3)

"$bin" rf "${small[@]}" --runs 4 --threads 1 --seed 5 -o "$work/a1.csv" --json "$work/a1.json" 2>"$work/err"
check "rf exits 0" test $? -eq 0
"$bin" rf "${small[@]}" --runs 4 --threads 2 --seed 5 -o "$work/a2.csv" --json "$work/a2.json" 2>"$work/err"
check "rf --threads 2 exits 0" test $? -eq 0
check "rf: --threads 1 and 2 give identical CSV bytes" cmp -s "$work/a1.csv" "$work/a2.csv"
check "rf CSV header" grep -qx 'step,tau,dpgd_test,dpgd_test_se,dpgd_train,dpgd_train_se,ou_test,ou_train,em_test,em_test_se,em_expected_test,ex_test,ex_test_se,clipped_fraction,minnorm_test,gf_test' "$work/a1.csv"
check "rf: 11 data rows (step 0 and 10 records)" test "$(grep -cv '^#' "$work/a1.csv")" -eq 12
check "rf metadata: model keys, privacy, runs, seed" bash -c "grep -qx '# p = 200' '$work/a1.csv' && grep -q '^# ; privacy: epsilon = 4,' '$work/a1.csv' && grep -q '^# ; runs = 4$' '$work/a1.csv' && grep -q '^# ; seed = 5$' '$work/a1.csv'"
for key in dpgd_test ou_exact_test ou_em_test ou_exact_step_test minnorm_test gradient_flow_test \
           max_clipped_fraction strong_error_mean strong_error_max sigma epsilon delta T eta C_clip p n d; do
  check "rf JSON has $key" grep -q "\"$key\":" "$work/a1.json"
done
check "rf JSON values" python3 - "$work/a1.csv" "$work/a2.json" <<'PY'
import json, math, sys
rows = [l.strip().split(',') for l in open(sys.argv[1]) if not l.startswith('#')]
head, rows = rows[0], [[float(x) for x in r] for r in rows[1:]]
col = {h: i for i, h in enumerate(head)}
d = json.load(open(sys.argv[2]))
assert d['runs'] == 4 and d['threads'] == 2 and d['seed'] == 5 and d['p'] == 200, d
assert d['n'] == 80 and d['d'] == 10 and d['sigma_route'] == 'simple'
# T = CT d / (eta p) with eta = 1/p: 3 d = 30; C_clip = 0.5 sqrt(p); delta = 1/n
assert d['T'] == 30 and abs(d['eta'] - 1 / 200) < 1e-15
assert abs(d['C_clip'] - 0.5 * math.sqrt(200)) < 1e-12 and abs(d['delta'] - 1 / 80) < 1e-15
# Bombari-Mondelli's sigma = sqrt(eta T) sqrt(8 ln(1/delta)) / epsilon
assert abs(d['sigma'] - math.sqrt(30 / 200) * math.sqrt(8 * math.log(80)) / 4) < 1e-12
last = rows[-1]
assert last[col['step']] == 30 and abs(last[col['tau']] - 0.15) < 1e-12
assert abs(last[col['dpgd_test']] - d['dpgd_test']) <= 1e-9 * d['dpgd_test']
assert abs(last[col['ou_test']] - d['ou_exact_test']) <= 1e-9 * d['ou_exact_test']
first = rows[0]
assert first[col['step']] == 0 and first[col['dpgd_test']] == first[col['ou_test']] == first[col['gf_test']]
for r in rows:
    assert 0 <= r[col['clipped_fraction']] <= 1
    assert r[col['minnorm_test']] == d['minnorm_test'] or abs(r[col['minnorm_test']] / d['minnorm_test'] - 1) < 1e-9
assert 0 <= d['max_clipped_fraction'] <= 1 and d['strong_error_max'] >= d['strong_error_mean'] >= 0
PY
check "rf: no NaN anywhere" bash -c "! grep -qi nan '$work/a1.csv' '$work/a1.json'"
"$bin" rf "${small[@]}" --runs 4 --seed 6 > "$work/s6.csv" 2>/dev/null
check "another seed gives other numbers" bash -c "! cmp -s <(grep -v '^#' '$work/s6.csv') <(grep -v '^#' '$work/a1.csv')"
"$bin" rf "${small[@]}" --set rf.runs=4 --set sim.seed=5 --threads 1 > "$work/set.csv" 2>/dev/null
check "--set rf.runs/sim.seed equal --runs/--seed" bash -c "diff <(grep -v '^# runs = \|^# seed = ' '$work/set.csv') <(grep -v '^# runs = \|^# seed = ' '$work/a1.csv') >/dev/null"

# no clipping, no noise: DP-GD, the EM path, the exact step all reduce to gradient descent/flow
"$bin" rf "${small[@]}" --set dpgd.C=inf --set dpgd.epsilon=inf --runs 2 --json "$work/gd.json" >/dev/null 2>&1
check "rf without clipping and noise exits 0" test $? -eq 0
check "no noise: DP-GD = EM = its closed form, sigma 0, nothing clipped" python3 - "$work/gd.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['sigma'] == 0 and d['sigma_route'] == 'none' and d['epsilon'] is None, d
assert d['max_clipped_fraction'] == 0 and d['dpgd_test_stderr'] == 0
assert abs(d['dpgd_test'] - d['ou_em_expected_test']) < 1e-10 * d['dpgd_test']
assert abs(d['dpgd_test'] - d['ou_em_test']) < 1e-10 * d['dpgd_test']
assert abs(d['ou_exact_test'] - d['gradient_flow_test']) < 1e-12
PY

# epsilon outside Bombari-Mondelli's range: a note and the zCDP route
"$bin" rf "${small[@]}" --set dpgd.epsilon=100 --runs 2 --json "$work/z.json" -o "$work/z.csv" 2>"$work/err"
check "large epsilon exits 0" test $? -eq 0
check "large epsilon: the note names the zCDP route" grep -q 'note: epsilon = 100 lies outside (0, 8 ln(1/delta))' "$work/err"
check "large epsilon: JSON sigma_route zcdp" grep -q '"sigma_route": "zcdp"' "$work/z.json"

# the theorem's regime: C_clip = sqrt(p) log^2 n, T = d log^2 n/(eta p); without noise nothing is
# clipped and the early-stopping term equals its closed form
"$bin" rf --set rf.d=10 --set rf.n=80 --set rf.p=200 --set rf.test_size=60 --set dpgd.regime=theorem \
  --set dpgd.epsilon=inf --runs 2 -o "$work/th.csv" --json "$work/th.json" 2>/dev/null
check "regime = theorem exits 0" test $? -eq 0
check "regime = theorem: C_clip, T, no clipping, the terms" python3 - "$work/th.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
L2 = math.log(80) ** 2
assert abs(d['C_clip'] - math.sqrt(200) * L2) <= 1e-12 * d['C_clip'], d['C_clip']
assert d['T'] == round(10 * L2 / (d['eta'] * 200)), d['T']
assert d['max_clipped_fraction'] == 0
assert d['noise_term_exact'] == 0 and d['noise_term'] < 1e-20
assert abs(d['early_stopping_term'] - d['early_stopping_term_exact']) <= 1e-9 * d['early_stopping_term_exact']
PY

# bad input: exit 2, the key named, no output file, an old file untouched
echo old > "$work/keep.csv"
bad() { # bad NAME FRAGMENT ARGS...
  local name=$1 frag=$2; shift 2
  "$bin" rf "$@" -o "$work/keep.csv" --json "$work/bad.json" >"$work/out" 2>"$work/err"
  local rc=$?
  check "$name exits 2" test $rc -eq 2
  check "$name: message has '$frag'" grep -qF -- "$frag" "$work/err"
  check "$name: no output" bash -c "grep -qx old '$work/keep.csv' && test ! -e '$work/bad.json' && ! ls '$work' | grep -q tmp"
}
bad "T and CT" "[dpgd] T: give T or CT, not both" "${small[@]}" --set dpgd.T=5
bad "C and clip" "[dpgd] clip: give C" "${small[@]}" --set dpgd.C=1 --set dpgd.clip=4
bad "sigma and epsilon" "[dpgd] sigma:" "${small[@]}" --set dpgd.sigma=1 --set dpgd.epsilon=2
bad "C = inf with noise" "[dpgd] C: C_clip = inf" "${small[@]}" --set dpgd.C=inf
bad "CT too small" "[dpgd] CT: CT = 0.001 gives T" "${small[@]}" --set dpgd.CT=0.001
bad "p = 0" "[rf] p = 0 is out of range" --set rf.p=0
bad "unknown activation" "expected one of tanh | relu | linear" --set rf.activation=sigmoid
bad "delta = 1" "[dpgd] delta = 1 is out of range" --set dpgd.delta=1
bad "--runs 0" "--runs 0" "${small[@]}" --runs 0
bad "unknown key" "did you mean [dpgd] epsilon?" --set dpgd.epsilom=3
bad "regime = theorem with C" "[dpgd] C: regime = theorem sets C_clip" --set dpgd.regime=theorem --set dpgd.C=1
bad "regime = theorem with T" "[dpgd] T: regime = theorem sets" --set dpgd.regime=theorem --set dpgd.T=10
bad "unknown regime" "expected one of experiments | theorem" --set dpgd.regime=asymptotic
"$bin" rf "${small[@]}" --runs 1 -o /dev/full 2>/dev/null
check "unwritable output exits 3" test $? -eq 3
"$bin" help rf | grep -q 'em_expected_test,ex_test,ex_test_se,clipped_fraction'
check "help rf documents the columns" test $? -eq 0
"$bin" --help | grep -q '^  rf-experiment'
check "command list has rf-experiment" test $? -eq 0

# the experiments on a tiny model (the grids are fixed; n = 40 keeps every run short)
tiny=(--set rf.d=4 --set rf.n=40 --set rf.p=80 --set rf.test_size=30)
if command -v gnuplot >/dev/null || [[ -n ${HDPSGD_GNUPLOT:-} ]]; then
  for x in P1 P2 P3 P4; do
    lx=$(echo "$x" | tr P p)
    mkdir -p "$work/$x-1" "$work/$x-2"
    "$bin" rf-experiment $x "$src/models/rf-$lx.ini" "${tiny[@]}" --threads 1 -o "$work/$x-1" 2>"$work/err"
    check "rf-experiment $x exits 0" test $? -eq 0
    check "rf-experiment $x wrote rf-$lx.csv and rf-$lx.png" test -s "$work/$x-1/rf-$lx.csv" -a -s "$work/$x-1/rf-$lx.png"
    "$bin" rf-experiment $x "$src/models/rf-$lx.ini" "${tiny[@]}" --threads 2 -o "$work/$x-2" 2>/dev/null
    check "rf-experiment $x: --threads 1 and 2 give identical CSV bytes" cmp -s "$work/$x-1/rf-$lx.csv" "$work/$x-2/rf-$lx.csv"
    check "rf-experiment $x: no NaN" bash -c "! grep -qi nan '$work/$x-1/rf-$lx.csv'"
  done
  check "P1 rows: one per p" test "$(grep -cv '^#' "$work/P1-1/rf-p1.csv")" -eq 10
  check "P4 rows: 8 x 8" test "$(grep -cv '^#' "$work/P4-1/rf-p4.csv")" -eq 65
  check "P2 and P3 hold the same runs" cmp -s <(grep -v '^#' "$work/P2-1/rf-p2.csv") <(grep -v '^#' "$work/P3-1/rf-p3.csv")
  # selection on the validation set (default) and, for comparison, on the test set
  mkdir -p "$work/sv" "$work/st"
  "$bin" rf-experiment P1 "$src/models/rf-p1.ini" "${tiny[@]}" -o "$work/sv" --json "$work/sv/p1.json" 2>/dev/null
  check "rf-experiment P1 --json exits 0" test $? -eq 0
  "$bin" rf-experiment P1 "$src/models/rf-p1.ini" "${tiny[@]}" --select-on test -o "$work/st" --json "$work/st/p1.json" 2>/dev/null
  check "rf-experiment P1 --select-on test exits 0" test $? -eq 0
  check "rf-experiment P1: selected on validation, its test loss reported; --select-on test the oracle" python3 -c "
import csv, json, sys
v, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert v['selected_on'] == 'validation' and t['selected_on'] == 'test', (v['selected_on'], t['selected_on'])
assert v['val_size'] == 6 and v['test_size'] == 30     # 20 % of the test size by default
rows = list(csv.DictReader(l for l in open(sys.argv[3]) if not l.startswith('#')))
assert len(rows) == v['count']
close = lambda a, b: abs(a - b) <= 1e-9 * abs(b)          # the CSV prints 10 digits
for i, r in enumerate(rows):
    vals = {k[4:]: float(x) for k, x in r.items() if k.startswith('val_C')}
    tests = {k[5:]: float(x) for k, x in r.items() if k.startswith('test_C')}
    best = min(vals, key=vals.get)                       # the lowest validation loss ...
    assert float(r['dpgd_test']) == tests[best] and close(tests[best], v['selected_test_%d' % i])
    assert float(r['dpgd_val']) == vals[best] and close(vals[best], v['selected_val_%d' % i])
    assert t['selected_test_%d' % i] == v['oracle_test_%d' % i]
    assert close(min(tests.values()), t['selected_test_%d' % i])
    assert v['selected_test_%d' % i] >= t['selected_test_%d' % i]
" "$work/sv/p1.json" "$work/st/p1.json" "$work/sv/rf-p1.csv"
  check "rf-experiment: the CSV header says what selected" grep -q '^# ; selected_on = validation' "$work/sv/rf-p1.csv"
else
  echo "skip the experiments: gnuplot not installed"
fi
"$bin" rf-experiment P5 -o "$work" 2>"$work/err"
check "rf-experiment P5 exits 2" test $? -eq 2
"$bin" rf-experiment P1 -o "$work/nonexistent" 2>"$work/err"
check "rf-experiment into a missing directory exits 2" test $? -eq 2
"$bin" rf-experiment P4 "${tiny[@]}" --set dpgd.T=5 --set dpgd.CT=2 -o "$work" 2>"$work/err"
check "rf-experiment with inconsistent keys exits 2" test $? -eq 2
check "rf-experiment: no CSV after bad input" test ! -e "$work/rf-p4.csv"
"$bin" rf-experiment P1 "${tiny[@]}" --select-on train -o "$work" 2>"$work/err"
check "rf-experiment --select-on train exits 2" test $? -eq 2
check "rf-experiment --select-on train: the message names the option" grep -q -- '--select-on' "$work/err"
"$bin" rf-experiment P1 "${tiny[@]}" --set rf.val_size=-1 -o "$work" 2>"$work/err"
check "rf-experiment rf.val_size = -1 exits 2 naming the key" grep -q 'val_size' "$work/err"
"$bin" rf-experiment P1 "${tiny[@]}" -o "$work/nope" 2>"$work/err"
check "rf-experiment -o a missing folder: exit 2" test $? -eq 2
check "rf-experiment -o a missing folder: says so (not 'not a directory')" \
  grep -q 'nope: no such folder (create the folder first' "$work/err"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
