#!/usr/bin/env bash
# Threads and memory (issue 29): every Monte Carlo command gives the same bytes under
# OMP_THREAD_LIMIT=1 and OMP_DYNAMIC=true as with two threads (was: a false "out of
# memory", exit 4); one cap of 4096 threads for --threads and OMP_NUM_THREADS (exit 2);
# threads that cannot be created (an address-space limit too small for 4000 stacks) give a
# smaller team instead of libgomp's exit 1; an ODE too big for the memory is exit 4 with what
# it needs, not a segfault inside SUNDIALS; long jobs are announced and report progress from
# within their runs (item 8). Deterministic and a few seconds.
#   threads.sh BIN
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...

# name | arguments (each writes -o FILE, compared byte for byte but for comment lines
# that carry the wall time)
cases=(
  "sim|sim --set data.d=40 --set data.n=400 --set ode.points=11 --runs 6 --seed 3"
  "sde|sde --set data.d=40 --set data.n=400 --set ode.points=11 --runs 6 --seed 3"
  "rf|rf --set rf.p=60 --set rf.n=40 --set rf.d=8 --set rf.test_size=20 --set rf.records=4 --runs 3 --seed 3"
  "kl|kl run --set kl.width=16 --set kl.epochs=4 --set kl.runs=3 --set kl.inits=2 --seed 4"
  "nc|nc --set nc.draws=4 --set nc.p=20 --set nc.steps=20 --seed 2"
  "si|sim-index --set si.d=8 --set si.p=8 --set si.n=100 --set si.test_size=50 --set si.runs=3 --seed 6"
)
strip() { # the comment lines and nc's last column carry the wall time and the threads
  grep -v -E '^#.*(seconds|threads|version)' "$1" | { [[ $1 == */nc-* ]] && sed 's/,[^,]*$//' || cat; }
}
same_under() { # same_under NAME ENV... : the command's CSV equals the two-thread one
  local name=$1 args=$2; shift 2
  env "$@" "$bin" $args -o "$work/$name-env.csv" >/dev/null 2>"$work/err" ||
    { echo "  $name under $*: exit $?: $(head -c 300 "$work/err")"; return 1; }
  cmp -s <(strip "$work/$name-2.csv") <(strip "$work/$name-env.csv") ||
    { echo "  $name under $*: other bytes"; return 1; }
}
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  if ! "$bin" $args --threads 2 -o "$work/$name-2.csv" >/dev/null 2>"$work/err"; then
    check "$name: runs with --threads 2 ($(head -c 200 "$work/err"))" false
    continue
  fi
  check "$name: OMP_THREAD_LIMIT=1 gives the same bytes" same_under "$name" "$args" OMP_THREAD_LIMIT=1
  check "$name: OMP_DYNAMIC=true gives the same bytes" same_under "$name" "$args" OMP_DYNAMIC=true OMP_NUM_THREADS=2
done
"$bin" validate --set data.d=40 --set data.n=400 --runs 4 --seed 1 --threads 2 --data "$work/v2" >/dev/null 2>&1
OMP_THREAD_LIMIT=1 "$bin" validate --set data.d=40 --set data.n=400 --runs 4 --seed 1 --data "$work/v1" >/dev/null 2>"$work/err"
check "validate: OMP_THREAD_LIMIT=1 runs (exit $?) and gives the same sim data" \
  cmp -s <(strip "$work/v2.sim.csv") <(strip "$work/v1.sim.csv")

# one cap: 4096
OMP_NUM_THREADS=5000 "$bin" sim --runs 2 -o "$work/x.csv" >/dev/null 2>"$work/err"; rc=$?
check "OMP_NUM_THREADS=5000: exit 2 naming it" \
  bash -c "[[ $rc == 2 ]] && grep -q 'OMP_NUM_THREADS asks for 5000 threads: at most 4096' '$work/err' && [[ ! -e '$work/x.csv' ]]"
