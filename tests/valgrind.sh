#!/usr/bin/env bash
# valgrind memcheck on small runs of the program (issue 8): ode (Gaussian closed forms,
# a table schedule, a file spectrum), sim, sde (Student-t noise: the quadratures of the
# clipping factors and their Chebyshev tables), validate with files, rf when it
# exists, and the error paths (bad input, CVODE failure, every run diverged). Each must
# end with its usual exit status, no memcheck error and no definite or indirect leak.
# OpenMP runs with --threads 1 (libgomp's thread pool is "possibly lost", not counted).
#   tests/valgrind.sh BIN SRC
set -u
bin=$1
src=$2
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind not found: apt-get install valgrind (or run scripts/install-deps.sh)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
# shellcheck disable=SC2054 # (the commas are inside one option)
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --quiet)
# (to find where an uninitialised value comes from, add --track-origins=yes: twice as slow)
run() { # run NAME EXPECTED-STATUS ARGS...   (EXPECTED-STATUS: one status or a list "0|1")
  local name=$1 want=$2; shift 2
  (cd "$work" && "${vg[@]}" --log-file="$work/vg.log" "$bin" "$@") >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ "|$want|" == *"|$rc|"* && ! -s $work/vg.log ]]; then
    pass=$((pass + 1)); echo "ok   $name (exit $rc)"
  else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, expected $want"
    cat "$work/vg.log" "$work/err" | head -n 60
  fi
}
small=(--set data.d=30 --set data.gamma=0.25 --set ode.points=11)
printf '0 2\n0.5 1\n1 0.5\n' > "$work/table.txt"

run "ode" 0 ode "${small[@]}" -o ode.csv --json ode.json
run "ode, table schedule" 0 ode "${small[@]}" --set schedule.kind=table --set schedule.file=table.txt -o tab.csv
printf '[data]\nspectrum = file\nspectrum_file = spectrum.txt\ngamma = 0.5\n[ode]\npoints = 11\n' > "$work/m.ini"
printf '3\n1\n1\n0.5\n' > "$work/spectrum.txt"
run "ode, a model file with a file spectrum" 0 ode m.ini -o m.csv
run "sim" 0 sim "${small[@]}" --runs 3 --threads 1 -o sim.csv --json sim.json
run "sde, Student-t noise (quadratures, Chebyshev tables)" 0 sde "${small[@]}" --set data.noise=student --runs 2 --threads 1 -o sde.csv
# 4 runs at d = 30 make the verdict a coin toss (PASS 0 or FAIL 1 both complete the whole
# code path, files included); the verdicts themselves are tested by validate/run.sh
run "validate with data files" "0|1" validate "${small[@]}" --set data.spectrum=isotropic --runs 4 --threads 1 --data v --json v.json
run "bad input: unknown key" 2 ode --set clip.cc=1 -o bad.csv
run "bad input: negative eigenvalue (file read, then freed)" 2 ode "$src/tests/bad-input/negative-eigenvalue.ini" -o bad.csv
run "bad input: non-increasing table" 2 ode "$src/tests/bad-input/increasing-table.ini" -o bad.csv
run "bad input: output directory missing" 2 sim --runs 2 -o /nonexistent-dir/x.csv
run "CVODE failure (CV_TOO_MUCH_WORK)" 4 ode "${small[@]}" --max-steps 5 -o fail.csv --json fail.json
run "every run diverged" 4 sim --set data.d=20 --set schedule.kind=constant --set privacy.rho=inf --set clip.c=inf --set schedule.eta0=60 --runs 2 --threads 1 -o div.csv
run "output error (/dev/full)" 3 ode "${small[@]}" -o /dev/full
printf 'a,b,c\n1,2,0\n3,5,1\n4,4,2\n0,1,7\n2,2,2\n' > "$work/x.csv"; printf '1\n0\n2\n1\n1\n' > "$work/y.csv"
gzip -c "$work/x.csv" > "$work/x.csv.gz"; head -c 30 "$work/x.csv.gz" > "$work/cut.csv.gz"
run "dataset: CSV.gz, labels, least squares" 0 dataset x.csv.gz --labels y.csv --positive 1 --json ds.json
run "bad input: dataset, truncated gzip" 2 dataset cut.csv.gz
run "bad input: dataset, labels of another count" 2 dataset x.csv --labels x.csv
if "$bin" help rf >/dev/null 2>&1; then
  run "rf" 0 rf --set rf.d=8 --set rf.n=40 --set rf.p=50 --set rf.test_size=20 --set rf.records=5 --runs 2 --threads 1 -o rf.csv --json rf.json
else
  echo "skip rf: this hdpsgd has no 'rf' command yet"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
