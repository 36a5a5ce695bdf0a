#!/usr/bin/env bash
# Command-line checks of `hdpsgd net` (DP-GD on a two-layer ReLU network, the privacy-for-free
# paper's Fig. 1; docs/theory.md §7.4) on Gaussian inputs: the curve's CSV and JSON, identical
# bytes for any --threads, --vs width and --vs samples (JSON arrays, selection on validation,
# non-private GD above chance), bad input (exit 2 naming the key or option, no output).
# With "real" as second argument (the opt-in data test): one run and a small panel on
# Fashion-MNIST (skipped, status 77, when it is not installed).
set -u
bin=$1
mode=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # check NAME COMMAND...
json() { # json FILE PYTHON-EXPRESSION-ON-d: true or false
  python3 -c "import json, sys, math; d = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
}

if [ "$mode" = real ]; then
  fm=/usr/share/datasets/fashion-mnist
  if [ ! -r "$fm/train-images-idx3-ubyte.gz" ]; then
    echo "skipped: dataset-fashion-mnist is not installed"; exit 77
  fi
  src=$(cd "$(dirname "$0")/../.." && pwd)
  mkdir "$work/r"
  "$bin" net "$src/models/net-fashion.ini" --set net.n=2000 --set net.width=64 --set net.steps=40 \
    -o "$work/r" --json "$work/r/run.json" 2>"$work/err"
  check "fashion run exits 0" test $? -eq 0
  # 2000 images, epsilon = 1: well above chance (0.1) and below non-private accuracy
  check "fashion: DP-GD test accuracy in (0.4, 0.85)" json "$work/r/run.json" \
    "0.4 < d['final_test_accuracy'] < 0.85 and d['classes'] == 10 and d['d'] == 784"
  "$bin" net "$src/models/net-fashion.ini" --vs width --grid 16,64 --n 1000 -o "$work/r" \
    --json "$work/r/w.json" 2>"$work/err"
  check "fashion --vs width exits 0" test $? -eq 0
  check "fashion --vs width: GD above 0.7, DP-GD above chance" json "$work/r/w.json" \
    "min(d['gd_test_accuracy']) > 0.7 and min(d['test_accuracy']) > 0.3 and d['width'] == [16, 64]"
  mkdir "$work/r2"
  "$bin" net "$src/models/net-fashion.ini" --vs samples --grid 1000,55000 -o "$work/r2" 2>"$work/err"
  check "fashion: n above the 50 000 rows left after validation: exit 2" test $? -eq 2
  check "fashion: the message names --grid and the limit" grep -q -- "--grid.*at most 50000" "$work/err"
  check "fashion: nothing written" test -z "$(ls "$work/r2")"
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi

small=(--set net.d=20 --set net.classes=4 --set net.n=600 --set net.width=40 --set net.steps=30
       --set net.records=6 --set net.test_size=500)
"$bin" net "${small[@]}" --threads 1 -o "$work" --json "$work/a1.json" 2>"$work/err"
check "net exits 0" test $? -eq 0
mv "$work/net-curve.csv" "$work/a1.csv"
check "net wrote the figure" test -s "$work/net-curve.png"
"$bin" net "${small[@]}" --threads 2 -o "$work" 2>"$work/err"
check "net --threads 2 exits 0" test $? -eq 0
check "net: --threads 1 and 2 give identical CSV bytes" cmp -s "$work/a1.csv" "$work/net-curve.csv"
check "net CSV header" grep -qx 'step,time,train_loss,train_accuracy,val_loss,val_accuracy,test_loss,test_accuracy,clipped_fraction' "$work/a1.csv"
check "net: 7 rows (records + 1)" test "$(grep -v '^#' "$work/a1.csv" | grep -c .)" -eq 8
for key in final_test_accuracy final_test_loss sigma noise_std epsilon delta rho_z max_clipped_norm params width n clip; do
  check "net JSON has $key" grep -q "\"$key\":" "$work/a1.json"
