#!/usr/bin/env bash
# Batched one pass (issue 33, docs/theory.md §3.11) at small d, in seconds: `hdpsgd validate`
# passes at B = 1, 4, 16 on the default model (d = 60, n = 600) and an isotropic one
# (isotropic-output.ini at d = 100, n = 1000), 400 runs, the model's tolerances; the ODE of
# B > 1 is the batched one (cvode), and its final risk differs from B = 1's.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
for case in "default.ini 60" "isotropic-output.ini 100"; do
  read -r model d <<<"$case"
  for B in 1 4 16; do
    j="$work/${model%.ini}-$B.json"
    "$bin" validate "$src/models/$model" --set data.d="$d" --set sgd.batch="$B" --runs 400 \
      --no-sde --threads 2 --json "$j" >/dev/null 2>&1
    check "validate $model at d = $d, batch $B: pass" python3 -c "
import json, sys
v = json.load(open('$j'))
print('    max rel dev %.4f, max z %.2f' % (v['max_rel_dev'], v['max_z']))
sys.exit(0 if v['pass'] and v['sim_pass'] else 1)"
  done
  check "$model: the ODE at batch 16 is not batch 1's" python3 -c "
import json
a = json.load(open('$work/${model%.ini}-1.json'))['ode_final_risk']
b = json.load(open('$work/${model%.ini}-16.json'))['ode_final_risk']
assert a != b, (a, b)"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
