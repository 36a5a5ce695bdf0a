#!/usr/bin/env bash
# Command-line checks of `hdpsgd accountant` (docs/theory.md §6.5): TensorFlow Privacy's MNIST
# table by the classic conversion, JSON keys, PLD <= RDP <= classic, calibration, bad input.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...

q=$(python3 -c 'print(256/60000)')
"$bin" accountant --sample-rate "$q" --noise-multiplier 1.12 --epochs 60 --json "$work/a.json" >"$work/out" 2>&1
check "accountant exits 0" test $? -eq 0
for key in epsilon_pld epsilon_rdp epsilon_rdp_classic noise_multiplier sample_rate steps delta epsilon; do
  check "JSON has $key" grep -q "\"$key\":" "$work/a.json"
done
check "TF Privacy's table: sigma 1.12, 60 epochs -> 2.92 (classic); 14063 steps; PLD <= RDP <= classic" \
  python3 - "$work/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['steps'] == 14063, d['steps']
assert abs(d['epsilon_rdp_classic'] - 2.92) <= 0.02, d
assert d['epsilon_pld'] <= d['epsilon_rdp'] <= d['epsilon_rdp_classic'], d
assert d['epsilon'] == d['epsilon_pld'] and d['accountant'] == 'pld'
assert d['delta'] == 1e-5
PY
check "the table names the three accountants" grep -q 'RDP classic' "$work/out"

"$bin" accountant --sample-rate 0.01 --epsilon 1.5 --steps 2000 --accountant rdp --json "$work/c.json" >/dev/null 2>&1
check "calibration exits 0" test $? -eq 0
check "calibrated sigma meets the target within 1e-3 by RDP" python3 - "$work/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['accountant'] == 'rdp' and d['target_epsilon'] == 1.5
assert d['epsilon'] == d['epsilon_rdp'] and 1.5 - 1e-3 <= d['epsilon_rdp'] <= 1.5, d
PY

bad() { # bad NAME WHAT-THE-MESSAGE-SAYS ARGS...
  local name=$1 msg=$2; shift 2
  "$bin" accountant "$@" --json "$work/bad.json" >"$work/bout" 2>"$work/berr"
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: says '$msg'" grep -q -- "$msg" "$work/berr"
  check "$name: nothing written" test ! -e "$work/bad.json"
}
bad "q > 1" "--sample-rate 1.5" --sample-rate 1.5 --noise-multiplier 1 --steps 10
bad "q = 0" "--sample-rate 0" --sample-rate 0 --noise-multiplier 1 --steps 10
bad "sigma < 0" "--noise-multiplier -1" --sample-rate 0.1 --noise-multiplier -1 --steps 10
bad "steps = 0" "0 steps" --sample-rate 0.1 --noise-multiplier 1 --steps 0
bad "delta = 1" "--delta 1" --sample-rate 0.1 --noise-multiplier 1 --steps 10 --delta 1
bad "no steps" "--steps T and --epochs E" --sample-rate 0.1 --noise-multiplier 1
bad "sigma and epsilon" "exactly one of --noise-multiplier" --sample-rate 0.1 --noise-multiplier 1 --epsilon 1 --steps 10
bad "unknown accountant" "pld or rdp" --sample-rate 0.1 --noise-multiplier 1 --steps 10 --accountant prv
bad "unreachable target" "no noise multiplier up to" --sample-rate 0.5 --epsilon 1e-6 --steps 100000 --accountant rdp
# a loss range past 2^63 grid points: refused as a smaller one is (the count overflowed, and
# sigma = 1e-10 gave epsilon = 0.1 where it is about 5e19)
for s in 1e-10 1e-300; do
  bad "sigma = $s: the PLD grid" "grid points of width" --sample-rate 0.01 --noise-multiplier $s --steps 10
done

echo "$pass passed, $fail failed"
((fail == 0))
