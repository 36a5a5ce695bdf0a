#!/usr/bin/env bash
# `hdpsgd sweep`: serial results, resume after a lost point, the same bytes under
# mpirun -np 2 (when Open MPI is installed), and bad sweep files.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }
cat > "$work/s.ini" <<EOS
[sweep]
model = $src/models/isotropic-output.ini
commands = ode, sim, validate
[axes]
data.gamma = 0.1, 0.25
clip.c = 0.5:2:2:log
schedule.kind = output, linear-noise
[set]
sim.runs = 12
data.d = 60
EOS
"$bin" sweep "$work/s.ini" -o "$work/a" --threads 1 2>"$work/err"; rc=$?
check "serial sweep exits 0" test $rc -eq 0
check "8 result rows + header" test "$(wc -l < "$work/a/results.csv")" -eq 9
check "header" grep -q '^point,data.gamma,clip.c,schedule.kind,d,n,gamma,rho,epsilon_cks,delta,ode_final_risk,sim_final_risk,sim_final_stderr,sim_diverged,validate_pass,validate_max_rel_dev,validate_max_z,status$' "$work/a/results.csv"
check "every point ok" test "$(grep -c ',ok$' "$work/a/results.csv")" -eq 8
check "per-point files" test -s "$work/a/points/p00007/sim.json" -a -s "$work/a/points/p00007/ode.csv" -a -s "$work/a/points/p00007/validate.json"
check "log axis values" grep -q '^3,0.1,2,linear-noise' "$work/a/results.csv"

"$bin" sweep "$work/s.ini" -o "$work/a" 2>"$work/err"
check "existing DIR without --resume: exit 2" test $? -eq 2
cp "$work/a/results.csv" "$work/first.csv"
rm "$work/a/points/p00003/row.csv" "$work/a/results.csv"
"$bin" sweep "$work/s.ini" -o "$work/a" --resume --threads 2 2>"$work/err"
check "resume exits 0" test $? -eq 0
check "resume recomputed only the lost point" test "$(grep -c 'done' "$work/err")" -eq 1
check "resumed results are the same bytes" cmp -s "$work/first.csv" "$work/a/results.csv"

if command -v mpirun >/dev/null 2>&1 && "$bin" help sweep >/dev/null; then
  mpirun -np 2 --oversubscribe --allow-run-as-root "$bin" sweep "$work/s.ini" -o "$work/m" --threads 1 >"$work/mpi.out" 2>&1
  check "mpirun -np 2 exits 0" test $? -eq 0
  check "MPI results are the same bytes as serial" cmp -s "$work/first.csv" "$work/m/results.csv"
  check "both ranks worked" grep -q '\[rank 1\]' "$work/mpi.out"
else
  echo "skip MPI: mpirun not installed"
fi

# schedule and rates at every point: the same numbers as the stand-alone commands, and
# the same bytes under MPI
cat > "$work/d.ini" <<EOS
[sweep]
model = $src/models/isotropic-output.ini
commands = ode, schedule, rates
schedule_families = output, optimal
rates_gammas = 0.01:0.1:3
rates_families = optimal, output
[axes]
clip.c = 0.5, 2
privacy.rho = 0.5, 1
[set]
data.d = 60
EOS
"$bin" sweep "$work/d.ini" -o "$work/d" 2>"$work/err"
check "schedule+rates sweep exits 0" test $? -eq 0
check "schedule+rates header" grep -q '^point,clip.c,privacy.rho,d,n,gamma,rho,epsilon_cks,delta,ode_final_risk,schedule_output_final_risk,schedule_inverse_time_final_risk,schedule_best_family,schedule_best_final_risk,schedule_best_c,schedule_table_final_risk,schedule_ode_solves,rates_output_slope,rates_output_theory_slope,rates_inverse_time_slope,rates_inverse_time_theory_slope,rates_ode_solves,status$' "$work/d/results.csv"
check "schedule+rates: 4 points ok" test "$(grep -c ',ok$' "$work/d/results.csv")" -eq 4
check "schedule+rates per-point files" test -s "$work/d/points/p00002/schedule.json" -a -s "$work/d/points/p00002/schedule.tab" -a -s "$work/d/points/p00002/rates.csv" -a -s "$work/d/points/p00002/rates.json"
# point 2 is clip.c = 2, privacy.rho = 0.5
"$bin" rates "$src/models/isotropic-output.ini" --set clip.c=2 --set privacy.rho=0.5 --set data.d=60 \
  --gammas 0.01:0.1:3 --families output,optimal -o "$work/r.csv" --json "$work/r.json" >/dev/null 2>&1
check "sweep rates.csv = hdpsgd rates -o" cmp -s "$work/r.csv" "$work/d/points/p00002/rates.csv"
"$bin" schedule "$src/models/isotropic-output.ini" --set clip.c=2 --set privacy.rho=0.5 --set data.d=60 \
  --optimize --family output,optimal -o "$work/t.tab" --json "$work/t.json" >/dev/null 2>&1
check "sweep schedule.tab = hdpsgd schedule -o (but the use line)" \
  cmp -s <(grep -v '^# ; use:' "$work/t.tab") "$work/d/points/p00002/schedule.tab"
