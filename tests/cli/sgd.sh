#!/usr/bin/env bash
# The [sgd] section (issue 33): its keys' bad values and combinations exit 2 naming the key
# (file:line or --set) and what is accepted, with no output; the defaults are today's
# algorithm (one pass, batch 1).
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
# refused FRAGMENT... -- COMMAND...: exit 2, every FRAGMENT in the message, no output folder
refused() {
  local frags=()
  while [[ $1 != -- ]]; do frags+=("$1"); shift; done; shift
  rm -rf out
  "$@" >stdout 2>err; local st=$?
  [[ $st -eq 2 && ! -e out ]] || { echo "    exit $st:"; sed 's/^/      /' err | head -3; return 1; }
  for f in "${frags[@]}"; do
    grep -qF -- "$f" err || { echo "    no '$f' in:"; sed 's/^/      /' err | head -3; return 1; }
  done
}
small=(--set data.d=20 --set data.n=200)

# ---- the keys' own ranges (the schema) ----
check "batch = 0: exit 2 naming the key and the range" \
  refused "[sgd] batch" ">= 1" -- "$bin" ode "${small[@]}" --set sgd.batch=0 -o out
check "batch = 2.5: not an integer" \
  refused "[sgd] batch" "integer" -- "$bin" ode "${small[@]}" --set sgd.batch=2.5 -o out
check "epochs = 0" refused "[sgd] epochs" ">= 1" -- "$bin" ode "${small[@]}" --set sgd.epochs=0 -o out
check "sampling = foo: the accepted names" \
  refused "[sgd] sampling" "one-pass | shuffle | poisson" -- "$bin" ode "${small[@]}" --set sgd.sampling=foo -o out
check "noise_multiplier < 0" \
  refused "[sgd] noise_multiplier" ">= 0" -- "$bin" ode "${small[@]}" --set sgd.noise_multiplier=-1 -o out
check "accountant = moments" \
  refused "[sgd] accountant" "pld | rdp" -- "$bin" ode "${small[@]}" --set sgd.accountant=moments -o out

# ---- combinations (finalize) ----
check "batch > n with one-pass: exit 2 naming batch and n" \
  refused "[sgd] batch" "n = 200" "one-pass" -- "$bin" ode "${small[@]}" --set sgd.batch=201 -o out
check "epochs > 1 with one-pass: exit 2 naming epochs and sampling" \
  refused "[sgd] epochs" "sgd.sampling" -- "$bin" ode "${small[@]}" --set sgd.epochs=2 -o out
check "noise_multiplier with one-pass: refused (its noise is the schedule's)" \
  refused "[sgd] noise_multiplier" "one-pass" -- "$bin" ode "${small[@]}" --set sgd.noise_multiplier=1 -o out
printf '[data]\nd = 20\nn = 200\n\n[sgd]\nbatch = 500\n' > big.ini
check "batch > n in a model file: file:line named" \
  refused "big.ini:6: [sgd] batch" -- "$bin" ode big.ini -o out
check "batch = n is accepted" "$bin" keys "${small[@]}" --set sgd.batch=200 >/dev/null

# ---- the defaults: today's algorithm ----
"$bin" keys > keys.txt
check "keys: [sgd] defaults batch 1, epochs 1, one-pass, noise_multiplier 0, pld" bash -c \
  "grep -q '^  batch  *= 1 ' keys.txt && grep -q '^  epochs  *= 1 ' keys.txt &&
   grep -q '^  sampling  *= one-pass ' keys.txt && grep -q '^  noise_multiplier  *= 0 ' keys.txt &&
   grep -q '^  accountant  *= pld ' keys.txt"
"$bin" config --set sgd.batch=4 > c.ini
check "config writes [sgd] and reads back" bash -c \
  "grep -qx 'batch = 4' c.ini && '$bin' config c.ini | cmp -s - c.ini"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
