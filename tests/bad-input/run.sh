#!/usr/bin/env bash
# Runs every model in this folder through `hdpsgd ode` and checks: exit status 2,
# the message fragment of the file's first line ('; expect: FRAGMENT'), and no
# output file created. Files named *.set hold command-line arguments (--set ...,
# a model path, options) instead of a model; when they name an output (-o, --json)
# the runner adds none of its own.
# The cases in `also` run through `hdpsgd sim` and `hdpsgd validate` too, with
# --runs 10000000: a model error must stop them before any computation or output
# (a computation that started would not end, or fail otherwise, within the timeout).
set -u
bin=$1
dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
also=(did-you-mean.ini unknown-section.ini duplicate-key.ini nan.ini zero-c.ini negative-eigenvalue.ini
      increasing-table.ini missing-spectrum.ini spectrum-device.ini set-unknown.set
      output-dir-missing.set missing-model.set feature-norm-negative.ini noise-file-mean.ini)
before=$(ls -A "$dir")
fail=0 count=0
run_case() { # run_case COMMAND FILE
  local cmd=$1 f=$2 name args=() outs=()
  name=$(basename "$f")
  if [[ $f == *.set ]]; then
    mapfile -t args < <(tail -n +2 "$f")
  else
    args=("$name")
  fi
  if [[ " ${args[*]} " != *" -o "* && " ${args[*]} " != *" --json "* ]]; then
    case $cmd in
      ode | sim) outs=(-o "$work/out.csv" --json "$work/out.json") ;;
      validate) outs=(--figure "$work/out.png" --json "$work/out.json") ;;
    esac
  fi
  [[ $cmd != ode ]] && outs+=(--runs 10000000)
  (cd "$dir" && timeout 60 "$bin" "$cmd" "${args[@]}" "${outs[@]}") >"$work/stdout" 2>"$work/stderr"
  local rc=$? msg expect
  msg=$(cat "$work/stderr")
  expect=$(head -n1 "$f" | sed -n 's/^; expect: //p')
  count=$((count + 1))
  if [[ $rc -ne 2 ]]; then
    echo "FAIL $cmd $name: exit status $rc, expected 2 ($msg)"; fail=$((fail + 1))
  elif [[ -z $expect || $msg != *"$expect"* ]]; then
    echo "FAIL $cmd $name: message '$msg' lacks '$expect'"; fail=$((fail + 1))
  elif [[ -n $(ls -A "$work" | grep -v '^std') ]]; then
    echo "FAIL $cmd $name: an output file was created: $(ls -A "$work")"; fail=$((fail + 1))
  else
    echo "ok   $cmd $name: $msg"
  fi
  rm -f "$work"/out.* "$work"/.out.*
}
for f in "$dir"/*.ini "$dir"/*.set; do
  [[ -e $f ]] || continue
  run_case ode "$f"
  if [[ " ${also[*]} " == *" $(basename "$f") "* ]]; then
    run_case sim "$f"
    run_case validate "$f"
  fi
done
if [[ $(ls -A "$dir") != "$before" ]]; then
  echo "FAIL something was written into $dir"; fail=$((fail + 1))
fi
echo "$((count - fail)) passed, $fail failed"
[[ $fail -eq 0 && $count -gt 0 ]]
