#!/usr/bin/env bash
# Runs every model in this folder through `hdpsgd ode` and checks: exit status 2,
# the message fragment of the file's first line ('; expect: FRAGMENT'), and no
# output file created. Files named *.set hold --set arguments instead of a model.
set -u
bin=$1
dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 count=0
for f in "$dir"/*.ini "$dir"/*.set; do
  [[ -e $f ]] || continue
  count=$((count + 1))
  expect=$(head -n1 "$f" | sed -n 's/^; expect: //p')
  name=$(basename "$f")
  if [[ $f == *.set ]]; then
    mapfile -t args < <(tail -n +2 "$f")
    (cd "$dir" && "$bin" ode "${args[@]}" -o "$work/out.csv" --json "$work/out.json") >"$work/stdout" 2>"$work/stderr"
  else
    (cd "$dir" && "$bin" ode "$name" -o "$work/out.csv" --json "$work/out.json") >"$work/stdout" 2>"$work/stderr"
  fi
  rc=$?
  msg=$(cat "$work/stderr")
  if [[ $rc -ne 2 ]]; then
    echo "FAIL $name: exit status $rc, expected 2 ($msg)"; fail=$((fail + 1))
  elif [[ -z $expect || $msg != *"$expect"* ]]; then
    echo "FAIL $name: message '$msg' lacks '$expect'"; fail=$((fail + 1))
  elif [[ -e $work/out.csv || -e $work/out.json ]] || ls "$work" | grep -q tmp; then
    echo "FAIL $name: an output file was created"; fail=$((fail + 1))
  else
    echo "ok   $name: $msg"
  fi
  rm -f "$work"/out.*
done
echo "$((count - fail)) passed, $fail failed"
[[ $fail -eq 0 && $count -gt 0 ]]
