#!/usr/bin/env bash
# Command-line checks of `hdpsgd kl bound|init|run` (Ye et al., docs/theory.md §8): JSON keys and
# values, Table 1 = eq. 7, the settled constant (seed's values are twice ours), Lemma C.3 by
# Monte Carlo, Monte Carlo KL = exact OU KL for the squared loss, the same bytes for any
# --threads, figures, and exit status 2 with a message naming the key and no output on bad input.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
py() { python3 - "$@"; }
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

# ---- bound ----
"$bin" kl bound --json "$work/b.json" -o "$work/b.csv" >"$work/b.out" 2>"$work/b.err"
check "kl bound exits 0 on the default model" test $? -eq 0
for key in B B_table kl_bound kl_bound_seed pinsker_delta sigma2_for_budget T_opt R_lemma63 beta_1; do
  check "bound JSON has $key" grep -q "\"$key\":" "$work/b.json"
done
check "bound: Table 1 = eq. 7, He default B = m (L-1+d/m) = 1312, seed's bound twice ours" py "$work/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['B'] == 1312 and abs(d['B_table'] - 1312) < 1e-9, d
assert abs(d['kl_bound'] - d['B'] * d['T'] / (d['n']**2 * d['sigma']**2)) < 1e-12 * d['kl_bound']
assert abs(d['kl_bound_seed'] - 2 * d['kl_bound']) < 1e-12 * d['kl_bound']
assert abs(d['sigma2_for_budget_seed'] - 2 * d['sigma2_for_budget']) < 1e-12 * d['sigma2_for_budget']
PY
check "bound CSV: header and depth/width rows, B = Btable" py "$work/b.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
assert sum(r['axis'] == 'depth' for r in rows) == 15 and sum(r['axis'] == 'width' for r in rows) == 7
for r in rows:
    for s in ('lecun', 'he', 'ntk', 'xavier'):
        b, t = float(r['B_' + s]), float(r['Btable_' + s])
        assert abs(b - t) <= 1e-9 * b, (r, s)
        assert abs(float(r['klseed_' + s]) - 2 * float(r['kl_' + s])) <= 1e-9 * float(r['kl_' + s])
PY
"$bin" kl bound --set kl.init=lecun --set kl.depth=10 --set kl.width=1024 --set kl.d=3072 \
  --set kl.delta=0.1 --json "$work/b2.json" >/dev/null 2>&1
check "bound: LeCun L=10 m=1024 d=3072: B = o m (L-1+d/m)/2^(L-1); delta target" py "$work/b2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
B = 1024 * (9 + 3072 / 1024) / 2**9
assert abs(d['B'] - B) < 1e-12 * B, d['B']
assert abs(d['budget_for_delta'] - 0.02) < 1e-15
PY
if [ $have_gnuplot = 1 ]; then
  "$bin" kl bound --figure "$work/bound.png" >/dev/null 2>&1
  check "bound --figure writes the PNG and its data" test -s "$work/bound.png" -a -s "$work/bound.csv"
fi

# ---- init ----
"$bin" kl init --set kl.width=24 --set kl.d=10 --depths 2,4 --runs 600 -o "$work/i.csv" \
  --json "$work/i.json" >"$work/i.out" 2>&1
check "kl init exits 0 (Lemma C.3 within 4 stderr)" test $? -eq 0
check "init says PASS" grep -q '^PASS: 8 of 8' "$work/i.out"
check "init JSON has he_L4_z and pass" py "$work/i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['pass'] is True and abs(d['he_L4_z']) <= 4 and d['runs'] == 600
PY
check "init CSV: per-layer rows (layer 0 = the sum)" py "$work/i.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
assert len(rows) == 4 * (3 + 5), len(rows)
for r in rows:
    if r['layer'] == '0':
        continue
PY

# ---- run ----
small="--set kl.width=32 --set kl.depth=3 --set kl.d=8 --set kl.n=20 --set kl.epochs=30 --set kl.inits=3 --set kl.runs=64"
"$bin" kl run $small --set kl.loss=squared --set kl.eta=0.01 --set kl.sigma=0.1 --schemes lecun,he \
  --threads 2 -o "$work/r2.csv" --json "$work/r.json" >"$work/r.out" 2>&1
