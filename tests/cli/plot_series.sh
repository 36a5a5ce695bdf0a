#!/usr/bin/env bash
# Sweep and validation figures as a paper needs them (issue 34): `plot results.csv` with
# several --y columns (comma-separated or repeated) and error bars from the matching
# *_stderr column, axes labelled from the keys' help and the columns' meaning, --xlabel and
# --ylabel, no legend for one series, bad --y lists refused; `validate --figure` hiding an
# ODE bound that leaves the data's range (named in the key), --bounds and --no-bounds;
# `plot` of several risk CSVs: legend in argument order, one colour per family (validate's
# colours for one), no title of file names, final-iterate markers at t = 1 with a key entry.
# A recording gnuplot (HDPSGD_GNUPLOT) keeps each figure's private folder (script and data)
# and then runs the real gnuplot. Skipped (77) without gnuplot.
set -u
bin=$(readlink -f "$1")
models=$(readlink -f "$(dirname "$0")/../../models")
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "skip: gnuplot not installed"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
cat > rec.sh <<EOF
#!/bin/sh
rm -rf "$work/rec"; cp -r "\$(dirname "\$1")" "$work/rec"
exec gnuplot "\$@"
EOF
chmod +x rec.sh
export HDPSGD_GNUPLOT=$work/rec.sh
png() { [[ -s $1 && $(head -c 8 "$1" | od -An -c | tr -d ' ') == '211PNG\r\n032\n' ]]; }
var() { grep -m1 "^$1 = " rec/script.gp; } # var NAME: its assignment in the recorded script
export -f var

cat > sw.ini <<'EOF'
[sweep]
commands = ode, sim
[axes]
clip.c = 0.3, 1, 3
privacy.rho = 0.5, 1
[set]
data.d = 30
ode.points = 5
sim.runs = 8
EOF
"$bin" sweep sw.ini -o sw >/dev/null 2>&1
check "the sweep ran" test -s sw/results.csv

# ---- two columns, error bars from sim_final_stderr ----
"$bin" plot sw/results.csv --x clip.c --y ode_final_risk,sim_final_risk -o two.png 2>err
check "--y ode_final_risk,sim_final_risk: exit 0, a PNG" png two.png
check "the figure's data: y and stderr per column" bash -c "head -1 rec/data1.csv | grep -qx 'group,x,y1,e1,y2,e2'"
# every stderr of the sweep is in column e2 (the row of point 0: clip.c 0.3, rho 0.5)
se0=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["sim_final_stderr"] }' sw/results.csv)
check "e2 holds sim_final_stderr ($se0)" bash -c "awk -F, 'NR > 1 && \$1 == 0 && \$2 == 0.29999999999999999 { print \$6 }' rec/data1.csv | grep -q '^${se0%?}'"
check "e1 (ode_final_risk) has no stderr: empty" bash -c "awk -F, 'NR > 1 && \$4 != \"\" { bad = 1 } END { exit bad }' rec/data1.csv"
check "the Monte Carlo with error bars, the ODE as a line" bash -c "grep -qx \"err_cols = '2'\" rec/script.gp && grep -qx \"line_cols = '1'\" rec/script.gp"
check "... drawn with yerrorlines" grep -q "with yerrorlines" rec/script.gp
check "the ODE dashed (dash_1 = 2), the Monte Carlo solid (dash_2 = 1)" bash -c "grep -qx 'dash_1 = 2' rec/script.gp && grep -qx 'dash_2 = 1' rec/script.gp"
check "x axis: the key's help (clip.c)" bash -c "var xname | grep -qF \"'clipping constant c (clip.c)'\""
check "y axis: what the columns measure" bash -c "var zname | grep -qF \"'final excess risk R(1)'\""
check "legend: the Monte Carlo with its bars" bash -c "var ylab_2 | grep -qF 'Monte Carlo ± stderr'"
check "two curves (privacy.rho) and two columns: both in the key" grep -qx 'legend_mode = 3' rec/script.gp
cp rec/data1.csv comma.csv
"$bin" plot sw/results.csv --x clip.c --y ode_final_risk --y sim_final_risk -o rep.png 2>/dev/null
check "--y repeated: the same data as the comma-separated list" cmp -s comma.csv rec/data1.csv

