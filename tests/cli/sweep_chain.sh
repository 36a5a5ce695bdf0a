#!/usr/bin/env bash
# `hdpsgd sweep` chaining: `commands = schedule, sim, ode, validate` designs the schedule at
# each point and runs the later commands on it. The sim's files are those of `hdpsgd sim` on
# the point with the designed table (schedule.tab; with tune_clip its clip.c), and differ from
# the base schedule's; the ODE after schedule gives the table's risk; commands before schedule
# keep the base schedule; --resume and mpirun give the same bytes; bad chains are refused.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }
base="$src/models/default.ini"
small=(--set data.d=30 --set sim.runs=6 --set ode.bins=8)
sweep_file() { # sweep_file NAME COMMANDS EXTRA-SWEEP-LINES
  cat > "$work/$1.ini" <<EOS
[sweep]
model = $base
commands = $2
schedule_families = output, pl
schedule_knots = 4
$3
[axes]
clip.c = 0.5, 1
[set]
data.d = 30
sim.runs = 6
ode.bins = 8
EOS
}
col() { # col CSV ROW COLUMN: the field of data row ROW (0-based) under COLUMN
  python3 -c 'import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[int(sys.argv[2])][sys.argv[3]])' "$@"
}

sweep_file chain "schedule, sim, ode, validate" ""
(cd "$work" && "$bin" sweep chain.ini -o c --threads 2) 2>"$work/err"
check "chained sweep exits 0" test $? -eq 0
check "chained: both points ok" test "$(grep -c ',ok$' "$work/c/results.csv")" -eq 2
check "chained: the columns in the commands' order" grep -q '^point,clip.c,d,n,gamma,rho,epsilon_cks,delta,schedule_output_final_risk,schedule_pl_final_risk,schedule_best_family,schedule_best_final_risk,schedule_best_c,schedule_table_final_risk,schedule_ode_solves,sim_final_risk,sim_final_stderr,sim_diverged,ode_final_risk,validate_pass,validate_max_rel_dev,validate_max_z,status$' "$work/c/results.csv"
check "chained: no column name twice" test -z "$(head -1 "$work/c/results.csv" | tr , '\n' | sort | uniq -d)"
check "chained: the pl design won (a real table)" test "$(col "$work/c/results.csv" 0 schedule_best_family)" = pl
check "chained: ode after schedule = the table's ODE risk" \
  test "$(col "$work/c/results.csv" 0 ode_final_risk)" = "$(col "$work/c/results.csv" 0 schedule_table_final_risk)"
check "chained: the sim's model is the table" grep -q '^# kind = table$' "$work/c/points/p00000/sim.csv"
check "chained: the sim's model names the point's schedule.tab" \
  grep -q "^# file = .*/c/points/p00000/schedule.tab$" "$work/c/points/p00000/sim.csv"
# the same point by hand: hdpsgd sim with the designed table
(cd "$work" && "$bin" sim "$base" --set clip.c=0.5 "${small[@]}" --set schedule.kind=table \
  --set schedule.file=c/points/p00000/schedule.tab -o hand.csv --json hand.json) >/dev/null 2>&1
check "chained sim.csv = hdpsgd sim with the designed table (same bytes)" cmp -s "$work/hand.csv" "$work/c/points/p00000/sim.csv"
check "chained sim_final_risk = hdpsgd sim's final_risk_mean" python3 - "$work/c/results.csv" "$work/hand.json" <<'EOP'
import csv, json, sys
row = list(csv.DictReader(open(sys.argv[1])))[0]
sys.exit(0 if float(row["sim_final_risk"]) == float("%.10g" % json.load(open(sys.argv[2]))["final_risk_mean"]) else 1)
EOP
(cd "$work" && "$bin" validate "$base" --set clip.c=0.5 "${small[@]}" --set schedule.kind=table \
  --set schedule.file=c/points/p00000/schedule.tab --json vhand.json) >/dev/null 2>&1
check "chained validate = hdpsgd validate with the designed table" python3 - "$work/c/results.csv" "$work/vhand.json" <<'EOP'
import csv, json, sys
row, v = list(csv.DictReader(open(sys.argv[1])))[0], json.load(open(sys.argv[2]))
sys.exit(0 if float(row["validate_max_z"]) == float("%.10g" % v["max_z"]) else 1)
EOP

