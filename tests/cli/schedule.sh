#!/usr/bin/env bash
# Command-line checks of `hdpsgd schedule --optimize` and `hdpsgd rates`
# (docs/theory.md §3, §5, §6): JSON keys, the written table accepted unchanged by `ode`, `sim` and
# `privacy` (rho_acc = rho, risk within 1 % of the winner), the figures and their data, and exit
# status 2 with no output file on every bad input. Small isotropic models keep it to a few seconds.
set -u
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
py() { python3 - "$@"; }
model=(--set data.spectrum=isotropic --set data.d=200 --set data.gamma=0.01 --set privacy.rho=1)
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

# ---- schedule --optimize ----
"$bin" schedule "${model[@]}" --optimize -o "$work/best.tab" --json "$work/s.json" \
  --figure "$work/s.png" >"$work/s.out" 2>"$work/s.err"
check "schedule --optimize exits 0" test $? -eq 0
for key in output_final_risk linear_noise_final_risk inverse_time_final_risk pl_final_risk output_eta0 \
           linear_noise_eta0 inverse_time_c1 inverse_time_a inverse_time_c2 inverse_time_c3 pl_eta pl_knots \
           best_family best_final_risk table_final_risk epsilon_cks delta ode_solves; do
  check "JSON has $key" grep -q "\"$key\":" "$work/s.json"
done
check "optimal or pl wins, beating output and linear-noise" py "$work/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['best_family'] in ('inverse-time', 'pl'), d['best_family']
assert d['best_final_risk'] < min(d['output_final_risk'], d['linear_noise_final_risk'])
assert abs(d['table_final_risk'] / d['best_final_risk'] - 1) < 0.01
assert d['ode_solves'] > 0 and d['delta'] == 1e-5 and d['epsilon'] == d['epsilon_cks']
PY
check "progress on stderr: solves done of an estimate, the time left" grep -qE '[0-9]+ of ~[0-9]+ ODE solves, ~[0-9.]+ (s|min|h) left, best final risk' "$work/s.err"
check "table file has a # header" bash -c "head -n1 '$work/best.tab' | grep -q '^# ; hdpsgd'"
check "prints the command line" grep -q -- "--set schedule.kind=table --set schedule.file=$work/best.tab" "$work/s.out"
tab=(--set schedule.kind=table --set "schedule.file=$work/best.tab")
# the command line it prints is one shell word per argument, whole: pasted, it runs on the table
# (it was printed unquoted, so a name with a space, a quote or $(...) broke or ran it, and cut at
# 4096 bytes, also in the table's '# ; use:' line, where a newline in the name split the header)
odd="$work/a b'\$(touch ran).tab"
many=(); for i in $(seq 1 250); do many+=(--set data.d=200); done
"$bin" schedule "${model[@]}" "${many[@]}" --optimize --family output -o "$odd" >"$work/q.out" 2>/dev/null
cmdline=$(sed -n 's/^  hdpsgd sim /sim /p' "$work/q.out")
check "odd table name: the printed command is whole (over 4096 bytes)" test "${#cmdline}" -gt 4096
(cd "$work" && eval "set -- $cmdline" && "$bin" "$@" --runs 2 --json "$work/q.json" -o /dev/null >/dev/null 2>&1)
check "odd table name: the printed command runs sim on the table" \
  grep -q '"kind": *"table"' "$work/q.json"
check "odd table name: nothing in it was run by the shell" test ! -e "$work/ran"
nl="$work/n"$'\n'"l.tab"
"$bin" schedule "${model[@]}" --optimize --family output -o "$nl" >/dev/null 2>&1
check "a newline in the table's name: the header's use: line stays one line" \
  bash -c "grep -A1 '^# ; use: ' \"\$1\" | sed -n 2p | grep -q '^#'" _ "$nl"
