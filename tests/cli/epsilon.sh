#!/usr/bin/env bash
# One epsilon per budget, at the model's delta: three budgets, each given in the three forms
# (rho; rho_zcdp; epsilon with delta), must report the same epsilon (Canonne-Kamath-Steinke)
# at the same delta = privacy.delta in privacy's, validate's and schedule's JSON, the CSV
# headers of ode and sim, a sweep's results.csv and the Python package's accountant(model).
# Usage: epsilon.sh HDPSGD [PYTHON-WITH-NUMPY PYTHONPATH] (no Python: that part is skipped, said so)
set -u
bin=$1
py=${2:-}
pypath=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }

# (epsilon, delta) of the three budgets; delta = 1e-5 is privacy.delta's default, so that
# budget's epsilon form gives epsilon alone
budgets=("2 1e-5" "1 1e-6" "4 1e-4")
for b in 0 1 2; do
  read -r E D <<<"${budgets[$b]}"
  "$bin" privacy --epsilon "$E" --set privacy.delta="$D" --json "$work/cal$b.json" >/dev/null 2>&1
  check "budget $b: privacy calibrates (epsilon, delta) = ($E, $D)" test -s "$work/cal$b.json"
  read -r rho rz < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); print("%.17g %.17g" % (d["rho_for_target"], d["rho_z_for_target"]))' \
    "$work/cal$b.json")
  forms=("rho = $rho" "rho_zcdp = $rz" "epsilon = $E")
  for f in 0 1 2; do
    dir=$work/b$b-f$f
    mkdir "$dir"
    {
      printf '[data]\nd = 20\nn = 400\n\n[sim]\nruns = 4\n\n[privacy]\n%s\n' "${forms[$f]}"
      # the default delta is left implicit for the epsilon form of budget 0
      [[ $b -eq 0 && $f -eq 2 ]] || printf 'delta = %s\n' "$D"
    } > "$dir/m.ini"
    printf '[sweep]\nmodel = %s\ncommands = ode\n[axes]\nclip.c = 1\n' "$dir/m.ini" > "$dir/s.ini"
    "$bin" privacy "$dir/m.ini" --json "$dir/privacy.json" >/dev/null 2>"$dir/privacy.err"
    "$bin" validate "$dir/m.ini" --no-sde --json "$dir/validate.json" >/dev/null 2>"$dir/validate.err"
    "$bin" schedule "$dir/m.ini" --optimize --family output --json "$dir/schedule.json" >/dev/null 2>&1
    "$bin" ode "$dir/m.ini" -o "$dir/ode.csv" >/dev/null 2>&1
    "$bin" sim "$dir/m.ini" -o "$dir/sim.csv" >/dev/null 2>&1
    "$bin" sweep "$dir/s.ini" -o "$dir/sw" --threads 1 >/dev/null 2>&1
    check "budget $b form $f: no delta warning (delta < 1/n)" test ! -s "$dir/privacy.err"
  done
done

# every summary of every form of a budget: the same epsilon at the same delta, which is the
# budget's (epsilon, delta)
check "all summaries agree, budget by budget" python3 - "$work" <<'PY'
import csv, json, re, sys
work = sys.argv[1]
budgets = [(2, 1e-5), (1, 1e-6), (4, 1e-4)]
def header(path):
    for line in open(path):
        m = re.match(r"# ; the same budget: rho = \S+, rho_zcdp = \S+, epsilon = (\S+) at delta = (\S+) \(CKS\)$", line)
        if m:
            return float(m.group(1)), float(m.group(2))
    raise AssertionError(path + ": no budget line in the header")
def sweep(path):
    rows = list(csv.DictReader(open(path)))
    assert len(rows) == 1 and rows[0]["status"] == "ok", rows
    return float(rows[0]["epsilon_cks"]), float(rows[0]["delta"])
bad = []
for b, (E, D) in enumerate(budgets):
    for f in range(3):
        d = f"{work}/b{b}-f{f}"
        got = {}
        for cmd in ("privacy", "validate", "schedule"):
            j = json.load(open(f"{d}/{cmd}.json"))
            assert j["epsilon"] == j["epsilon_cks"], (cmd, j["epsilon"], j["epsilon_cks"])
            got[cmd] = (j["epsilon"], j["delta"])
        got["ode"] = header(f"{d}/ode.csv")
        got["sim"] = header(f"{d}/sim.csv")
        got["sweep"] = sweep(f"{d}/sw/results.csv")
        for src, (e, dl) in got.items():
            tol = 1e-9 if src == "sweep" else 1e-12  # results.csv: 10 digits
            if dl != D or abs(e - E) > tol * E:
                bad.append(f"budget {b} form {f} {src}: epsilon {e!r} at delta {dl!r}, "
                           f"expected {E} at {D}")
assert not bad, "\n".join(bad)
PY

# an AddressSanitizer build (the test sanitize) has a library Python cannot load without
# preloading ASan's runtime: the Python part is the python label's there
asan=0; ldd "$bin" 2>/dev/null | grep -q libasan && asan=1
if [[ -n "$py" ]] && ((asan)); then
  echo "skip Python: an AddressSanitizer build (the Python tests run on the normal build)"
elif [[ -n "$py" ]]; then
  check "Python: accountant(model) agrees with privacy's JSON" \
    env PYTHONPATH="$pypath" "$py" - "$work" <<'PY'
import json, sys
import hdpsgd
work = sys.argv[1]
for b in range(3):
    for f in range(3):
        d = f"{work}/b{b}-f{f}"
        a = hdpsgd.accountant(hdpsgd.Model(f"{d}/m.ini"))
        j = json.load(open(f"{d}/privacy.json"))
        assert (a.epsilon, a.delta) == (j["epsilon"], j["delta"]), (d, a.epsilon, a.delta)
        assert a.epsilon_cks == a.epsilon
PY
else
  echo "skip Python: no python3 with NumPy found at configure time"
fi

# delta >= 1/n: privacy warns (and still reports at that delta)
"$bin" privacy --set data.n=400 --set privacy.delta=0.01 --json "$work/w.json" >/dev/null 2>"$work/w.err"
check "delta >= 1/n: a warning" grep -q 'privacy: warning: privacy.delta = 0.01 is not below 1/n = 0.0025' "$work/w.err"
check "delta >= 1/n: still reported at that delta" python3 -c 'import json, sys
assert json.load(open(sys.argv[1]))["delta"] == 0.01' "$work/w.json"

"$bin" validate --set data.n=400 --set data.d=20 --set sim.runs=4 --no-sde --set privacy.delta=0.01 \
  >/dev/null 2>"$work/v.err"
check "delta >= 1/n: validate warns too" grep -q 'validate: warning: privacy.delta = 0.01 is not below 1/n' "$work/v.err"
for b in 0 1 2; do for f in 0 1 2; do
  check "budget $b form $f: validate does not warn about delta" bash -c "! grep -q 'privacy.delta' '$work/b$b-f$f/validate.err'"
done; done

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
