#!/usr/bin/env bash
# The model, dumped and reloaded (issue 22): `hdpsgd config` reads back to the same model,
# every CSV's '#' header is a loadable model, `hdpsgd keys` shows a model's values, and the
# privacy budget given as rho, rho_zcdp or (epsilon, delta) gives the same runs.
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
rows() { grep -v '^#' "$1" || echo "no rows in $1"; }   # the data rows of a CSV
# refused FRAGMENT COMMAND...: exit 2 and the message contains FRAGMENT
refused() {
  local frag=$1; shift
  "$@" >out 2>err; local st=$?
  [[ $st -eq 2 ]] && grep -qF -- "$frag" err || { echo "    exit $st:"; sed 's/^/      /' err | head -3; return 1; }
}

# ---- config: config -> file -> config gives the same text, and the same runs ----
m="$src/models/powerlaw.ini"
"$bin" config "$m" --set clip.c=0.7 --set data.n=1234 > a.ini
"$bin" config a.ini > b.ini
check "config -> file -> config: identical text" cmp -s a.ini b.ini
check "config writes the core's sections only" bash -c "grep -q '^\[validate\]' a.ini && ! grep -q '^\[rf\]' a.ini"
check "config keeps the overrides (n through gamma)" bash -c "grep -qx 'c = 0.7' a.ini && ! grep -q '^n = ' a.ini && '$bin' keys a.ini | grep -q '^  n  *= 1234 '"
"$bin" ode "$m" --set clip.c=0.7 --set data.n=1234 -o o1.csv --json o1.json 2>/dev/null
"$bin" ode a.ini -o o2.csv --json o2.json 2>/dev/null
check "ode on the reloaded model: the same rows" cmp -s <(rows o1.csv) <(rows o2.csv)
check "ode on the reloaded model: the same final risk" python3 -c "
import json; a, b = (json.load(open(f)) for f in ('o1.json', 'o2.json'))
assert a['final_risk'] == b['final_risk'] and a['n'] == b['n'] == 1234"
"$bin" config --all > all1.ini && "$bin" config all1.ini --all > all2.ini
check "config --all: every section, reads back identical" bash -c "cmp -s all1.ini all2.ini && grep -q '^\[si\]' all1.ini && grep -q '^\[kl\]' all1.ini"
"$bin" config --command rf --set rf.p=300 > rf1.ini && "$bin" config rf1.ini --command rf > rf2.ini
check "config --command rf: [rf] and [dpgd], not [kl]" bash -c "cmp -s rf1.ini rf2.ini && grep -q '^\[rf\]' rf1.ini && grep -q '^\[dpgd\]' rf1.ini && ! grep -q '^\[kl\]' rf1.ini && grep -qx 'p = 300' rf1.ini"
check "config --command nosuch: exit 2" refused "nosuch" "$bin" config --command nosuch
"$bin" config -o c.ini --set data.d=77
check "config -o FILE" grep -qx 'd = 77' c.ini

