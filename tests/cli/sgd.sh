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
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
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

# ---- what each command does with [sgd] ----
check "ode with sampling = poisson: exit 2 naming sampling and epochs, no output" \
  refused "[sgd] sampling" "epochs = 3" "not built" -- "$bin" ode "${small[@]}" --set data.train_size=200 --set sgd.sampling=poisson --set sgd.epochs=3 -o out
check "ode with sampling = shuffle (one epoch): refused too" \
  refused "[sgd] sampling" "one pass only" -- "$bin" ode "${small[@]}" --set data.train_size=200 --set sgd.sampling=shuffle -o out
check "validate with sampling = poisson: refused" \
  refused "[sgd] sampling" -- "$bin" validate "${small[@]}" --set data.train_size=200 --set sgd.sampling=poisson --runs 2 -d out
check "schedule --optimize with sampling = poisson: refused" \
  refused "[sgd] sampling" -- "$bin" schedule --optimize "${small[@]}" --set data.train_size=200 --set sgd.sampling=poisson -o out
check "sde with batch > 1: refused naming batch (the SDE is batch 1's)" \
  refused "[sgd] batch" "SDE" -- "$bin" sde "${small[@]}" --set sgd.batch=4 --runs 2 -o out
check "ode.solver = dop853 with batch > 1: refused naming the solver" \
  refused "[ode] solver" "sgd.batch = 4" -- "$bin" ode "${small[@]}" --set sgd.batch=4 --set ode.solver=dop853 -o out

# batched one pass: the ODE (CVODE), the Monte Carlo (K = ceil(n/B) steps, the accountant on
# them at most rho), identical bytes for any thread count, validate without its SDE side
"$bin" ode "${small[@]}" --set sgd.batch=16 --json ode.json -o ode.csv 2>/dev/null
check "ode at batch 16: solved by cvode" grep -q '"solver": "cvode"' ode.json
"$bin" sim "${small[@]}" --set sgd.batch=16 --runs 8 --threads 1 --json sim1.json -o sim1.csv 2>/dev/null
"$bin" sim "${small[@]}" --set sgd.batch=16 --runs 8 --threads 2 --json sim2.json -o sim2.csv 2>/dev/null
check "sim at batch 16: identical CSV for 1 and 2 threads" cmp -s sim1.csv sim2.csv
check "sim at batch 16: 13 steps, rho_accounted in (0.95 rho, rho]" python3 -c "
import json; d = json.load(open('sim1.json'))
assert d['steps'] == 13, d['steps']
assert 0.95 * 0.5 < d['rho_accounted'] <= 0.5, d['rho_accounted']"
"$bin" validate "${small[@]}" --set sgd.batch=4 --runs 20 --json val.json -d val >/dev/null 2>err
check "validate at batch 4: the SDE side skipped with a note" bash -c \
  "grep -q 'SDE side is skipped' err && [[ ! -e val.sde.csv ]] && grep -q '\"sim_pass\"' val.json"

"$bin" ode "${small[@]}" --set sgd.batch=20 -o coarse.csv 2>coarse.err
check "ode with fewer than 32 batched steps: a warning naming the batch, the output written" \
  bash -c "grep -q 'sgd.batch = 20 makes 10 steps' coarse.err && [[ -s coarse.csv ]]"

# ---- schedule --optimize --tune-batch ----
"$bin" schedule --optimize --tune-batch --family output,inverse-time --set data.d=20 --set data.n=640 \
  --json tb.json -o tb.tab >tb.txt 2>/dev/null
check "--tune-batch: B = 1, 2, ..., n/32 designed, the best kept, in the accountants' terms" python3 -c "
import json, math
d = json.load(open('tb.json'))
assert d['batch_candidates'] == [1, 2, 4, 8, 16], d['batch_candidates']
r = d['batch_final_risks']; B = d['best_batch']
assert d['best_final_risk'] == min(r) == r[d['batch_candidates'].index(B)]
assert d['model']['sgd']['batch'] == B
assert d['sample_rate'] == B / 640 and d['steps'] == math.ceil(640 / B)
assert 0 < d['noise_multiplier_min'] <= d['noise_multiplier_median'] <= d['noise_multiplier_max']
assert d['rho_accounted'] <= d['rho'] * (1 + 1e-12)
assert d['epsilon_pld'] <= d['epsilon_rdp'] <= d['epsilon_rdp_classic']
assert abs(d['epsilon_pld'] - d['epsilon']) <= 1e-3 * d['epsilon'], (d['epsilon_pld'], d['epsilon'])
assert d['poisson_noise_multiplier'] > 0"
check "--tune-batch: the rerun line sets the batch" grep -q -- "--set sgd.batch=" tb.txt
check "--tune-batch with --refine: exit 2" \
  refused "--tune-batch with --refine" -- "$bin" schedule --optimize --tune-batch --refine --family pl "${small[@]}" -o out
check "--tune-batch with sampling = poisson: exit 2 naming the key" \
  refused "[sgd] sampling" -- "$bin" schedule --optimize --tune-batch "${small[@]}" --set data.train_size=200 --set sgd.sampling=poisson -o out

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