"$bin" ode "${model[@]}" "${tab[@]}" --json "$work/o.json" >/dev/null 2>&1
check "ode accepts the table" test $? -eq 0
check "its ODE risk is within 1 % of the winner's" py "$work/o.json" "$work/s.json" <<'PY'
import json, sys
o, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert abs(o['final_risk'] / s['best_final_risk'] - 1) < 0.01, (o['final_risk'], s['best_final_risk'])
PY
"$bin" sim "${model[@]}" "${tab[@]}" --runs 2 --json "$work/m.json" >/dev/null 2>&1
check "sim accepts the table" test $? -eq 0
"$bin" privacy "${model[@]}" "${tab[@]}" --json "$work/p.json" >/dev/null 2>&1
check "the table spends exactly rho (accountant, relative 1e-12)" py "$work/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d['rho_accounted'] - 1) <= 1e-12, d['rho_accounted']
PY
if [[ $have_gnuplot -eq 1 ]]; then
  check "figure written" test -s "$work/s.png"
fi
check "figure data beside it" bash -c "grep -v '^#' '$work/s.schedules.csv' | head -n1 | grep -qx 't,eta_output,risk_output,eta_linear-noise,risk_linear-noise,eta_inverse-time,risk_inverse-time,eta_pl,risk_pl'"

# the optimal family alone: a dense table (201 knots), within 1 %
"$bin" schedule "${model[@]}" --optimize --family optimal -o "$work/opt.tab" --json "$work/opt.json" >/dev/null 2>&1
check "--family optimal exits 0" test $? -eq 0
check "optimal table: 201 knots" test "$(grep -cv '^#' "$work/opt.tab")" -eq 201
check "optimal: only its keys" py "$work/opt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 'output_final_risk' not in d and d['best_family'] == 'inverse-time'
assert abs(d['inverse_time_c2'] * 0.01 - d['inverse_time_a']) < 1e-12 * d['inverse_time_a']
assert abs(d['table_final_risk'] / d['best_final_risk'] - 1) < 0.01
PY

# --tune-clip on output perturbation with a large c: c comes down, the command line carries it
"$bin" schedule "${model[@]}" --set clip.c=3 --optimize --family output --tune-clip -o "$work/c.tab" \
  --json "$work/c.json" >"$work/c.out" 2>/dev/null
check "--tune-clip exits 0" test $? -eq 0
check "--tune-clip: c found, risk no worse" py "$work/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert 0 < d['output_c'] < 3 and d['best_c'] == d['output_c']
PY
check "--tune-clip: command line sets clip.c" grep -q -- '--set clip.c=' "$work/c.out"

# ---- rates ----
"$bin" rates "${model[@]}" --gammas 0.001:0.01:3 -o "$work/r.csv" --json "$work/r.json" \
  --figure "$work/r.png" >"$work/r.out" 2>/dev/null
check "rates exits 0" test $? -eq 0
check "rates CSV header" grep -qx 'gamma,n,family,final_risk,eta0,eta1,c1,a,c,ode_solves' "$work/r.csv"
check "rates CSV: 3 gammas x 3 families" test "$(grep -cE '^[0-9.e-]+,[0-9]+,(output|linear-noise|inverse-time),' "$work/r.csv")" -eq 9
check "rates JSON: slopes ordered as the theorem's (output < linear-noise < optimal)" py "$work/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for f in ('output', 'linear_noise', 'inverse_time'):
    assert f + '_slope' in d and f + '_theory_slope' in d
assert d['output_slope'] < d['linear_noise_slope'] < d['inverse_time_slope']
assert d['output_theory_slope'] < d['linear_noise_theory_slope'] < d['inverse_time_theory_slope']
assert d['inverse_time_final_risk'][0] < d['linear_noise_final_risk'][0] < d['output_final_risk'][0]
assert len(d['gamma']) == d['count'] == len(d['inverse_time_final_risk'])
PY
check "rates prints the theorem's slopes" grep -q "theorem's rate" "$work/r.out"
if [[ $have_gnuplot -eq 1 ]]; then
  check "rates figure written" test -s "$work/r.png"
