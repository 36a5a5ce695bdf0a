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
check "header" grep -q '^point,data.gamma,clip.c,schedule.kind,d,n,gamma,rho,epsilon_cks,ode_final_risk,sim_final_risk,sim_final_stderr,sim_diverged,validate_pass,validate_max_rel_dev,validate_max_z,status$' "$work/a/results.csv"
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
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
