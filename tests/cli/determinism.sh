#!/usr/bin/env bash
# Determinism (issue 8): the same command with the same seed writes byte-identical CSVs
# run after run and for any number of threads (1, 2, 3 and the default of one per core),
# and for every SIMD kernel of the Gaussian sampler (HDPSGD_SIMD).
#   determinism.sh BIN            sim, sde and validate's data files
#   determinism.sh BIN rf         `hdpsgd rf` (exit 77, "skipped", while it does not exist)
set -u
bin=$1
what=${2:-mc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
same_for_threads() { # same_for_threads NAME "SUFFIXES" COMMAND... (COMMAND ends with -o or --data)
  local name=$1 suffixes=$2 t f; shift 2
  for t in 1 1 2 3 0; do
    "$@" "$work/$name-$t" --threads $t >/dev/null 2>"$work/err" || { echo "$name --threads $t: $(cat "$work/err")"; return 1; }
    for f in $suffixes; do
      [[ $f == - ]] && f=
      [[ -e $work/$name-first$f ]] || cp "$work/$name-$t$f" "$work/$name-first$f"
      cmp -s "$work/$name-first$f" "$work/$name-$t$f" || { echo "$name$f: --threads $t differs"; return 1; }
    done
  done
}

if [[ $what == rf ]]; then
  if ! "$bin" help rf >/dev/null 2>&1; then
    echo "skip: this hdpsgd has no 'rf' command yet"
    exit 77
  fi
  rf=(--set rf.d=10 --set rf.n=60 --set rf.p=80 --set rf.test_size=40 --set rf.records=10 --runs 4 --seed 5)
  check "rf: identical bytes, runs and --threads 1, 1, 2, 3, 0" same_for_threads rf - "$bin" rf "${rf[@]}" -o
  "$bin" rf "${rf[@]}" --seed 6 -o "$work/rf-seed6" >/dev/null 2>&1
  check "rf: another seed gives other numbers" bash -c "! cmp -s <(grep -v '^#' '$work/rf-seed6') <(grep -v '^#' '$work/rf-1')"
else
  small=(--set data.d=60 --set data.gamma=0.2 --set ode.points=21 --runs 9 --seed 11)
  for cmd in sim sde; do
    check "$cmd: identical bytes, runs and --threads 1, 1, 2, 3, 0" same_for_threads $cmd - "$bin" $cmd "${small[@]}" -o
  done
  # Student-t label noise: the t sampler and the SDE's Chebyshev tables
  for cmd in sim sde; do
    check "$cmd, Student-t noise: identical bytes for any --threads" \
      same_for_threads $cmd-t - "$bin" $cmd "${small[@]}" --set data.noise=student -o
  done
  check "validate: identical .ode.csv, .sim.csv, .sde.csv for any --threads" \
    same_for_threads validate ".ode.csv .sim.csv .sde.csv" "$bin" validate "${small[@]}" --data
  # the Gaussian block stream's SIMD kernels (rng.h): the same bytes from each (a kernel the
  # CPU lacks falls back to another, which must give the same bytes too)
  same_for_kernels() { # same_for_kernels CMD
    local k
    for k in generic avx2 avx512; do
      HDPSGD_SIMD=$k "$bin" "$1" "${small[@]}" -o "$work/$1-k-$k" >/dev/null 2>"$work/err" ||
        { echo "$1 HDPSGD_SIMD=$k: $(cat "$work/err")"; return 1; }
      cmp -s "$work/$1-k-$k" "$work/$1-1" || { echo "$1: HDPSGD_SIMD=$k differs"; return 1; }
    done
  }
  for cmd in sim sde; do
    check "$cmd: identical bytes with HDPSGD_SIMD=generic, avx2, avx512" same_for_kernels $cmd
  done
  "$bin" sim "${small[@]}" --seed 12 -o "$work/seed12" >/dev/null 2>&1
  check "sim: another seed gives other numbers" bash -c "! cmp -s <(grep -v '^#' '$work/seed12') <(grep -v '^#' '$work/sim-1')"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