same_json() { python3 - "$@" <<'EOP'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
skip = {"ode_solves_per_second", "table_file", "git"}
keys = (set(a) | set(b)) - skip
bad = [k for k in sorted(keys) if a.get(k) != b.get(k)]
if bad: print("differ:", bad)
sys.exit(1 if bad else 0)
EOP
}
check "sweep schedule.json = hdpsgd schedule --json" same_json "$work/t.json" "$work/d/points/p00002/schedule.json"
check "sweep rates.json = hdpsgd rates --json" same_json "$work/r.json" "$work/d/points/p00002/rates.json"
check "row = the stand-alone numbers" python3 - "$work/d/results.csv" "$work/t.json" "$work/r.json" <<'EOP'
import csv, json, sys
row = list(csv.DictReader(open(sys.argv[1])))[2]
t, r = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ok = (float(row["schedule_inverse_time_final_risk"]) == float("%.10g" % t["inverse_time_final_risk"])
      and row["schedule_best_family"] == t["best_family"]
      and int(row["schedule_ode_solves"]) == t["ode_solves"]
      and float(row["rates_output_slope"]) == float("%.10g" % r["output_slope"])
      and int(row["rates_ode_solves"]) == r["ode_solves"])
sys.exit(0 if ok else 1)
EOP
if command -v mpirun >/dev/null 2>&1 && "$bin" help sweep >/dev/null; then
  mpirun -np 2 --oversubscribe --allow-run-as-root "$bin" sweep "$work/d.ini" -o "$work/dm" >"$work/mpi.out" 2>&1
  check "schedule+rates under mpirun -np 2: the same bytes" cmp -s "$work/d/results.csv" "$work/dm/results.csv"
  check "schedule+rates under MPI: the same per-point rates.csv" cmp -s "$work/d/points/p00003/rates.csv" "$work/dm/points/p00003/rates.csv"
fi

# --dry-run: every point checked and listed, nothing written; the example sweep files load
cp "$src/examples/sweeps/grid.ini" "$src/examples/sweeps/design.ini" "$src/examples/sweeps/chain.ini" "$work/"
sed -i "s|^model = ../../models/|model = $src/models/|" "$work/grid.ini" "$work/design.ini" "$work/chain.ini"
(cd "$work" && "$bin" sweep "$work/grid.ini" --dry-run >"$work/dry.out" 2>"$work/err")
check "dry run exits 0" test $? -eq 0
check "dry run lists the 30 points of examples/sweeps/grid.ini" test "$(wc -l < "$work/dry.out")" -eq 30
check "dry run point line" grep -qx '29 data.gamma=0.05 clip.c=3 schedule.kind=inverse-time' "$work/dry.out"
check "dry run writes nothing" test ! -e "$work/grid-out"
"$bin" sweep "$work/design.ini" --dry-run >"$work/dry.out" 2>"$work/err"
check "examples/sweeps/design.ini checks (15 points)" test $? -eq 0 -a "$(wc -l < "$work/dry.out")" -eq 15
"$bin" sweep "$work/chain.ini" --dry-run >"$work/dry.out" 2>"$work/err"
check "examples/sweeps/chain.ini checks (3 points)" test $? -eq 0 -a "$(wc -l < "$work/dry.out")" -eq 3
printf '[sweep]\ncommands = ode\n[axes]\nclip.c = 1, -1\n' > "$work/dbad.ini"
"$bin" sweep "$work/dbad.ini" --dry-run >/dev/null 2>"$work/err"
check "dry run of a bad point: exit 2" test $? -eq 2

bad() { # bad NAME FRAGMENT SWEEP-TEXT
  printf '%s\n' "$3" > "$work/bad.ini"
  "$bin" sweep "$work/bad.ini" -o "$work/bad-out" 2>"$work/err"
  local rc=$?
  check "bad: $1 (exit 2)" test $rc -eq 2
  check "bad: $1 (message)" grep -q -- "$2" "$work/err"
  check "bad: $1 (no output)" test ! -e "$work/bad-out"
}
bad "unknown axis key" "unknown key 'gama' in \[data\]" $'[sweep]\ncommands = ode\n[axes]\ndata.gama = 0.1, 0.2'
bad "bad range" "expected LO:HI:COUNT" $'[sweep]\ncommands = ode\n[axes]\nclip.c = 1:2:0'
bad "unknown command" "unknown command 'fit'" $'[sweep]\ncommands = ode, fit'
bad "no commands" "commands is missing" $'[axes]\nclip.c = 1, 2'
bad "bad value at one point" "at point 1 (clip.c=-1)" $'[sweep]\ncommands = ode\n[axes]\nclip.c = 1, -1'
bad "rates without its gamma grid" "rates_gammas = LO:HI:COUNT is missing" $'[sweep]\ncommands = rates'
bad "rates over a gamma axis" "axis data.gamma: the rates command sets data.gamma itself" $'[sweep]\ncommands = rates\nrates_gammas = 0.01:0.1:3\n[axes]\ndata.gamma = 0.1, 0.2'
bad "bad rates grid" "rates_gammas = " $'[sweep]\ncommands = rates\nrates_gammas = 0.1:0.01:3'
bad "bad knots" "schedule_knots = '1': expected an integer from 2 to 512" $'[sweep]\ncommands = schedule\nschedule_knots = 1'
bad "unknown family" "schedule_families: unknown family 'best'" $'[sweep]\ncommands = schedule\nschedule_families = output, best'
bad "bad tune_clip" "tune_clip = 'yes': expected true or false" $'[sweep]\ncommands = schedule\ntune_clip = yes'
bad "rates grid bad at one point" "at point 1 (data.d=-5)" $'[sweep]\ncommands = rates\nrates_gammas = 0.01:0.1:3\n[axes]\ndata.d = 50, -5'
bad "unknown sweep key" "accepted keys: model, commands, schedule_families" $'[sweep]\ncommands = ode\nfamilies = all'
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
