#!/usr/bin/env bash
# Command-line checks of `hdpsgd sim` and `hdpsgd sde`: CSV columns and rows,
# JSON keys, identical bytes for any --threads, divergence (exit 4, never NaN),
# option validation (exit 2, no output file), help.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
small=(--set data.d=60 --set data.gamma=0.2 --set ode.points=21)

for cmd in sim sde; do
  "$bin" $cmd "${small[@]}" --runs 12 --threads 1 --seed 7 -o "$work/$cmd-1.csv" --json "$work/$cmd-1.json" 2>"$work/err"
  check "$cmd exits 0" test $? -eq 0
  "$bin" $cmd "${small[@]}" --runs 12 --threads 2 --seed 7 -o "$work/$cmd-2.csv" --json "$work/$cmd-2.json" 2>"$work/err"
  check "$cmd --threads 2 exits 0" test $? -eq 0
  check "$cmd: --threads 1 and 2 give identical CSV bytes" cmp -s "$work/$cmd-1.csv" "$work/$cmd-2.csv"
  check "$cmd CSV header" grep -qx 't,mean,stderr,q10,q50,q90,clipped_fraction' "$work/$cmd-1.csv"
  check "$cmd 21 data rows" test "$(grep -cv '^#' "$work/$cmd-1.csv")" -eq 22
  check "$cmd metadata: model, runs, seed, diverged" bash -c "grep -qx '# kind = inverse-time' '$work/$cmd-1.csv' && grep -q '^# ; runs = 12$' '$work/$cmd-1.csv' && grep -qx '# seed = 7' '$work/$cmd-1.csv' && grep -q '^# ; diverged = 0' '$work/$cmd-1.csv'"
  for key in final_risk_mean final_risk_stderr runs rho_accounted diverged_runs seconds threads seed; do
    check "$cmd JSON has $key" grep -q "\"$key\":" "$work/$cmd-1.json"
  done
  check "$cmd JSON values" python3 - "$work/$cmd-1.csv" "$work/$cmd-2.json" <<'PY'
import json, sys
rows = [l.strip().split(',') for l in open(sys.argv[1]) if not l.startswith('#')][1:]
d = json.load(open(sys.argv[2]))
assert d['runs'] == 12 and d['diverged_runs'] == 0 and d['threads'] == 2 and d['seed'] == 7, d
assert abs(d['rho_accounted'] - 0.5) < 1e-12, d['rho_accounted']
last = rows[-1]
assert float(last[0]) == 1.0
assert abs(float(last[1]) - d['final_risk_mean']) <= 1e-9 * abs(d['final_risk_mean'])
for r in rows:
    v = [float(x) for x in r]
    assert v[3] <= v[4] <= v[5] and 0 <= v[6] <= 1, r
PY
  check "$cmd: no NaN anywhere" bash -c "! grep -qi nan '$work/$cmd-1.csv' '$work/$cmd-1.json'"
done
check "sim and sde have the same grid" bash -c "diff <(grep -v '^#' '$work/sim-1.csv' | cut -d, -f1) <(grep -v '^#' '$work/sde-1.csv' | cut -d, -f1)"
"$bin" sim "${small[@]}" --runs 12 --seed 8 > "$work/seed8.csv" 2>/dev/null
check "another seed gives other numbers" bash -c "! cmp -s <(grep -v '^#' '$work/seed8.csv') <(grep -v '^#' '$work/sim-1.csv')"
"$bin" sim "${small[@]}" --set sim.runs=12 --set sim.seed=7 > "$work/set.csv" 2>/dev/null
check "--set sim.runs/sim.seed equal --runs/--seed" cmp -s "$work/set.csv" "$work/sim-1.csv"

# divergence: c = inf, sup eta~ = 60 >> 2/gamma = 20
div=(--set schedule.kind=constant --set privacy.rho=inf --set clip.c=inf --set schedule.eta0=60 --set data.gamma=0.1 --set data.d=50)
for cmd in sim sde; do
  "$bin" $cmd "${div[@]}" --runs 4 -o "$work/div.csv" --json "$work/div.json" >"$work/out" 2>"$work/err"
  rc=$?
  check "$cmd: all runs diverged exits 4" test $rc -eq 4
  check "$cmd: the message names divergence" grep -q 'diverged' "$work/err"
  check "$cmd: the stability warning" grep -q 'past the stability limit' "$work/err"
  check "$cmd: no output file after divergence" test ! -e "$work/div.csv" -a ! -e "$work/div.json"
  check "$cmd: no NaN printed" bash -c "! grep -qi nan '$work/out' '$work/err'"
done
# some runs diverge: a warning, the JSON count, finite statistics
part=(--set data.spectrum=isotropic --set schedule.kind=constant --set privacy.rho=inf --set clip.c=inf --set schedule.eta0=4 --set data.gamma=0.5 --set data.d=50 --set data.noise=none --set sim.divergence_factor=1.5)
"$bin" sim "${part[@]}" --runs 20 -o "$work/part.csv" --json "$work/part.json" 2>"$work/err"
check "some runs diverged exits 0" test $? -eq 0
check "the summary says how many diverged" grep -q 'of 20 runs diverged' "$work/err"
check "JSON diverged_runs > 0" python3 -c "import json; d=json.load(open('$work/part.json')); assert 0 < d['diverged_runs'] < 20"
check "no NaN with diverged runs" bash -c "! grep -qi nan '$work/part.csv' '$work/part.json'"

# option validation: exit 2, clear message, no output file
echo old > "$work/keep.csv"
"$bin" sim --runs 0 -o "$work/keep.csv" 2>"$work/err"
check "--runs 0 exits 2" test $? -eq 2
check "--runs 0 message" grep -q -- '--runs 0' "$work/err"
"$bin" sde --threads -1 -o "$work/keep.csv" 2>"$work/err"
check "--threads -1 exits 2" test $? -eq 2
check "--threads -1 message" grep -q -- '--threads -1' "$work/err"
"$bin" sim --seed -3 -o "$work/keep.csv" 2>"$work/err"
check "--seed -3 exits 2" test $? -eq 2
"$bin" sde --step 2 -o "$work/keep.csv" 2>"$work/err"
check "--step 2 exits 2" test $? -eq 2
"$bin" sim --set sim.runs=0 -o "$work/keep.csv" 2>"$work/err"
check "--set sim.runs=0 exits 2" test $? -eq 2
"$bin" sim --set clip.c=-1 -o "$work/keep.csv" 2>/dev/null
check "bad model exits 2" test $? -eq 2
check "old output untouched on errors" grep -qx old "$work/keep.csv"
"$bin" sim --bogus >/dev/null 2>&1
check "unknown option exits 2" test $? -eq 2
"$bin" sde "${small[@]}" --runs 2 --step 0.01 -o "$work/h.csv" 2>/dev/null
check "sde --step 0.01: 100 steps" grep -q 'steps = 100, h = 0.01' "$work/h.csv"
"$bin" sim "${small[@]}" --runs 2 -o /dev/full 2>/dev/null
check "unwritable output exits 3" test $? -eq 3
"$bin" sim --help | grep -q 'Usage: hdpsgd sim'
check "sim --help" test $? -eq 0
"$bin" help sde | grep -q -- '--step'
check "help sde" test $? -eq 0
"$bin" --help | grep -q '^  sde'
check "command list has sde" test $? -eq 0
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