check "kl run (squared) exits 0" test $? -eq 0
"$bin" kl run $small --set kl.loss=squared --set kl.eta=0.01 --set kl.sigma=0.1 --schemes lecun,he \
  --threads 1 -o "$work/r1.csv" >/dev/null 2>&1
check "run: the same CSV for --threads 1 and 2" cmp -s "$work/r1.csv" "$work/r2.csv"
check "run: Monte Carlo = exact OU KL within 4 stderr; last iterate <= all iterates" py "$work/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['c'] == 4
for s in ('lecun', 'he'):
    assert abs(d[s + '_z_exact']) <= 4, (s, d[s + '_z_exact'])
    assert d[s + '_kl_last_iterate'] <= d[s + '_kl_exact'] * (1 + 1e-9)
    assert abs(d[s + '_kl_seed_constant'] - 2 * d[s + '_kl']) <= 1e-12 * d[s + '_kl']
    assert 0 < d[s + '_pinsker_delta'] <= 1
PY
check "run CSV columns" bash -c "grep -v '^#' '$work/r2.csv' | head -1 | grep -q '^epoch,T,lecun_kl,lecun_kl_se,lecun_kl_sd,lecun_kl_max,lecun_kl_exact,lecun_kl_final,lecun_loss,lecun_bound,lecun_bound_seed,lecun_lemma32_bound,lecun_lemma32_exp_term,lecun_lemma32_log10_bound,he_kl'"
check "run CSV has epochs 0..30" test "$(grep -v '^#' "$work/r2.csv" | wc -l)" -eq 32
# the real network (kl.network = relu): its columns beside the linearised ones, which stay
# the same bytes; the same CSV for any --threads
"$bin" kl run $small --set kl.network=relu --set kl.relu_runs=3 --schemes lecun,he --threads 2 \
  -o "$work/rr2.csv" --json "$work/rr.json" >"$work/rr.out" 2>&1
check "kl run kl.network=relu exits 0" test $? -eq 0
"$bin" kl run $small --set kl.network=relu --set kl.relu_runs=3 --schemes lecun,he --threads 1 \
  -o "$work/rr1.csv" >/dev/null 2>&1
check "relu: the same CSV for --threads 1 and 2" cmp -s "$work/rr1.csv" "$work/rr2.csv"
"$bin" kl run $small --schemes lecun,he -o "$work/rl.csv" >/dev/null 2>&1
check "relu: columns <s>_relu_*, the linearised columns unchanged, the same loss at epoch 0" py "$work/rr2.csv" "$work/rl.csv" "$work/rr.json" <<'PY'
import csv, json, sys
rd = lambda p: list(csv.DictReader(l for l in open(p) if not l.startswith('#')))
r, l, d = rd(sys.argv[1]), rd(sys.argv[2]), json.load(open(sys.argv[3]))
assert len(r) == len(l) == 31
for s in ('lecun', 'he'):
    for c in ('relu_kl', 'relu_kl_se', 'relu_kl_sd', 'relu_kl_max', 'relu_loss'):
        assert s + '_' + c in r[0], c
    for a, b in zip(r, l):
        for c in b:
            assert a[c] == b[c], (c, a[c], b[c])
    assert r[0][s + '_relu_loss'] == r[0][s + '_loss'] and float(r[0][s + '_relu_kl']) == 0
    k = [float(x[s + '_relu_kl']) for x in r]
    assert all(b > a for a, b in zip(k, k[1:])), k
    assert abs(d[s + '_relu_kl'] - k[-1]) <= 1e-9 * k[-1] and d['network'] == 'relu' and d['relu_runs'] == 3
PY
check "relu: the table of the real network is printed" grep -q "The real ReLU network" "$work/rr.out"
if [ $have_gnuplot = 1 ]; then
  "$bin" kl run $small --set kl.network=relu --vs width --widths 8,16 --set kl.epochs=10 --schemes he \
    --figure "$work/rw.png" >/dev/null 2>&1
  check "relu --vs width --figure writes the PNG and relu columns" bash -c "test -s '$work/rw.png' && grep -q 'he_relu_kl_early,he_relu_kl_early_se,he_relu_kl,he_relu_kl_se' '$work/rw.csv'"
  "$bin" plot "$work/rr2.csv" -o "$work/rplot.png" >/dev/null 2>&1
  check "hdpsgd plot draws the relu CSV (schemes without _relu)" test -s "$work/rplot.png"