# ---- axis labels given, one series without a legend ----
"$bin" plot sw/results.csv --x clip.c --y sim_final_risk --by privacy.rho --xlabel "clip c" \
  --ylabel "it's R(1)" -o lab.png 2>/dev/null
check "--xlabel/--ylabel: a PNG" png lab.png
check "--xlabel applied through its variable" bash -c "grep -q \"^fig_user = .*set xlabel user_xlabel noenhanced\" rec/script.gp && grep -qx \"user_xlabel = 'clip c'\" rec/script.gp"
check "--ylabel applied through its variable" bash -c "grep -q \"set ylabel user_ylabel noenhanced\" rec/script.gp && grep -q \"^user_ylabel = 'it'\" rec/script.gp"
awk -F, 'NR == 1 || $3 == 1' sw/results.csv > one.csv
"$bin" plot one.csv --x clip.c --y sim_final_risk -o one.png 2>/dev/null
check "one series: a PNG" png one.png
check "one series: no legend" bash -c "grep -qx 'legend_mode = 0' rec/script.gp && grep -q 'if (legend_mode == 0) { set key off }' rec/script.gp"
"$bin" plot one.csv --x clip.c --y ode_final_risk,sim_final_risk -o one2.png 2>/dev/null
check "one curve, two columns: the columns in the key" grep -qx 'legend_mode = 1' rec/script.gp

# ---- bad --y lists: exit 2, named, nothing written ----
refused() { # refused NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  rm -f bad.png
  "$bin" plot sw/results.csv -o bad.png "$@" >/dev/null 2>err
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: names it" grep -qF -- "$pat" err
  check "$name: nothing written" test ! -e bad.png
}
refused "--y with an empty name" "--y ode_final_risk,,sim_final_risk" --x clip.c --y ode_final_risk,,sim_final_risk
refused "--y a column twice" "--y ode_final_risk: given twice" --x clip.c --y ode_final_risk,ode_final_risk
refused "--y no such column" "--y nope: sw/results.csv has no such column" --x clip.c --y ode_final_risk,nope
refused "--heat with two --y" "--heat draws one column" --heat --x clip.c --by privacy.rho --y ode_final_risk,sim_final_risk

# ---- validate: a bound far off the data hidden and named; --bounds, --no-bounds ----
vsmall=(--runs 16 --no-sde --set ode.points=41)
"$bin" validate "$models/powerlaw.ini" "${vsmall[@]}" --figure pl.svg >/dev/null 2>&1
check "powerlaw: the script decides (show_bounds = -1)" grep -qx 'show_bounds = -1' rec/script.gp
up=$(awk -F, 'NR > 1 && $1 < 0.9999999 && $3 > m { m = $3 } END { print m }' pl.ode.csv)
hi=$(awk -F, 'NR > 1 && $1 < 0.9999999 && $6 > m { m = $6 } END { print m }' pl.sim.csv)
check "powerlaw: the upper bound ($up) is far above the data (<= $hi)" awk -v u="$up" -v h="$hi" 'BEGIN { exit !(u > 2 * h) }'
check "powerlaw: the upper bound hidden, the key says so" grep -q 'hidden (to' pl.svg
check "powerlaw: the lower bound still drawn" grep -q 'ODE lower bound' pl.svg
ymax=$(grep -o '<tspan[^>]*>[^<]*</tspan>' pl.svg | sed 's/<[^>]*>//g' | grep -E '^ *[0-9.]+ *$' | sort -g | tail -1)
"$bin" validate "$models/powerlaw.ini" "${vsmall[@]}" --figure plb.svg --bounds >/dev/null 2>&1
check "--bounds: drawn however far" bash -c "grep -qx 'show_bounds = 1' rec/script.gp && grep -q 'ODE bounds' plb.svg && ! grep -q 'hidden (to' plb.svg"
ymaxb=$(grep -o '<tspan[^>]*>[^<]*</tspan>' plb.svg | sed 's/<[^>]*>//g' | grep -E '^ *[0-9.]+ *$' | sort -g | tail -1)
# the largest tic (x tics end at 1.x): the axis spans the data, or the bound with --bounds
check "--bounds: the y axis reaches the bound ($ymaxb > 2 x $ymax)" awk -v a="$ymaxb" -v b="$ymax" 'BEGIN { exit !(a > 2 * b) }'
"$bin" validate "$models/powerlaw.ini" "${vsmall[@]}" --figure pln.svg --no-bounds >/dev/null 2>&1
check "--no-bounds: none" bash -c "grep -qx 'show_bounds = 0' rec/script.gp && ! grep -q 'ODE bound\|hidden (to' pln.svg"
"$bin" validate "$models/powerlaw.ini" --bounds --no-bounds --figure x.svg >/dev/null 2>err
rc=$?
check "--bounds with --no-bounds: exit 2" bash -c "[[ $rc -eq 2 ]] && grep -q -- '--bounds and --no-bounds' err && [[ ! -e x.svg ]]"
"$bin" validate --set data.spectrum=isotropic --set data.d=40 "${vsmall[@]}" --figure iso.svg >/dev/null 2>&1
check "isotropic spectrum: no bounds by default" grep -qx 'show_bounds = 0' rec/script.gp

