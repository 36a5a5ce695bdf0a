#!/usr/bin/env bash
# Command-line checks of `hdpsgd validate` and `hdpsgd plot`: verdicts and exit
# statuses, JSON keys, figure and data files, gnuplot missing, bad input.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
quick=(--set data.d=100 --set data.gamma=0.25 --runs 40)

"$bin" validate "${quick[@]}" --figure "$work/f.png" --json "$work/f.json" >"$work/out" 2>"$work/err"
check "validate passes on the default model (exit 0)" test $? -eq 0
check "table has both sides" grep -q 'Monte Carlo (40 runs)' "$work/out"
check "table has the SDE" grep -q 'SDE (40 runs)' "$work/out"
check "privacy level printed" grep -q 'epsilon = .* at delta = 1e-05' "$work/out"
check "verdict printed" grep -q '^verdict: PASS' "$work/out"
check "each side's verdict in words" grep -q '^  Monte Carlo: agrees within 5 % (largest gap .*); not significant (max z = ' "$work/out"
check "the SDE's verdict in words" grep -q '^  SDE: agrees' "$work/out"
check "JSON: within and significant follow the rule's numbers" python3 -c "
import json; d=json.load(open('$work/f.json'))
for s, p in (('sim_', ''), ('sde_', 'sde_')):
    assert d[s + 'within_rel_tol'] is (d[p + 'max_rel_dev'] <= d['rel_tol']), s
    assert d[s + 'significant'] is (d[p + 'max_z'] > d['z_tol']), s"
# a pass whose gap is statistically significant says so (the verdict keeps its rule)
"$bin" validate "${quick[@]}" --no-sde --set validate.z_tol=0.01 --json "$work/s.json" >"$work/out" 2>"$work/err"
check "a significant gap within 5 %: still a pass (exit 0)" test $? -eq 0
check "a significant gap within 5 % is named" grep -q '^  Monte Carlo: agrees within 5 %; the .* % gap at t = .* is significant, z = ' "$work/out"
check "JSON: sim_significant true, sim_within_rel_tol true, pass true" python3 -c "
import json; d=json.load(open('$work/s.json'))
assert d['sim_significant'] is True and d['sim_within_rel_tol'] is True and d['pass'] is True"
for f in f.png f.ode.csv f.sim.csv f.sde.csv f.json; do check "wrote $f" test -s "$work/$f"; done
check "PNG signature" bash -c "head -c 8 '$work/f.png' | od -An -c | grep -q 'P   N   G'"
for key in max_abs_dev max_rel_dev max_z pass sde_max_abs_dev sde_max_rel_dev sde_max_z sde_pass \
           sim_pass epsilon_cks rho delta final_risk clipped_fraction; do
  check "JSON has $key" grep -q "\"$key\":" "$work/f.json"
done
check "JSON parses, pass is true" python3 -c "import json; d=json.load(open('$work/f.json')); assert d['pass'] is True and d['n']==400"
check "no temporary files left" bash -c "! ls -a '$work' | grep -q tmp"

"$bin" validate "$src/models/small-d.ini" --runs 2000 --no-sde --json "$work/s.json" >"$work/out" 2>&1
check "d = 2 is detected: exit 1" test $? -eq 1
check "d = 2: verdict FAIL" grep -q '^verdict: FAIL' "$work/out"
check "d = 2: JSON pass false" python3 -c "import json; d=json.load(open('$work/s.json')); assert d['pass'] is False and 'sde_pass' not in d"

# the figure is one of the outputs (issue 29): without gnuplot, exit 3 before anything runs
HDPSGD_GNUPLOT=/nonexistent/gnuplot "$bin" validate "${quick[@]}" --figure "$work/g.png" >"$work/out" 2>"$work/err"
check "gnuplot missing: exit 3" test $? -eq 3
check "gnuplot missing: clear message" grep -q 'gnuplot not found' "$work/err"
check "gnuplot missing: no data written" test ! -e "$work/g.sim.csv"
check "gnuplot missing: no figure" test ! -e "$work/g.png"

for ext in pdf svg; do
  "$bin" validate "${quick[@]}" --no-sde --figure "$work/h.$ext" >/dev/null 2>&1
  check "figure as .$ext" test -s "$work/h.$ext"
done
check "PDF signature" bash -c "head -c 4 '$work/h.pdf' | grep -q '%PDF'"
check "SVG content" grep -q '<svg' "$work/h.svg"

"$bin" validate --set data.d=-1 --figure "$work/bad.png" --json "$work/bad.json" >/dev/null 2>"$work/err"
check "bad input: exit 2" test $? -eq 2
check "bad input: no files" bash -c "! ls '$work' | grep -q '^bad'"
"$bin" validate --runs 0 >/dev/null 2>&1
check "--runs 0: exit 2" test $? -eq 2

"$bin" validate --set data.d=50 --set data.gamma=0.5 --runs 30 --no-sde --scaling 2 --json "$work/sc.json" >"$work/out" 2>&1
check "--scaling prints the slope" grep -q 'fitted log-log slope' "$work/out"
check "--scaling JSON" python3 -c "import json; d=json.load(open('$work/sc.json')); assert d['scaling_1_n']==400 and d['scaling_slope'] is not None"

"$bin" plot "$work/f.ode.csv" "$work/f.sim.csv" "$work/f.sde.csv" -o "$work/p.png" --bounds 2>/dev/null
check "plot: ode + sim + sde CSVs" test -s "$work/p.png"
echo "x,y" > "$work/other.csv"
"$bin" plot "$work/other.csv" -o "$work/q.png" 2>"$work/err"
check "plot: foreign CSV exits 2" test $? -eq 2
check "plot: names the accepted headers" grep -q "t,risk" "$work/err"
"$bin" plot "$work/f.ode.csv" 2>/dev/null
check "plot: -o required" test $? -eq 2
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