done
check "net: sigma = sqrt(eta T) sqrt(8 ln(1/delta))/epsilon, delta = 1/n, clipped norm <= C" json "$work/a1.json" \
  "abs(d['sigma'] - math.sqrt(0.1 * 30) * math.sqrt(8 * math.log(600)) / 1) < 1e-9 * d['sigma'] and abs(d['delta'] - 1/600) < 1e-15 and d['max_clipped_norm'] <= 2 * (1 + 1e-12)"

"$bin" net "${small[@]}" --set net.epsilon=inf --set net.steps=200 --set net.lr=0.5 -o "$work" --json "$work/gd.json" 2>"$work/err"
check "plain GD learns the teacher (test accuracy > 0.8)" json "$work/gd.json" "d['final_test_accuracy'] > 0.8 and d['sigma'] == 0"

"$bin" net "${small[@]}" --vs width --grid 8,32 --n 300 -o "$work" --json "$work/w.json" 2>"$work/err"
check "net --vs width exits 0" test $? -eq 0
check "net --vs width: arrays width, test_accuracy, test_loss, rf_, gd_" json "$work/w.json" \
  "d['width'] == [8, 32] and len(d['test_accuracy']) == 2 and len(d['test_loss']) == 2 and len(d['rf_test_accuracy']) == 2 and len(d['gd_test_accuracy']) == 2 and d['runs'] == 2 * (4 + 8 + 1)"
check "net --vs width: GD above chance, every configuration counted" json "$work/w.json" \
  "min(d['gd_test_accuracy']) > 0.5 and d['configs'] == [4, 4] and d['rf_configs'] == [8, 8]"
check "net --vs width: CSV and figure" test -s "$work/net-width.csv" -a -s "$work/net-width.png"
"$bin" net "${small[@]}" --vs samples --grid 100,300 --width 16 -o "$work" --json "$work/s.json" 2>"$work/err"
check "net --vs samples exits 0" test $? -eq 0
check "net --vs samples: arrays samples, test_accuracy" json "$work/s.json" \
  "d['samples'] == [100, 300] and d['net_width'] == [16, 16] and len(d['test_accuracy']) == 2"
"$bin" plot "$work/net-samples.csv" -o "$work/replot.png" 2>"$work/err"
check "hdpsgd plot redraws net --vs" test -s "$work/replot.png"

bad() { # bad NAME FRAGMENT ARGS...: exit 2, message names FRAGMENT, no output file
  local name=$1 frag=$2; shift 2
  mkdir -p "$work/bad"; rm -f "$work/bad/"*
  "$bin" net "${small[@]}" "$@" -o "$work/bad" 2>"$work/err"
  local rc=$?
  check "bad $name: exit 2" test $rc -eq 2
  check "bad $name: names $frag" grep -q -- "$frag" "$work/err"
  check "bad $name: no output" test -z "$(ls "$work/bad")"
}
bad "width 0" "width" --set net.width=0
bad "loss" "loss" --set net.loss=hinge
bad "train" "train" --set net.train=first
bad "vs" "vs" --vs depth
bad "full without vs" "need --vs" --full
bad "grid" "grid" --vs width --grid 8,x
bad "n below 10" "n must be" --vs samples --grid 5,100
bad "file without labels" "data.labels" --set data.source=file --set "data.features=$work/a1.csv"
mkdir -p "$work/div"
"$bin" net "${small[@]}" --set net.lr=1e4 --set net.epsilon=inf -o "$work/div" --json "$work/div/j.json" 2>"$work/err"
check "diverging GD: exit 4 naming net.lr, nothing written" test $? -eq 4 -a -z "$(ls "$work/div")"
check "diverging GD: the message names net.lr" grep -q "net.lr" "$work/err"
"$bin" net "${small[@]}" -o "$work/nope" 2>"$work/err"
check "bad -o folder: exit 2" test $? -eq 2
check "bad -o folder: says it does not exist and how to make it" grep -q 'nope: no such folder (create the folder first' "$work/err"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