# ---- several risk CSVs: legend in argument order, a colour per family, markers at t = 1 ----
s=(--set data.d=30 --set data.gamma=0.2 --set ode.points=11)
"$bin" ode "${s[@]}" -o a.ode.csv 2>/dev/null
"$bin" sim "${s[@]}" --runs 8 -o a.sim.csv 2>/dev/null
"$bin" ode "${s[@]}" --set clip.c=3 -o b.ode.csv 2>/dev/null
"$bin" sim "${s[@]}" --set clip.c=3 --runs 8 -o b.sim.csv 2>/dev/null
"$bin" plot b.sim.csv a.ode.csv b.ode.csv a.sim.csv -o fam.png 2>/dev/null
check "four risk CSVs: a PNG" png fam.png
check "the files in argument order, with their kinds" grep -qx "kinds = 'm o o m'" rec/script.gp
check "... the legend follows the files (keyentry for i = 1..n)" grep -q 'for \[i=1:nall\] keyentry' rec/script.gp
check "labels in argument order, named by family" bash -c "var label_1 | grep -qF \"'b: Monte Carlo\" && var label_2 | grep -qF \"'a: ODE\" && var label_3 | grep -qF \"'b: ODE\""
check "one colour per family (b: 1, a: 2)" bash -c "grep -qx 'colour_1 = 1' rec/script.gp && grep -qx 'colour_3 = 1' rec/script.gp && grep -qx 'colour_2 = 2' rec/script.gp && grep -qx 'colour_4 = 2' rec/script.gp"
check "no title made of file names" bash -c "! grep -q 'a.ode.csv\|b.sim.csv' rec/script.gp"
check "markers about t = 1 (0.02 apart, not spread to 1.2), the axis ending near 1.07" bash -c "grep -q 'using (dodge(int(s))):(fin' rec/script.gp && grep -qxF 'dodge(i) = 1 + 0.02 * (i - (nall + 1) / 2.0)' rec/script.gp && grep -qxF 'set xrange [0:1.03 + 0.01 * nall]' rec/script.gp"
check "... and a key entry for them" grep -q "title 'markers at t = 1" rec/script.gp
"$bin" plot a.ode.csv a.sim.csv -o one_fam.png 2>/dev/null
check "one family: validate's colours (ODE vermillion 2, Monte Carlo blue 1)" bash -c "grep -qx 'colour_1 = 2' rec/script.gp && grep -qx 'colour_2 = 1' rec/script.gp"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