fi
check "rates figure data" bash -c "grep -v '^#' '$work/r.rates.csv' | head -n1 | grep -qx 'gamma,risk_output,theory_output,risk_linear-noise,theory_linear-noise,risk_inverse-time,theory_inverse-time,fit_output,fit_linear-noise,fit_inverse-time'"
check "rates JSON: the fitted rate A r1 + B r2 (docs/theory.md §5.2) within its reported error" py "$work/r.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); rho = d['rho']
terms = {'output': (1, 2), 'linear_noise': (2 / 3, 4 / 3), 'inverse_time': (0, 0)}
for f, (b1, b2) in terms.items():
    A, B, e = d[f + '_fit_A'], d[f + '_fit_B'], d[f + '_fit_rel_err']
    assert A >= 0 and B >= 0 and 0 <= e < 1, (f, A, B, e)
    assert isinstance(d[f + '_pre_asymptotic'], bool) and 0 <= d[f + '_fit_term2_share'] <= 1
    worst = 0
    for i in range(d['count']):
        g = d['gamma'][i]; L = math.log(1 / g)
        fit = A * g * L ** b1 + B * g * g * L ** b2 / rho ** 2
        worst = max(worst, abs(fit - d[f + '_final_risk'][i]) / d[f + '_final_risk'][i])
    assert abs(worst - e) < 1e-9, (f, worst, e)
PY
check "rates prints the fit and says whether the grid is pre-asymptotic" bash -c "grep -q 'risk ~ A r1 + B r2' '$work/r.out' && grep -Eq 'pre-asymptotic|asymptotic at the smallest gamma' '$work/r.out'"

# ---- the gradient method: --refine (issue 21) ----
"$bin" schedule "${model[@]}" --optimize --family pl --knots 4 --refine --refine-tol 1e-4 \
  -o "$work/ref.tab" --json "$work/ref.json" >"$work/ref.out" 2>/dev/null
check "--refine exits 0" test $? -eq 0
check "--refine prints the risk at each K" grep -q "K = 4: .*; K = 7: " "$work/ref.out"
check "--refine compares the closed-form families (rho and epsilon needed)" \
  bash -c "grep -q '^  inverse-time ' '$work/ref.out' && grep -q 'rho needed' '$work/ref.out'"
check "--refine: levels non-increasing, converged or at the knot limit" py "$work/ref.out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
levels = [float(v) for v in re.findall(r"K = \d+: ([0-9.e+-]+)", text.split("refine (pl")[1].split("\n")[0])]
assert len(levels) >= 2 and all(b <= a for a, b in zip(levels, levels[1:])), levels
assert "converged at K" in text
PY
check "--refine JSON: levels and the privacy each family needs" py "$work/ref.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
L = d['refine_levels']
assert L >= 2 and d['refine_knots_0'] == 4 and d['refine_knots_1'] == 7, d
assert all(d['refine_risk_%d' % (l + 1)] <= d['refine_risk_%d' % l] for l in range(L - 1))
assert d['pl_knots'] == d['refine_knots_%d' % (L - 1)]
for f in ('output', 'linear_noise', 'inverse_time'):
    r = d[f + '_rho_equivalent']
    assert r is None or r > d['rho'], (f, r)
    assert d[f + '_final_risk'] >= d['pl_final_risk']
PY
check "--refine table accepted by ode" bash -c "'$bin' ode ${model[*]} --set schedule.kind=table --set schedule.file='$work/ref.tab' >/dev/null"
"$bin" schedule "${model[@]}" --optimize --family inverse-time --method simplex --json "$work/nm.json" >/dev/null 2>&1
check "--method simplex and the family inverse-time (JSON inverse_time_*)" py "$work/nm.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['best_family'] == 'inverse-time' and 'inverse_time_c1' in d, d
PY

# the designed pl schedule of the default model passes `validate` (ODE against the Monte
# Carlo and the SDE; 0.2 s)
"$bin" schedule --optimize --family pl --knots 8 -o "$work/def.tab" >/dev/null 2>&1
check "default model: pl design exits 0" test $? -eq 0
"$bin" validate --set schedule.kind=table --set schedule.file="$work/def.tab" --json "$work/val.json" >"$work/val.out" 2>&1
check "default model: the designed schedule passes validate" grep -q "^verdict: PASS" "$work/val.out"

