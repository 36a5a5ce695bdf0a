#!/usr/bin/env bash
# "No NaN is written" (docs/reliability.md): inputs that pass their ranges but overflow the
# families' numbers end in exit 4 with nothing written; quantities that do not apply are
# empty fields; an input that cannot give a finite answer is refused up front (exit 2).
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
nothing() { [[ -z $(ls -A "$work" | grep -v '^err$') ]]; }
si=(sim-index --set si.d=16 --set si.p=12 --set si.n=300 --set si.test_size=100 --runs 4)
rf=(rf --set rf.n=100 --set rf.p=200 --set rf.d=20 --set rf.test_size=50 --set rf.runs=2)
# case NAME STATUS MESSAGE ARGS...: exit status, message fragment, and no file on failure
case_() {
  local name=$1 want=$2 msg=$3; shift 3
  "$bin" "$@" -o "$work/o.csv" --json "$work/o.json" >/dev/null 2>"$work/err"
  local rc=$?
  check "$name: exit $want" test $rc -eq "$want"
  check "$name: message" grep -qF -- "$msg" "$work/err"
  if [[ $want -ne 0 ]]; then
    check "$name: nothing written" nothing
  else
    check "$name: no nan/inf in the CSV" bash -c "! grep -v '^#' '$work/o.csv' | grep -qiE '(^|,)[-+]?(nan|inf)'"
  fi
  rm -f "$work"/o.* "$work"/.o.*
}
case_ "si.C_a = 1e300" 4 "[si] the stage-2 problem overflowed" "${si[@]}" --set si.C_a=1e300
case_ "si.epsilon = 1e-300" 4 "[si] the stage-2 problem overflowed" "${si[@]}" --set si.epsilon=1e-300
case_ "si.he1 = 1e300" 4 "overflowed" "${si[@]}" --set si.he1=1e300
case_ "si.lambda = 1e300" 2 "[si] lambda = 1e300 is out of range" "${si[@]}" --set si.lambda=1e300
case_ "kl.sigma = 1e-300" 2 "[kl] sigma = 1e-300 is out of range" kl run --set kl.sigma=1e-300
case_ "dpgd.C = 1e100" 4 "the losses at step 1 overflowed" "${rf[@]}" --set dpgd.C=1e100
# no noise: the z columns do not apply and are empty (they were nan)
"$bin" "${si[@]}" --set si.epsilon=inf --set si.sigma_W=0 -o "$work/inf.csv" 2>"$work/err"
check "si.epsilon = inf: exit 0" test $? -eq 0
check "si.epsilon = inf: no nan" bash -c "! grep -v '^#' '$work/inf.csv' | grep -qi nan"
check "si.epsilon = inf: z_mean empty" python3 - "$work/inf.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
assert rows and all(r["z_mean"] == "" and r["z_var"] == "" for r in rows)
PY
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