# ---- every CSV's header is a loadable model ----
header_round_trip() { # NAME COMMAND MODEL [--set K=V]... [OPTIONS]...
  local name=$1 cmd=$2 model=$3; shift 3
  local -a sets=()
  while [[ $# -gt 0 && $1 == --set ]]; do sets+=("$1" "$2"); shift 2; done
  rm -f h1.csv h2.csv
  "$bin" "$cmd" "$model" "${sets[@]}" "$@" -o h1.csv >/dev/null 2>&1
  sed -n 's/^# //p' h1.csv > h.ini
  # the same command on the header's model alone (no model file, no --set)
  "$bin" "$cmd" h.ini "$@" -o h2.csv >/dev/null 2>h.err
  check "header round trip: $name" bash -c "[[ -s h1.csv && -s h2.csv ]] && cmp -s <(grep -v '^#' h1.csv) <(grep -v '^#' h2.csv)"
}
header_round_trip "ode" ode "$m" --set clip.c=0.5 --set data.n=999
printf '[data]\nd = 100\n' > nobudget.ini   # no [privacy]: any form may be set
header_round_trip "ode, epsilon budget" ode nobudget.ini --set privacy.epsilon=2 --set privacy.delta=1e-6
header_round_trip "sim" sim "$m" --set sim.runs=4 --set data.d=40 --set sim.seed=3 --threads 1
header_round_trip "rf" rf "$m" --set rf.d=10 --set rf.n=80 --set rf.p=200 --set rf.test_size=60 \
  --set rf.records=10 --set dpgd.CT=3 --set rf.runs=2 --set sim.seed=9 --threads 1
header_round_trip "sim-index" sim-index "$m" --set si.d=8 --set si.p=12 --set si.n=200 --set si.test_size=50 --set si.runs=2 --threads 1
header_round_trip "rates" rates "$m" --set data.d=30 --gammas 0.1:0.2:2
"$bin" kl bound "$m" --set kl.width=64 --set kl.depth=3 -o kl1.csv >/dev/null 2>&1
sed -n 's/^# //p' kl1.csv > kl.ini
"$bin" kl bound kl.ini -o kl2.csv >/dev/null 2>&1
check "header round trip: kl bound ([kl] in the header)" bash -c "grep -qx '# \[kl\]' kl1.csv && [[ -s kl2.csv ]] && cmp -s <(grep -v '^#' kl1.csv) <(grep -v '^#' kl2.csv)"
check "the header names only the sections the command uses" bash -c "'$bin' ode -o x.csv 2>/dev/null; grep -qx '# \[validate\]' x.csv && ! grep -q '^# \[rf\]' x.csv"
check "the header's other lines are INI comments" bash -c "! sed -n 's/^# //p' x.csv | grep -v '^\[\|^; \|^[a-z_0-9A-Z]* = '"

# ---- keys ----
check "keys --help prints the help" bash -c "'$bin' keys --help | grep -q '^Usage: hdpsgd keys'"
"$bin" keys --set data.d=300 > k.txt
check "keys --set: the model's values, given keys marked" bash -c "grep -q '^  d  *= 300  *\*' k.txt && grep -q '^  n  *= 3000 ' k.txt"
"$bin" keys "$m" > k2.txt
check "keys MODEL.ini: the file's values" bash -c "grep -q '^  spectrum  *= powerlaw  *\*' k2.txt"
check "keys without a model: the defaults" bash -c "'$bin' keys | grep -q '^  n  *= 0 '"

# ---- the privacy budget in three forms ----
"$bin" ode --set privacy.rho=0.5 -o r1.csv --json r1.json 2>/dev/null
"$bin" ode --set privacy.rho_zcdp=0.125 -o r2.csv --json r2.json 2>/dev/null
check "rho_zcdp = rho^2/2 gives the same run" cmp -s <(rows r1.csv) <(rows r2.csv)
rho=$("$bin" privacy --epsilon 1 --set privacy.delta=1e-6 | sed -n 's/.*--set privacy.rho=\([0-9.e+-]*\).*/\1/p')
"$bin" ode --set privacy.rho="$rho" -o e1.csv 2>/dev/null
"$bin" ode --set privacy.epsilon=1 --set privacy.delta=1e-6 -o e2.csv --json e2.json 2>/dev/null
check "epsilon, delta gives the run of the rho hdpsgd privacy --epsilon calibrates" \
  bash -c "[[ -n '$rho' ]] && cmp -s <(grep -v '^#' e1.csv) <(grep -v '^#' e2.csv)"
check "the header states every form" grep -q "^# ; the same budget: rho = $rho, rho_zcdp = .*, epsilon = 1 at delta = 1e-06" e2.csv
printf '[privacy]\nrho = 0.5\n\n[clip]\nc = 1\n\n[privacy]\nrho_zcdp = 0.1\n' > two.ini
check "two forms: exit 2 naming both keys with file:line" \
  refused "two.ini:8: [privacy] rho_zcdp: the privacy budget is given twice, as [privacy] rho (two.ini:2)" "$bin" ode two.ini
head -2 two.ini > one.ini
"$bin" ode one.ini --set privacy.epsilon=1 --set privacy.delta=1e-6 -o ov.csv 2>/dev/null
check "rho in the file, epsilon by --set: the override replaces the file's form" \
  bash -c "[[ -n '$rho' ]] && cmp -s <(grep -v '^#' e1.csv) <(grep -v '^#' ov.csv) && grep -qx '# epsilon = 1' ov.csv && ! grep -qx '# rho = 0.5' ov.csv"
sed -n 's/^# //p' ov.csv > ov.ini
"$bin" ode ov.ini -o ov2.csv 2>/dev/null
check "the overridden budget's header reloads to the same run" cmp -s <(grep -v '^#' ov.csv) <(grep -v '^#' ov2.csv)
check "two forms by --set: refused" refused "--set: [privacy] epsilon: the privacy budget is given twice, as [privacy] rho (--set)" \
  "$bin" ode one.ini --set privacy.rho=1 --set privacy.epsilon=1 --set privacy.delta=0.001
"$bin" ode --set privacy.epsilon=1 -o eps-alone.csv 2>/dev/null
"$bin" ode --set privacy.epsilon=1 --set privacy.delta=1e-5 -o eps-default.csv 2>/dev/null
check "epsilon without delta: at the default delta 1e-5" cmp -s <(grep -v '^#' eps-alone.csv) <(grep -v '^#' eps-default.csv)
check "rho_zcdp out of range: refused" refused "[privacy] rho_zcdp = -1 is out of range" "$bin" ode --set privacy.rho_zcdp=-1

# ---- sim-index: the budget forms of [si] are written only when given, so config reloads ----
"$bin" config --command sim-index --set si.epsilon_total=4 > si1.ini
"$bin" config si1.ini --command sim-index > si2.ini
check "config of si.epsilon_total: only that form written, reads back identical" \
  bash -c "cmp -s si1.ini si2.ini && grep -qx 'epsilon_total = 4' si1.ini && ! grep -qx 'epsilon = 4' si1.ini && ! grep -q '^sigma_W' si1.ini"
check "the written si.epsilon_total model loads for sim-index" bash -c "'$bin' sim-index si1.ini --set si.n=300 --set si.test_size=100 --set si.runs=2 -o si.csv 2>/dev/null && grep -q '^# ; budget\\|^# budget\\|epsilon_total' si.csv"

# ---- JSON summaries: the resolved model as an object, the file name beside it ----
check "JSON: model_file and the model as an object, every form of the budget" python3 - e2.json o2.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model_file"] == "(built-in default)", d["model_file"]
m = d["model"]
assert set(m) == {"data", "clip", "privacy", "schedule", "sgd", "ode", "sim", "sde", "validate"}, set(m)
assert m["data"]["d"] == 200 and m["data"]["n"] == 2000 and m["data"]["gamma"] == 0.1
assert m["data"]["spectrum"] == "powerlaw" and m["schedule"]["kind"] == "inverse-time"
p = m["privacy"]
assert p["epsilon"] == 1 and p["delta"] == 1e-6
assert abs(p["rho_zcdp"] - p["rho"] ** 2 / 2) <= 1e-15 * p["rho_zcdp"]
assert p["rho"] == d["rho"]
assert m["sim"]["seed"] == 1 and m["ode"]["bins"] == 0
assert m["sgd"] == {"batch": 1, "epochs": 1, "sampling": "one-pass", "noise_multiplier": 0, "accountant": "pld"}, m["sgd"]
e = json.load(open(sys.argv[2]))
assert e["model_file"].endswith("a.ini") and e["model"]["clip"]["c"] == 0.7
PY
check "JSON: numbers in their shortest exact form (0.3, not 0.29999999999999999)" \
  bash -c "'$bin' ode --json - -o /dev/null 2>/dev/null | grep -qxE '      \"c\": 0.3,?'"
"$bin" rf --set rf.d=10 --set rf.n=80 --set rf.p=200 --set rf.test_size=60 --set rf.records=10 \
  --set dpgd.CT=3 --set rf.runs=2 --threads 1 -o /dev/null --json rf.json 2>/dev/null
check "JSON of rf: the core's sections and [rf], [dpgd]" python3 -c "
import json; m = json.load(open('rf.json'))['model']
assert 'rf' in m and 'dpgd' in m and 'kl' not in m and m['rf']['p'] == 200, sorted(m)"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
