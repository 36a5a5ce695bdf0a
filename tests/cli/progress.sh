#!/usr/bin/env bash
# The program's one progress line (src/cli/progress.c, issue 30 item 6): under a pseudo-
# terminal (util-linux `script`) sim, rates and schedule draw one line rewritten in place
# with a percentage, the count and, past a second, "about X left", cleared before their last
# messages, no wider than the terminal; without a terminal their standard error is what it
# was (no progress line, no carriage return) and their results are the same bytes.
set -u
bin=$(realpath "$1")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
. "$here/lib.sh" # check NAME COMMAND...
if ! command -v script >/dev/null 2>&1; then
  echo "skip: no util-linux script (a pseudo-terminal is needed)"
  exit 77
fi
export OMP_NUM_THREADS=1
iso=(--set data.spectrum=isotropic --set data.d=200 --set data.gamma=0.01 --set privacy.rho=1)
# tty NAME COMMAND...: COMMAND under a pseudo-terminal of 100 columns, its terminal output in
# NAME.tty (stdout and stderr together), its exit status the function's
# and its wall time in milliseconds in $ms
tty() {
  local name=$1 t0 rc; shift
  t0=$(date +%s%N)
  script -qfec "stty cols 100 2>/dev/null; $(printf '%q ' "$@")" /dev/null >"$name.tty" </dev/null
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  return $rc
}
# left NAME PATTERN: "about X left" is drawn once a second has passed, so it is asserted when
# the run took 2 s or more; a faster machine finishes before and says so instead of failing
left() {
  local name=$1 pattern=$2
  if [ "$ms" -ge 2000 ]; then
    check "$name: past a second the time left" bash -c "grep -qE '$pattern' <(tr '\r' '\n' <$name.tty)"
  else
    echo "note $name: the run took $ms ms, under 2 s: 'about X left' not asserted"
  fi
}
# segments FILE: the terminal output cut at \r and \n, one per line
segments() { tr '\r' '\n' <"$1" | grep -v '^ *$'; }
# drawn FILE CMD: the progress lines of hdpsgd CMD (a bar, a percentage)
drawn() { segments "$1" | grep -E "^hdpsgd $2: \[[# ]{20}\] +[0-9]+% "; }

# ---- sim: the runs, about 2 s ----
sim=(sim --set data.d=2000 --runs 30 --threads 1 --seed 3)
tty sim "$bin" "${sim[@]}" -o sim-tty.csv
check "sim under a terminal exits 0" test $? -eq 0
check "sim: the line has the bar, a percentage and the runs" \
  bash -c "grep -qE '^hdpsgd sim: \[[# ]{20}\] +[0-9]+% [0-9]+/30 sim runs' <(tr '\r' '\n' <sim.tty)"
left sim '^hdpsgd sim: .*% [0-9]+/30 sim runs, about [0-9.]+ (s|min) left'
check "sim: the line is rewritten in place (carriage returns, no newline between)" \
  test "$(drawn sim.tty sim | wc -l)" -ge 5
check "sim: the line is cleared before the result's message" \
  grep -qaE $'\r {40,}\rhdpsgd sim: final excess risk' sim.tty
"$bin" "${sim[@]}" -o sim.csv >sim.out 2>sim.err
check "sim without a terminal: exit 0" test $? -eq 0
check "sim without a terminal: stderr is the result's one line" \
  bash -c "test \$(wc -l <sim.err) -eq 1 && grep -q '^hdpsgd sim: final excess risk' sim.err && ! grep -q \$'\r' sim.err && ! grep -q left sim.err"
check "sim: the same CSV with and without a terminal" cmp -s sim.csv sim-tty.csv

# ---- rates: the gammas, with the family and the best final risk ----
rates=(rates "${iso[@]}" --gammas 0.001:0.003:4) # about 2.5 s
tty rates "$bin" "${rates[@]}" -o rates-tty.csv
check "rates under a terminal exits 0" test $? -eq 0
check "rates: the line has the gammas done, the family's solves and best final risk" \
  bash -c "grep -qE '^hdpsgd rates: (\[[# ]{20}\] )? *[0-9]+% [0-9]/4 gammas(, about [0-9.]+ (s|min) left)?; [a-z-]+ [0-9]+ ODE solves, best final risk [0-9.e-]+' <(tr '\r' '\n' <rates.tty)"
left rates '^hdpsgd rates: .*/4 gammas, about [0-9.]+ (s|min) left; '
check "rates: every per-gamma line starts on a cleared line" \
  bash -c "! grep -qaP '[^\r\n]hdpsgd rates: gamma = ' rates.tty"
"$bin" "${rates[@]}" -o rates.csv >rates.out 2>rates.err
check "rates without a terminal: exit 0" test $? -eq 0
check "rates without a terminal: stderr is the per-gamma lines only" \
  bash -c "test \$(grep -c '^hdpsgd rates: gamma = ' rates.err) -eq \$(wc -l <rates.err) && test \$(wc -l <rates.err) -ge 4 && ! grep -q \$'\r' rates.err"
check "rates: the same CSV with and without a terminal" cmp -s rates.csv rates-tty.csv

# ---- schedule: ~M solves (an estimate), the line within 100 columns (the bar dropped when
# the line would be wider); ode: the steps ----
sched=(schedule "${iso[@]}" --optimize --family pl,output)
tty sched "$bin" "${sched[@]}" -o sched-tty.tab
check "schedule under a terminal exits 0" test $? -eq 0
check "schedule: the line has a percentage of ~M ODE solves, the family and the best risk" \
  bash -c "grep -qE '^hdpsgd schedule: (\[[# ]{20}\] )? *[0-9]+% [0-9]+/~[0-9]+ ODE solves(, about [0-9.]+ (s|min) left)?; (pl|output) (scan|round), best final risk' <(tr '\r' '\n' <sched.tty)"
check "schedule: no progress line wider than the terminal's 99 columns" \
  bash -c "tr '\r' '\n' <sched.tty | grep -E '^hdpsgd schedule: (\[[# ]{20}\] )? *[0-9]+% ' >lines && test -s lines && ! grep -qE '.{100,}' lines"
"$bin" "${sched[@]}" -o sched.tab >sched.out 2>sched.err
check "schedule without a terminal: no progress line, no carriage return" \
  bash -c "! grep -qE '\[[# ]{20}\]|'\$'\r' sched.err && grep -qE '[0-9]+ of ~[0-9]+ ODE solves, ~[0-9.]+ (s|min|h) left, best final risk' sched.err"
check "schedule: the same table with and without a terminal (but for its own name)" \
  cmp -s <(grep -v '^# ; use:' sched.tab) <(grep -v '^# ; use:' sched-tty.tab)
tty ode "$bin" ode -o ode-tty.csv
check "ode under a terminal exits 0" test $? -eq 0
"$bin" ode -o ode.csv 2>ode.err
check "ode: the same CSV with and without a terminal, no carriage return without one" \
  bash -c "cmp -s ode.csv ode-tty.csv && ! grep -q \$'\r' ode.err"

echo "$pass passed, $fail failed"
test "$fail" -eq 0