OMP_NUM_THREADS=5000 "$bin" sim --runs 2 --threads 2 -o "$work/x.csv" >/dev/null 2>&1
check "OMP_NUM_THREADS=5000 with --threads 2: runs" test $? -eq 0
"$bin" kl run --threads 4097 -o "$work/y.csv" >/dev/null 2>"$work/err"; rc=$?
check "kl --threads 4097: exit 2" bash -c "[[ $rc == 2 ]] && grep -q '0 (one per core) to 4096' '$work/err'"

# limits: only where the program runs under an address-space limit at all (not under
# AddressSanitizer, whose shadow memory needs terabytes of address space)
asan=0; ldd "$bin" 2>/dev/null | grep -q libasan && asan=1
if ((asan == 0)) && (ulimit -v 1000000; "$bin" --version) >/dev/null 2>&1; then
  # 4000 stacks of 8 MB do not fit in 1 GB: libgomp would exit 1; the probe gives fewer
  (ulimit -v 1000000; exec "$bin" sim --set data.d=10 --set data.n=50 --set ode.points=3 \
     --runs 4000 --seed 1 --threads 4000 -o "$work/t4000.csv") >/dev/null 2>"$work/err"; rc=$?
  "$bin" sim --set data.d=10 --set data.n=50 --set ode.points=3 --runs 4000 --seed 1 \
    --threads 2 -o "$work/t2.csv" >/dev/null 2>&1
  check "4000 threads under ulimit -v 1 GB: exit 0 (was libgomp's exit 1), same bytes" \
    bash -c "[[ $rc == 0 ]] && cmp -s <(grep -v '^#' '$work/t4000.csv') <(grep -v '^#' '$work/t2.csv')"
  for solver in cvode dop853; do
    # 4e6 bins: CVODE needs about 640 MB, DOP853 160 MB beyond the spectrum
    (ulimit -v 400000; exec "$bin" ode --set data.d=4e6 --set ode.solver=$solver \
       -o "$work/big.csv") >/dev/null 2>"$work/err"; rc=$?
    check "ode d = 4e6 ($solver) under ulimit -v 400 MB: exit 4 with the memory it needs (was a segfault)" \
      bash -c "[[ $rc == 4 ]] && grep -q 'out of memory for .*GB' '$work/err' && [[ ! -e '$work/big.csv' ]]"
  done
else
  echo "skip: this hdpsgd cannot run under ulimit -v (AddressSanitizer?): the limit checks"
fi

# long jobs (item 8): announced before they start, with a progress line from within the
# runs; each job here would take minutes to centuries, and is stopped once its line is seen
wait_for() { # wait_for PID FILE PATTERN: until FILE holds PATTERN (at most 60 s) or PID ended
  local i
  for ((i = 0; i < 1200; i++)); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  grep -q "$3" "$2" 2>/dev/null
}
"$bin" sim --set data.n=1e12 -o "$work/long.csv" 2>"$work/long.err" & pid=$!
wait_for $pid "$work/long.err" "coordinate updates"; found=$?
kill $pid 2>/dev/null; wait $pid 2>/dev/null
check "sim with n = 1e12 (not a terminal): announced with its size and a duration in days" \
  bash -c "[[ $found == 0 ]] && grep -q '2e+16 coordinate updates (100 runs x 1000000000000 steps x d = 200): roughly .* days' '$work/long.err'"
"$bin" sim --set data.d=50 --runs 2 -o "$work/short.csv" 2>"$work/short.err"
check "a short sim announces nothing" bash -c "! grep -q 'coordinate updates' '$work/short.err'"
if command -v script >/dev/null; then
  script -qfc "exec '$bin' sim --set data.d=1000 --set data.n=1e8 --runs 1 --threads 1 -o '$work/tty.csv'" \
    /dev/null >"$work/tty.out" 2>&1 & pid=$!
  wait_for $pid "$work/tty.out" "sim steps, about"; found=$?
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
  check "on a terminal: announced, then a progress line from within the one run" \
    bash -c "[[ $found == 0 ]] && grep -q 'progress below; Ctrl-C stops it' '$work/tty.out' && grep -qE '% [0-9]+/100000000 sim steps, about [0-9.]+ [a-z]+ left' '$work/tty.out'"
fi

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
