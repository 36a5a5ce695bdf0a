#!/usr/bin/env bash
# Every --json of every command (the commands whose help lists --json, from the command
# table) on a small model, and the JSON files of a sweep's points: each must parse with
# Python's json module as strict UTF-8, with a duplicate key in any object refused
# (object_pairs_hook), and hold the keys named below. A command that gains --json without a
# case here fails the test (issue 30: validate wrote "pass" twice). Also: a model file whose
# name is not UTF-8 gives valid JSON (the byte as \u00XX, its Latin-1 reading; issue 29).
# Every key of every --json (but the model's own object) must be a name of a result table
# (hdpsgd/fields.h, listed by test_fields --names) under one of the prefixes below, or one of
# the keys the case's BY_HAND entry lists as still written by hand: a new hand-written key
# fails (issue 30: one description per result).
set -u
bin=$(realpath "$1")
src=$(realpath "$2")
fields=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 count=0
"$fields" --names >"$work/names" || { echo "FAIL test_fields --names"; exit 1; }
export NAMES="$work/names"

"$fields" --tables >"$work/tables" || { echo "FAIL test_fields --tables"; exit 1; }
export BIN="$bin" TABLES="$work/tables"

# the keys still written by hand, per case (shell patterns): none left; a case that needs one
# names it here, as the exception it is
declare -A BY_HAND=(
)

