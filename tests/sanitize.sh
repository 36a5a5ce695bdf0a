#!/usr/bin/env bash
# The sanitizer build (issue 8): configures and builds SRC in DIR with
# -DHDPSGD_SANITIZE=ON (gcc, -fsanitize=address,undefined -fno-sanitize-recover=all
# -fno-omit-frame-pointer) and -DHDPSGD_WERROR=ON, then runs its unit and command-line
# tests (ctest -L 'unit|cli'; not the slow validation suite). Every process writes its
# sanitizer reports to DIR/sanitizer-logs: the run fails on any report, also from a
# command whose exit status a test does not look at.
#   tests/sanitize.sh SRC DIR
# By hand: cmake -S . -B build-asan -DHDPSGD_SANITIZE=ON && cmake --build build-asan -j2 &&
#          UBSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-asan -L 'unit|cli'
# LeakSanitizer runs everywhere except under mpirun (the tests cli_sweep, cli_sweep_chain): Open MPI leaks
# at MPI_Finalize by design, from components it has already unloaded, which no
# suppression can name; cli_sweep still runs under AddressSanitizer and UBSan.
# libgomp needs no suppression (its thread pool is freed at exit).
set -u
src=$1
dir=$2
mkdir -p "$dir"
cmake -S "$src" -B "$dir" -DHDPSGD_SANITIZE=ON -DHDPSGD_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; echo "sanitize: cmake failed"; exit 1; }
if ! cmake --build "$dir" -j2 >"$dir/build.log" 2>&1; then
  grep -v -e '^\[' "$dir/build.log" | head -n 80
  echo "sanitize: the build failed (warnings are errors here: -DHDPSGD_WERROR=ON)"
  exit 1
fi
logs=$dir/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="detect_leaks=1:log_path=$logs/asan:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
export HDPSGD_TEST_QUICK=1 # cli_extremes: ode, sim, sde only (see there)
status=0
ctest --test-dir "$dir" -L 'unit|cli' -E '^cli_sweep(_chain)?$' --output-on-failure -j2 || status=1
if ctest --test-dir "$dir" -N -R '^cli_sweep(_chain)?$' | grep -q 'Total Tests: [12]'; then
  ASAN_OPTIONS="detect_leaks=0:log_path=$logs/asan-mpi" ctest --test-dir "$dir" -R '^cli_sweep(_chain)?$' \
    --output-on-failure || status=1
fi
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize: sanitizer reports:"
  for f in "$logs"/*; do echo "== $f"; head -n 60 "$f"; done
  status=1
fi
[[ $status -eq 0 ]] && echo "sanitize: unit and cli tests pass with no AddressSanitizer, LeakSanitizer or UBSan report"
exit $status
