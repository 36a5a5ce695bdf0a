#!/usr/bin/env bash
# Reliability, second round (issue 18): one regression case per failure found by the
# adversarial review, each of which failed before its fix.
#   reliability.sh HDPSGD
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0 fail=0
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
# run: exit status in $rc, stderr in err
run() { "$@" >out 2>err; rc=$?; }
# bad input: exit 2, the message contains $1, and no file left in ./o
refused() { # refused FRAGMENT COMMAND...
  local frag=$1; shift
  rm -rf o; mkdir o
  "$@" >out 2>err; local st=$?
  [[ $st -eq 2 ]] && grep -qF -- "$frag" err && [[ -z $(ls -A o) ]] || {
    echo "    exit $st; stderr:"; sed 's/^/      /' err | head -5; return 1; }
}

# ---- 1. log binning: eigenvalues exactly on bin edges (heap overflow before) ----
python3 -c "
s=213.70400347470368
v=[s*10.0**-k for k in range(9)]+[s*10.0**-k for k in range(1,9) for c in range(50)]
v+=[s*10.0**(-k-(f+1)/10.0) for k in range(8) for f in range(9)]
open('edges.txt','w').write(''.join(repr(x)+'\n' for x in v))"
run "$bin" ode --set data.spectrum=file --set data.spectrum_file=edges.txt --set ode.bins=auto --json j.json
check "bins=auto, eigenvalues on bin edges: exit 0" test $rc -eq 0
check "bins=auto, eigenvalues on bin edges: a finite final risk" \
  python3 -c "import json,math; v=json.load(open('j.json')); assert math.isfinite(v['final_risk']) and v['bins'] <= 2*64+1"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