check_json() { # check_json FILE WHAT [KEY...]: strict UTF-8, no duplicate key, KEYs present
  python3 - "$@" <<'EOF'
import json, sys
path, what, want = sys.argv[1], sys.argv[2], sys.argv[3:]
def no_dup(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise ValueError(f"duplicate key {k!r}")
        seen.add(k)
    return dict(pairs)
try:
    with open(path, "rb") as f:
        data = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_dup)
except (ValueError, UnicodeDecodeError) as e:
    sys.exit(f"FAIL {what}: {path}: {e}")
missing = [k for k in want if k not in data]
if missing:
    sys.exit(f"FAIL {what}: keys missing: {missing}")
# every key a table's name (under a prefix: a validator side, a design family, a net --vs
# variant, a kl run's initialisation, a scaling level; a refine level's or layer's suffix _<l>) or one of the case's hand-written keys
import fnmatch, os, re
names = set(open(os.environ["NAMES"]).read().split())
by_hand = os.environ.get("BY_HAND_KEYS", "").split()
PREFIXES = ("", "sim_", "sde_", "output_", "linear_noise_", "inverse_time_", "pl_", "rf_", "gd_",
            "lecun_", "he_", "ntk_", "xavier_", "lecun_relu_", "he_relu_", "ntk_relu_",
            "xavier_relu_")  # ... a kl run's initialisation, its real network
PREFIXES += tuple(os.environ.get("EXTRA_PREFIXES", "").split())  # nc --sweep: its curves
def known(k):
    bare = re.sub(r"_[0-9]+$", "", k)
    depth = re.sub(r"^[a-z]+_L[0-9]+_|^scaling_[0-9]+_", "", k)  # kl init: <scheme>_L<depth>_,
    # validate --scaling: scaling_<level>_
    return any(x.startswith(p) and x[len(p):] in names for x in (k, bare, depth)
               for p in PREFIXES) \
        or any(fnmatch.fnmatchcase(k, h) for h in by_hand)
def walk(o, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "model" and isinstance(v, dict):
                continue  # the model's keys (hdpsgd keys), not a result's
            if not known(k):
                out.append(k)
            walk(v, out)
    elif isinstance(o, list):
        for v in o:
            walk(v, out)
unknown = []
walk(data, unknown)
if unknown:
    sys.exit(f"FAIL {what}: keys in no result table (hdpsgd/fields.h) and not listed as written "
             f"by hand: {sorted(set(unknown))}")
# the command's help lists every key it wrote: its "JSON keys" paragraph, generated from the
# result tables its command-table entry names (issue 30), each line "TABLE[ under PREFIX]
# [ (WHEN)]: key, key (objects of TABLE), ..." or "not a table (WHAT): key"; every table it
# names exists (test_fields --tables, hdpsgd help results TABLE)
cmd = os.environ.get("HELP_CMD")
if not cmd:
    sys.exit(0)
import subprocess
def run_bin(*args):
    return subprocess.run([os.environ["BIN"], *args], capture_output=True, text=True)
lines = run_bin("help", cmd).stdout.split("\n")
heads = [i for i, l in enumerate(lines) if l.startswith("JSON keys")]
if not heads:
    sys.exit(f"FAIL {what}: hdpsgd help {cmd} has no JSON keys paragraph")
parts = []
for l in lines[heads[0] + 1:]:
    if not l.strip():
        break
    if l.startswith("      "):
        parts[-1] += " " + l.strip()
    elif l.startswith("  "):
        parts.append(l.strip())
tables = set(open(os.environ["TABLES"]).read().split())
patterns, objects, named = [], {}, set()
for part in parts:
    m = re.match(r"^(not a table|\S+)(?: under (\S+))?(?: \((.*?)\))?: (.*)$", part)
    if not m:
        sys.exit(f"FAIL {what}: help {cmd}: a JSON keys line not understood: {part!r}")
    if m.group(1) != "not a table":
        named.add(m.group(1))
    for item in m.group(4).split(", "):
        o = re.match(r"^(\S+) \(objects of (\S+)\)$", item)
        key = o.group(1) if o else item
        if o:
            named.add(o.group(2))
            objects[key] = o.group(2)
        if not re.fullmatch(r"[A-Za-z0-9_<>]+", key):
            sys.exit(f"FAIL {what}: help {cmd}: not a key: {item!r} in {part!r}")
        patterns.append(re.compile(re.sub(r"<[a-z]+>", "[A-Za-z0-9_+-]+", key)))
bad = sorted(t for t in named if t not in tables or run_bin("help", "results", t).returncode)
if bad:
    sys.exit(f"FAIL {what}: help {cmd} names tables that do not exist: {bad}")
def fields_of(table):  # the field names `hdpsgd help results TABLE` lists
    out = run_bin("help", "results", table).stdout
    return set(re.findall(r"^  (\S+) ", out, re.M))
def listed(o, out, inside=None):  # inside: the names of an objects table
    if isinstance(o, dict):
        for k, v in o.items():
            if inside is not None:
                if k not in inside:
                    out.append(k)
            elif not any(p.fullmatch(k) for p in patterns):
                out.append(k)
            if k == "model" and inside is None:
                continue  # the model's keys (hdpsgd keys), not a result's
            sub = fields_of(objects[k]) if inside is None and k in objects else None
            if isinstance(v, list) and sub is not None:
                for x in v:
                    listed(x, out, sub)
            else:
                listed(v, out, inside)
    elif isinstance(o, list):
        for v in o:
            listed(v, out, inside)
missing = []
listed(data, missing)
if missing:
    sys.exit(f"FAIL {what}: keys that hdpsgd help {cmd} does not list: {sorted(set(missing))}")
EOF
}

run() { # run NAME 'KEYS' ARGS... (the JSON goes to $work/NAME.json)
  local name=$1 keys=$2
  shift 2
  count=$((count + 1))
  (cd "$work" && "$bin" "$@" --json "$work/$name.json") >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "FAIL $name: exit status $rc ($(tail -n 3 "$work/err"))"; fail=$((fail + 1)); return
  fi
  # shellcheck disable=SC2086
  if BY_HAND_KEYS=${BY_HAND[${name%-[0-9]}]:-} HELP_CMD=$1 check_json "$work/$name.json" "$name" $keys; then echo "ok   $name"; else fail=$((fail + 1)); fi
}

small="--set data.d=40"
declare -A covered
run ode "final_risk model_file" ode $small; covered[ode]=1
run sim "final_risk_mean runs" sim $small --runs 4 --seed 1; covered[sim]=1
run sde "final_risk_mean runs" sde $small --runs 4 --seed 1; covered[sde]=1
run validate "pass sim_pass sde_pass max_abs_dev sde_max_abs_dev" validate $small --runs 4 --seed 1
run validate-scaling "pass sim_pass sde_pass" validate $small --runs 4 --seed 1 --scaling 2
covered[validate]=1
run privacy "at_delta" privacy --delta 1e-6,1e-3 --epsilon 3; run privacy-dpgd "" privacy --dpgd --eta 0.1 --steps 100 --epsilon 2 --delta 1e-5
covered[privacy]=1
run accountant "" accountant --sample-rate 0.01 --noise-multiplier 1 --steps 100
covered[accountant]=1
run schedule "" schedule $small --optimize --family output --knots 4; covered[schedule]=1
# the parts written per family, per level and per family again (--refine), and --tune-batch's
run schedule-refine "pl_final_risk refine_levels refine_knots_0 output_rho_equivalent" schedule \
  $small --optimize --family pl --knots 4 --refine -o "$work/refine.tab"
run schedule-batch "batch_candidates batch_final_risks output_final_risk" schedule $small --optimize --family output \
  --knots 4 --tune-batch -o "$work/batch.tab"
run rates "" rates $small --gammas 0.05:0.1:2 --families output; covered[rates]=1
rfs="--set rf.p=60 --set rf.n=40 --set rf.d=8 --set rf.test_size=20 --set rf.records=4 --seed 3"
run rf "" rf $rfs --runs 2; covered[rf]=1
mkdir -p "$work/p1"
run rf-experiment "" rf-experiment P1 --set rf.d=8 --set rf.n=30 --set rf.test_size=20 --seed 3 -o "$work/p1"
covered[rf-experiment]=1
run kl-bound "" kl bound
run kl-init "pass" kl init --set kl.init_runs=10 --set kl.width=16 --seed 4
run kl-run "" kl run --set kl.width=16 --set kl.epochs=4 --set kl.runs=2 --set kl.inits=2 --seed 4
run kl-vs "count width he_kl he_relu_kl_early epochs_early c" kl run --set kl.width=16 --set kl.epochs=4 \
  --set kl.runs=2 --set kl.inits=2 --set kl.network=relu --set kl.relu_runs=2 --seed 4 --vs width \
  --widths 8,16 --schemes he,ntk
run kl-epochs-relu "he_relu_kl ntk_kl" kl run --set kl.width=16 --set kl.epochs=4 --set kl.runs=2 \
  --set kl.inits=2 --set kl.network=relu --set kl.relu_runs=2 --seed 4 --vs epochs --schemes he,ntk
run kl-vs-depth "depth he_kl ntk_kl" kl run --set kl.width=16 --set kl.epochs=4 --set kl.runs=2 \
  --set kl.inits=2 --seed 4 --vs depth --depths 2,3 --schemes he,ntk
covered[kl]=1
run nc "" nc --set nc.draws=4 --set nc.steps=10 --seed 2; covered[nc]=1
# nc --sweep on a tiny grid (the remedy sweep: curve names with '-' and '+'): each curve's keys
# under its name, the CSV's name column
count=$((count + 1))
if (cd "$work" && "$bin" nc --sweep remedy --ps 10,20 --draws 4 --seed 2 -o "$work/ncs.csv" \
      --figure "$work/ncs.png" --json "$work/nc-sweep.json") >"$work/out" 2>"$work/err"; then
  curves=$(grep -v '^#' "$work/ncs.csv" | sed 1d | cut -d, -f2 | sort -u | sed 's/$/_/' | tr '\n' ' ')
  if [[ $(wc -w <<<"$curves") -ge 9 ]] && EXTRA_PREFIXES=$curves HELP_CMD=nc check_json \
       "$work/nc-sweep.json" nc-sweep sweep curves points p_first p_last draws rho delta \
       epsilon_per_step both+center_error_first both-imbalanced+center_error_last \
       per-sample+pca_flat_z both_max_z_exact seconds model_file model; then
    echo "ok   nc-sweep"
  else
    echo "FAIL nc-sweep (curves: $curves)"; fail=$((fail + 1))
  fi
else
  echo "FAIL nc-sweep: $(tail -n 3 "$work/err")"; fail=$((fail + 1))
fi
run sim-index "" sim-index --set si.d=8 --set si.p=8 --set si.n=100 --set si.test_size=50 --set si.runs=2 --seed 6
covered[sim-index]=1
nets="--set net.d=6 --set net.classes=3 --set net.n=60 --set net.width=8 --set net.steps=4 --set net.test_size=20 --seed 2"
mkdir -p "$work/net"
run net "final_test_accuracy sigma epsilon delta" net $nets -o "$work/net"
run net-vs "width test_accuracy test_loss rf_test_accuracy gd_test_accuracy" net $nets --vs width --grid 4 --n 40 -o "$work/net"
run net-vs-samples "samples test_accuracy rf_test_accuracy gd_test_accuracy" net $nets --vs samples --grid 20,40 --width 4 -o "$work/net"
covered[net]=1
printf 'a,b\n1,2\n3,5\n4,4\n0,1\n' > "$work/x.csv"; printf '1\n0\n2\n1\n' > "$work/y.csv"
run dataset "features labels positive n d scale_factor eigenvalues theta_norm risk0 residual_variance energy" dataset \
  "$work/x.csv" --labels "$work/y.csv" --positive 1
run dataset-2 "features labels test_features test_n test_labels test_mse" dataset \
  "$work/x.csv" --labels "$work/y.csv" --test-features "$work/x.csv" --test-labels "$work/y.csv"
covered[dataset]=1

# every command whose help lists --json has a case above
for c in $("$bin" --help | sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
  if "$bin" help "$c" 2>/dev/null | grep -q -- '--json'; then
    count=$((count + 1))
    if [[ -z ${covered[$c]:-} ]]; then echo "FAIL $c has --json but no case in json_keys.sh"; fail=$((fail + 1)); fi
  fi
done

# the JSON files a sweep writes in its points' folders (sim and validate chained after schedule:
# their models hold the designed table)
cat >"$work/sw.ini" <<EOF
[sweep]
model = $src/models/default.ini
commands = ode, schedule, sim, validate
schedule_families = output
[axes]
clip.c = 0.3, 1
[set]
data.d = 40
sim.runs = 4
EOF
count=$((count + 1))
if (cd "$work" && "$bin" sweep sw.ini -o "$work/sw") >"$work/out" 2>"$work/err"; then
  n=0
  for f in "$work"/sw/points/*/*.json; do
    n=$((n + 1))
    HELP_CMD=$(basename "$f" .json) check_json "$f" "sweep $(basename "$(dirname "$f")")/$(basename "$f")" ||
      fail=$((fail + 1))
  done
  [[ $n -ge 8 ]] && echo "ok   sweep: $n point JSON files" || { echo "FAIL sweep: only $n JSON files"; fail=$((fail + 1)); }
  # validate.json: validate --json's keys (its tables), those of before among them
  check_json "$work/sw/points/p00000/validate.json" "sweep validate.json" \
    max_abs_dev max_rel_dev max_z sde_max_abs_dev sde_max_rel_dev sde_max_z sim_pass sde_pass \
    pass epsilon delta epsilon_cks ode_final_risk runs model_file model || fail=$((fail + 1))
else
  echo "FAIL sweep: $(tail -n 3 "$work/err")"; fail=$((fail + 1))
fi

# every command with --json has the paragraph of its JSON keys (checked above against what
# each case writes)
for c in $("$bin" --help | sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
  "$bin" help "$c" | grep -q -- '--json' || continue
  count=$((count + 1))
  if "$bin" help "$c" | grep -q '^JSON keys'; then echo "ok   help $c lists its JSON keys"
  else echo "FAIL help $c has --json but no JSON keys paragraph"; fail=$((fail + 1)); fi
done

# the results reference: every table of test_fields --tables (the library's list), in the
# listing and alone; every name a table gives a JSON key (test_fields --names) listed as a
# field, or as what a field is written as (pass: json as sim_pass); an unknown table: exit 2
# naming the tables, nothing on standard output
count=$((count + 1))
"$bin" help results >"$work/results" 2>"$work/err"; rc=$?
missing=$(while read -r t; do grep -q "^$t: " "$work/results" || echo "$t"; done <"$work/tables")
alone=$(while read -r t; do "$bin" help results "$t" | grep -q "^$t: " || echo "$t"; done <"$work/tables")
if [[ $rc -eq 0 && -z $missing && -z $alone && $(wc -l <"$work/tables") -gt 50 ]]; then
  echo "ok   help results: $(wc -l <"$work/tables") tables, each also alone"
else
  echo "FAIL help results (exit $rc): tables missing: $missing; alone: $alone"; fail=$((fail + 1))
fi
count=$((count + 1))
{ sed -n 's/^  \([^ ]*\) .*/\1/p' "$work/results"
  sed -n 's/^  [^ ]* .*json as \([^ ,;]*\).*/\1/p' "$work/results"; } | sort -u >"$work/listed"
absent=$(sort -u "$work/names" | comm -23 - "$work/listed")
if [[ -z $absent ]]; then echo "ok   help results lists every JSON name ($(sort -u "$work/names" | wc -l))"
else echo "FAIL help results does not list: $absent"; fail=$((fail + 1)); fi
count=$((count + 1))
"$bin" help results no_such_table >"$work/out" 2>"$work/err"; rc=$?
if [[ $rc -eq 2 && ! -s $work/out ]] && grep -q "no result table 'no_such_table'" "$work/err" &&
   grep -q 'validate_side,' "$work/err"; then
  echo "ok   help results no_such_table: exit 2 with the tables"
else
  echo "FAIL help results no_such_table: exit $rc ($(head -c 300 "$work/err"))"; fail=$((fail + 1))
fi

# a model file whose name is Latin-1 (not UTF-8): valid JSON, the byte read as U+00E9
count=$((count + 1))
latin=$(printf 'mod\xe9l.ini')
cp "$src/models/default.ini" "$work/$latin"
if (cd "$work" && "$bin" ode "$latin" $small --json "$work/latin.json") >/dev/null 2>"$work/err" &&
   check_json "$work/latin.json" "latin-1 name" model_file &&
   python3 -c 'import json,sys; v=json.load(open(sys.argv[1],encoding="utf-8"))["model_file"]; sys.exit(0 if v.endswith("mod\u00e9l.ini") else "model_file = %r" % v)' "$work/latin.json" &&
   grep -q 'mod\\u00e9l.ini' "$work/latin.json"; then
  echo "ok   latin-1 model name: valid JSON, the byte as \\u00e9"
else
  echo "FAIL latin-1 model name ($(cat "$work/err"))"; fail=$((fail + 1))
fi

echo "$((count - fail)) passed, $fail failed"
[[ $fail -eq 0 && $count -gt 0 ]]
