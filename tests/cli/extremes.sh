#!/usr/bin/env bash
# Extreme but valid models (issue 8): each runs through ode, sim, sde (few runs) and
# validate, exits 0 and writes only finite numbers. The one documented exception:
# validate at d = 1 may say FAIL (exit 1) since homogenization is a high-dimensional
# limit. Student-t label noise is run at the extreme clipping constants, where the
# clipping factors are quadratures.
# HDPSGD_TEST_QUICK=1 (tests/sanitize.sh sets it: everything runs 3-5 times slower there)
# keeps the assertions on ode, sim and sde with 5 runs and leaves validate out.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
# every number of the data rows and of the JSON is finite (JSON writes non-finite as null)
finite() { # finite CSV [JSON]
  python3 - "$@" <<'PY'
import json, math, sys
rows = [l for l in open(sys.argv[1]) if not l.startswith('#')][1:]
assert rows, "no data rows"
for r in rows:
    for x in r.strip().split(','):
        assert math.isfinite(float(x)), r
if len(sys.argv) > 2:
    d = json.load(open(sys.argv[2]))
    for k, v in d.items():
        assert v is not None, k
        if isinstance(v, float):
            assert math.isfinite(v), k
PY
}

quick=${HDPSGD_TEST_QUICK:-0}
runs=20; [[ $quick == 1 ]] && runs=5
cases=(
  "clip.c=1e-6"
  "clip.c=1e6"
  "data.tau2=0"
  "data.d=1"
  "data.gamma=10"
  "privacy.rho=1e-3"
  "privacy.rho=1e3"
  "clip.c=1e-6 data.noise=student"
  "clip.c=1e6 data.noise=student"
)
for c in "${cases[@]}"; do
  sets=()
  for kv in $c; do sets+=(--set "$kv"); done
  "$bin" ode "${sets[@]}" -o "$work/o.csv" --json "$work/o.json" 2>"$work/err"
  check "$c: ode exits 0" test $? -eq 0
  check "$c: ode output finite" finite "$work/o.csv" "$work/o.json"
  for cmd in sim sde; do
    "$bin" $cmd "${sets[@]}" --runs $runs -o "$work/$cmd.csv" --json "$work/$cmd.json" 2>"$work/err"
    check "$c: $cmd exits 0" test $? -eq 0
    check "$c: $cmd output finite" finite "$work/$cmd.csv" "$work/$cmd.json"
    check "$c: $cmd: no run diverged" python3 -c "import json; assert json.load(open('$work/$cmd.json'))['diverged_runs'] == 0"
  done
  # (validate on the Gaussian-noise cases: the Student-t ones repeat the slow quadrature ODE)
  [[ $c == *student* || $quick == 1 ]] && continue
  "$bin" validate "${sets[@]}" --runs 40 --data "$work/v" --json "$work/v.json" >"$work/out" 2>"$work/err"
  rc=$?
  if [[ $c == data.d=1 ]]; then
    check "$c: validate exits 0 or 1 (d = 1: homogenization may fail)" test $rc -eq 0 -o $rc -eq 1
  else
    check "$c: validate exits 0 (status $rc)" test $rc -eq 0
  fi
  check "$c: validate printed a verdict" grep -q '^verdict: ' "$work/out"
  check "$c: validate JSON and ODE data finite" finite "$work/v.ode.csv" "$work/v.json"
  check "$c: validate Monte Carlo data finite" finite "$work/v.sim.csv"
  check "$c: validate SDE data finite" finite "$work/v.sde.csv"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