fi
if [ $have_gnuplot = 1 ]; then
  "$bin" kl run $small --vs depth --depths 2,3 --set kl.epochs=10 --figure "$work/depth.png" >/dev/null 2>&1
  check "run --vs depth --figure writes the PNG and its data" test -s "$work/depth.png" -a -s "$work/depth.csv"
  check "depth CSV has 2 rows and all schemes" bash -c "grep -v '^#' '$work/depth.csv' | wc -l | grep -q '^3$' && grep -q 'xavier_kl_early' '$work/depth.csv'"
  "$bin" kl run $small --vs width --widths 8,16 --set kl.epochs=10 --schemes he --figure "$work/width.png" >/dev/null 2>&1
  check "run --vs width --figure writes the PNG" test -s "$work/width.png"
  "$bin" kl run $small --set kl.loss=squared --set kl.eta=0.01 --figure "$work/ep.png" >/dev/null 2>&1
  check "run --vs epochs --figure (squared) writes the PNG" test -s "$work/ep.png"
fi

# ---- bad input: exit 2, the key named, no output ----
expect_bad() { # expect_bad NAME FRAGMENT ARGS...
  local name=$1 frag=$2; shift 2
  rm -f "$work/bad.csv" "$work/bad.json"
  "$bin" kl "$@" -o "$work/bad.csv" --json "$work/bad.json" >"$work/bad.out" 2>"$work/bad.err"
  local rc=$?
  check "$name: exit 2" test $rc -eq 2
  check "$name: says '$frag'" grep -qF -- "$frag" "$work/bad.err"
  check "$name: no output" test ! -e "$work/bad.csv" -a ! -e "$work/bad.json"
}
expect_bad "depth 1" "[kl] depth = 1 is out of range" bound --set kl.depth=1
expect_bad "unknown init" "[kl] init = 'glorot' is not accepted" run --set kl.init=glorot
expect_bad "negative sigma" "[kl] sigma = -1 is out of range" run --set kl.sigma=-1
expect_bad "n o too large" "[kl] n: n o = 3000 x 2" run --set kl.n=3000 --set kl.o=2
expect_bad "width too large" "[kl] width: width 100000" init --set kl.width=100000
expect_bad "unknown key" "unknown key 'widht' in [kl]" run --set kl.widht=3
expect_bad "unknown network" "[kl] network = 'deep' is not accepted" run --set kl.network=deep
expect_bad "no subcommand" "name the subcommand" 
expect_bad "bad subcommand" "must be bound, init or run" train
expect_bad "bad scheme" "'glorot' is not a scheme" run --schemes he,glorot
expect_bad "bad depths" "--depths '2-5'" run --vs depth --depths 2-5
expect_bad "depth out of range" "1 is out of range" init --depths 1,2
expect_bad "bad --vs" "--vs 'time'" run --vs time
expect_bad "bad --runs" "--runs 1" run --runs 1
expect_bad "--vs outside run" "--vs belongs to kl run" bound --vs depth
"$bin" kl run --figure "$work/nowhere/x.png" >/dev/null 2>"$work/bad.err"
check "missing folder: exit 2 before running" test $? -eq 2
check "missing folder: says so" grep -q "does not exist" "$work/bad.err"

# squared loss past the stability limit: exit 4, names [kl] eta, no output
rm -f "$work/bad.csv"
"$bin" kl run $small --set kl.loss=squared --set kl.eta=50 -o "$work/bad.csv" >/dev/null 2>"$work/bad.err"
check "unstable squared loss: exit 4" test $? -eq 4
check "unstable squared loss: names [kl] eta" grep -qF "[kl] eta = 50" "$work/bad.err"
check "unstable squared loss: no output" test ! -e "$work/bad.csv"

check "help lists kl" bash -c "'$bin' --help | grep -q '^  kl '"
check "help kl documents the constant" bash -c "'$bin' help kl | grep -q 'c = 4'"

echo "kl: $pass passed, $fail failed"
[ $fail -eq 0 ]