# schedule.kind = inverse-time is the same schedule as optimal (the alias of issue 21)
"$bin" ode --set schedule.kind=inverse-time -o "$work/it.csv" >/dev/null 2>&1
"$bin" ode --set schedule.kind=optimal -o "$work/op.csv" >/dev/null 2>&1
check "schedule.kind = inverse-time: the same ODE as optimal" \
  cmp -s <(grep -v '^#' "$work/it.csv") <(grep -v '^#' "$work/op.csv")

# ---- bad input: exit 2, a message, no output file ----
bad() { # bad NAME COMMAND ARGS...
  local name=$1 sub=$2; shift 2
  rm -rf "$work/bad"; mkdir "$work/bad"
  "$bin" "$sub" "$@" -o "$work/bad/out" --json "$work/bad/out.json" --figure "$work/bad/fig.png" \
    >/dev/null 2>"$work/err"
  local rc=$?
  check "$name: exit 2 ($(head -n1 "$work/err" | cut -c1-90))" test $rc -eq 2
  check "$name: no output file" test -z "$(ls -A "$work/bad")"
}
bad "schedule: unknown family" schedule --optimize --family bogus
bad "schedule: one bad family in a list" schedule --optimize --family output,bogus
bad "schedule: K < 2" schedule --optimize --knots 1
bad "schedule: K too large" schedule --optimize --knots 1000
bad "schedule: K not a number" schedule --optimize --knots x
bad "schedule: K = 0" schedule --optimize --family pl --knots 0
bad "schedule: K = 513 (above 512)" schedule --optimize --family pl --knots 513
bad "schedule: unknown method" schedule --optimize --method newton
bad "schedule: --refine with every family" schedule --optimize --refine
bad "schedule: --refine with another family" schedule --optimize --family output --refine
bad "schedule: --refine with pl and another family" schedule --optimize --family pl,output --refine
bad "schedule: --refine with simplex" schedule --optimize --family pl --refine --method simplex
bad "schedule: --refine-tol 0" schedule --optimize --family pl --refine --refine-tol 0
bad "schedule: --refine-tol < 0" schedule --optimize --family pl --refine --refine-tol -1e-5
# ... each message names the option
names() { # names PATTERN ARGS...: the message of a bad input names the option
  local pat=$1; shift
  "$bin" schedule "$@" >/dev/null 2>"$work/err"
  check "message names $pat" grep -q -- "$pat" "$work/err"
}
names --knots --optimize --family pl --knots 513
names --method --optimize --method newton
names --refine --optimize --family output --refine
names --refine-tol --optimize --family pl --refine --refine-tol 0
bad "schedule: without --optimize" schedule
bad "schedule: bad model key" schedule --optimize --set clip.c=-1
bad "rates: no --gammas" rates
bad "rates: bad syntax" rates --gammas 0.001-0.01-3
bad "rates: two fields" rates --gammas 0.001:0.01
bad "rates: trailing text" rates --gammas 0.001:0.01:3x
bad "rates: LO >= HI" rates --gammas 0.01:0.001:3
bad "rates: LO = HI" rates --gammas 0.01:0.01:3
bad "rates: LO <= 0" rates --gammas 0:0.01:3
bad "rates: HI >= 1" rates --gammas 0.1:2:3
bad "rates: COUNT < 2" rates --gammas 0.001:0.01:1
bad "rates: unknown family" rates --gammas 0.001:0.01:3 --families output,bogus
bad "rates: a gamma the model rejects (n > 4e12)" rates --set data.d=1 --gammas 1e-13:0.5:3
bad "rates: bad model key" rates --gammas 0.001:0.01:3 --set clip.c=-1
# ---- a stopped design writes its best so far (issue 31) ----
# No race: HDPSGD_TEST_STOP=POINT makes the command stop itself (SIGSTOP) at that point
# ("schedule-scan": the first family's scan done; "schedule-level": a --refine level finished
# and its table written); the test waits for the stopped state, sends the signal, then SIGCONT.
# env --default-signal: a background job of a script starts with SIGINT ignored.
source "$(dirname "${BASH_SOURCE[0]}")/stop_point.sh"   # wait_stopped
for sig in INT TERM; do
  status=$((128 + $(kill -l $sig)))
  rm -f "$work/x.tab" "$work/x.json"
  HDPSGD_TEST_STOP=schedule-scan env --default-signal=INT,TERM "$bin" schedule "${model[@]}" \
    --optimize -o "$work/x.tab" --json "$work/x.json" >"$work/x.out" 2>"$work/x.err" &
  pid=$!
  stopped=0; wait_stopped $pid && stopped=1
  check "SIG$sig: stopped after the first scan (HDPSGD_TEST_STOP=schedule-scan)" test $stopped -eq 1
  kill -$sig $pid; kill -CONT $pid
  wait $pid
  rc=$?
  check "SIG$sig: exit status $status after writing (got $rc)" test $rc -eq $status
  check "SIG$sig: the table marked unconverged" grep -q '^# ; UNCONVERGED' "$work/x.tab"
  check "SIG$sig: the table is a valid schedule" \
    "$bin" ode "${model[@]}" --set schedule.kind=table --set "schedule.file=$work/x.tab" -o /dev/null
  check "SIG$sig: JSON converged false, the first family only, its risk finite" py "$work/x.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d['converged'] is False, d.get('converged')