# commands before schedule (and a sweep without it) keep the base schedule
sweep_file before "sim, schedule" ""
(cd "$work" && "$bin" sweep before.ini -o b --threads 1) 2>"$work/err"
check "sim before schedule exits 0" test $? -eq 0
(cd "$work" && "$bin" sim "$base" --set clip.c=0.5 "${small[@]}" -o basesim.csv) >/dev/null 2>&1
check "sim before schedule = hdpsgd sim on the base schedule" cmp -s "$work/basesim.csv" "$work/b/points/p00000/sim.csv"
check "the designed schedule's sim_final_risk differs from the base's" \
  test "$(col "$work/c/results.csv" 0 sim_final_risk)" != "$(col "$work/b/results.csv" 0 sim_final_risk)"
check "sim before schedule: the columns in that order" grep -q '^point,clip.c,d,n,gamma,rho,epsilon_cks,delta,sim_final_risk,sim_final_stderr,sim_diverged,schedule_output_final_risk,' "$work/b/results.csv"

# tune_clip: the designed clip.c goes along with the table; schedule_refine refines pl
sweep_file tuned "schedule, sim" $'tune_clip = true\nschedule_refine = true'
(cd "$work" && "$bin" sweep tuned.ini -o t --threads 2) 2>"$work/err"
check "tune_clip + refine chained sweep exits 0" test $? -eq 0
c=$(sed -n 's/^# ; model: .*; clip.c = \([^ ]*\)$/\1/p' "$work/t/points/p00001/schedule.tab")
check "tuned: the design moved clip.c away from the axis's 1" test -n "$c" -a "$c" != 1
(cd "$work" && "$bin" sim "$base" --set clip.c=1 "${small[@]}" --set schedule.kind=table \
  --set schedule.file=t/points/p00001/schedule.tab --set "clip.c=$c" -o thand.csv) >/dev/null 2>&1
check "tuned sim.csv = hdpsgd sim with the table and the designed clip.c" cmp -s "$work/thand.csv" "$work/t/points/p00001/sim.csv"
check "refine: schedule.json lists the levels" python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["refine_levels"] >= 2 else 1)' "$work/t/points/p00000/schedule.json"

# --resume: a lost point recomputed on its designed schedule, the same bytes
cp "$work/c/results.csv" "$work/first.csv"
rm "$work/c/points/p00001/row.csv" "$work/c/results.csv"
(cd "$work" && "$bin" sweep chain.ini -o c --resume --threads 1) 2>"$work/err"
check "chained --resume exits 0" test $? -eq 0
check "chained --resume: the same bytes" cmp -s "$work/first.csv" "$work/c/results.csv"
if command -v mpirun >/dev/null 2>&1; then
  (cd "$work" && mpirun -np 2 --oversubscribe --allow-run-as-root "$bin" sweep chain.ini -o m --threads 1) >"$work/mpi.out" 2>&1
  check "chained under mpirun -np 2: the same bytes" cmp -s "$work/first.csv" "$work/m/results.csv"
else
  echo "skip MPI: mpirun not installed"
fi

bad() { # bad NAME FRAGMENT SWEEP-TEXT
  printf '%s\n' "$3" > "$work/bad.ini"
  "$bin" sweep "$work/bad.ini" -o "$work/bad-out" 2>"$work/err"
  local rc=$?
  check "bad: $1 (exit 2, message, no output)" test $rc -eq 2 -a ! -e "$work/bad-out"
  grep -q -- "$2" "$work/err" || { fail=$((fail + 1)); echo "FAIL bad: $1: $(cat "$work/err")"; }
}
bad "a command twice" "commands: 'sim' is named twice" $'[sweep]\ncommands = schedule, sim, sim'
bad "refine without pl" "schedule_refine = true refines the pl family" $'[sweep]\ncommands = schedule\nschedule_families = output\nschedule_refine = true'
bad "bad refine tolerance" "schedule_refine_tol = '0': expected a positive number" $'[sweep]\ncommands = schedule\nschedule_refine_tol = 0'
bad "bad schedule_refine" "schedule_refine = 'on': expected true or false" $'[sweep]\ncommands = schedule\nschedule_refine = on'
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