assert d['best_family'] == 'output' and 'pl_final_risk' not in d, d
assert math.isfinite(d['output_final_risk']) and d['output_ode_solves'] > 0
PY
  check "SIG$sig: says so" grep -q "stopped by SIG$sig" "$work/x.err"
done
rm -f "$work/x.tab" "$work/x.json"
HDPSGD_TEST_STOP=schedule-level env --default-signal=INT,TERM "$bin" schedule "${model[@]}" \
  --optimize --family pl --knots 4 --refine -o "$work/x.tab" --json "$work/x.json" \
  >"$work/x.out" 2>"$work/x.err" &
pid=$!
stopped=0; wait_stopped $pid && stopped=1
check "--refine: stopped after the first level (HDPSGD_TEST_STOP=schedule-level)" test $stopped -eq 1
check "--refine: the finished level's table already written (4 knots)" \
  test "$(grep -c '^[0-9]' "$work/x.tab" 2>/dev/null)" = 4
check "--refine: the level table says it is not the converged optimum" \
  grep -q 'refine level of 4 knots, not the converged optimum' "$work/x.tab"
check "--refine: no JSON yet" test ! -e "$work/x.json"
kill -INT $pid; kill -CONT $pid
wait $pid
rc=$?
check "--refine SIGINT: exit 130 after writing (got $rc)" test $rc -eq 130
check "--refine SIGINT: the last level kept: 4 knots, unconverged" \
  bash -c "grep -q '^# ; UNCONVERGED' '$work/x.tab' && test \$(grep -c '^[0-9]' '$work/x.tab') = 4"
check "--refine SIGINT: JSON converged false, one level of 4 knots" py "$work/x.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d['converged'] is False and d['best_family'] == 'pl' and d['pl_knots'] == 4, d
assert d['refine_levels'] == 1 and d['refine_knots_0'] == 4, d
assert abs(d['refine_risk_0'] / d['pl_final_risk'] - 1) < 1e-3, d
PY
check "--refine: progress reports the level" grep -q 'level K = 4 finished' "$work/x.err"
py "$work/s.json" <<'PY'
import json, sys
assert json.load(open(sys.argv[1]))['converged'] is True
PY
check "a design run to its end: JSON converged true" test $? -eq 0

"$bin" schedule --optimize --json "$work/nodir/s.json" >/dev/null 2>&1
check "schedule: output folder missing: exit 2 before running" test $? -eq 2
"$bin" rates --gammas 0.001:0.01:3 -o "$work/nodir/r.csv" >/dev/null 2>&1
check "rates: output folder missing: exit 2 before running" test $? -eq 2
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
