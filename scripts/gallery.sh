#!/usr/bin/env bash
# gallery.sh — every kind of figure hdpsgd draws, with the command that made it.
#
#   scripts/gallery.sh BIN                 full size: the images of docs/gallery/, the README's
#                                          docs/validate-default.png and docs/gallery.md
#   scripts/gallery.sh --quick BIN [DIR]   reduced runs into DIR (default: a temporary folder,
#                                          removed): the test cli_gallery
#
# Each command runs in a scratch folder (its CSV and data files stay there); the figure is
# checked (made, non-empty) and, at full size, copied into docs/. Exit status 1 when some
# figure is missing, 77 without gnuplot.
set -u
quick=0
if [[ ${1:-} == --quick ]]; then quick=1; shift; fi
bin=$(readlink -f "${1:?usage: scripts/gallery.sh [--quick] BIN [DIR]}")
src=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v gnuplot >/dev/null 2>&1 && [[ -z ${HDPSGD_GNUPLOT:-} ]]; then
  echo "gallery: gnuplot not installed: skipped"; exit 77
fi
work=$(mktemp -d)
keep=""
if [[ $quick -eq 1 ]]; then
  out=${2:-$work/out}
  [[ -n ${2:-} ]] && keep=1
else
  out=$src/docs/gallery
fi
mkdir -p "$out"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
md=$out/gallery.md
[[ $quick -eq 0 ]] && md=$src/docs/gallery.md
missing=0 made=0

# q QUICK FULL: the argument for this size
q() { if [[ $quick -eq 1 ]]; then echo "$1"; else echo "$2"; fi; }

cat > "$md" <<'EOF'
# Gallery

Every kind of figure hdpsgd draws, at its default size (one column of a two-column paper,
3.4 in wide, 8 pt text; PNG at 200 dpi), with the command that made it. The images are made by
`scripts/gallery.sh build/hdpsgd` (each command run in a scratch folder); the test
`cli_gallery` runs the same script at reduced sizes and checks that every figure is made.
`hdpsgd plot` draws the same figures again from the CSV files, with the figure options
(`--size W,H|column|wide`, `--font-size PT`, `--label TEXT`..., `--no-title`, `--key POS`,
`--xlabel TEXT`, `--ylabel TEXT`, `--logx`, `--logy`) and any of `.png`, `.pdf`, `.svg`, `.eps`, `.tex` — see the README.
EOF

# fig NAME TITLE FIGURE COMMAND...: run COMMAND (shown with hdpsgd for the binary), check
# FIGURE, copy it to OUT/NAME.png, add it to the gallery page
fig() {
  local name=$1 title=$2 figure=$3; shift 3
  local shown="hdpsgd"
  for a in "$@"; do
    a=${a#"$src/"} # paths of the repository as from its top
    if [[ $a == *' '* || $a == *'|'* ]]; then shown+=" '$a'"; else shown+=" $a"; fi
  done
  [[ -n ${pre:-} ]] && shown="$pre"$'\n'"$shown"
  local t0=$SECONDS
  "$bin" "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  if [[ ! -s $figure ]] || { [[ $rc -ne 0 && $rc -ne 1 ]]; }; then
    echo "gallery: MISSING $name (exit $rc): $shown"; sed 's/^/    /' "$name.err" | tail -3
    missing=$((missing + 1))
    return
  fi
  made=$((made + 1))
  echo "gallery: ok $name ($((SECONDS - t0)) s)"
  local dest=$out/$name.png
  [[ $name == validate-default && $quick -eq 0 ]] && dest=$src/docs/validate-default.png
  cp "$figure" "$dest"
  local rel=gallery/$name.png
  [[ $name == validate-default ]] && rel=validate-default.png
  [[ $quick -eq 1 ]] && rel=$name.png
  printf '\n## %s\n\n```sh\n%s\n```\n\n![%s](%s)\n' "$title" "$shown" "$title" "$rel" >> "$md"
}

# ---- the risk of DP-SGD: theory against simulation ----
vq=($(q "--runs 10 --set data.d=40" ""))
fig validate-default "validate: the ODE against the Monte Carlo and the SDE (the README's figure)" \
  validate.png validate "${vq[@]}" --figure validate.png
fig curves "plot: risk CSVs of ode, sim, sde in one figure, with the ODE's bounds" \
  curves.png plot validate.ode.csv validate.sim.csv validate.sde.csv --bounds -o curves.png
fig validate-powerlaw "validate on a power-law spectrum: the upper bound, far above the curves, hidden and named in the key (--bounds draws it)" \
  validate-powerlaw.png validate "$src/models/powerlaw.ini" $(q "--runs 10 --set data.d=40" "") --figure validate-powerlaw.png
s2=($(q "--set data.d=40 --set ode.points=21" ""))
"$bin" ode "${s2[@]}" -o c03.ode.csv >/dev/null 2>&1
"$bin" sim "${s2[@]}" --runs $(q 8 200) -o c03.sim.csv >/dev/null 2>&1
"$bin" ode "${s2[@]}" --set clip.c=3 -o c3.ode.csv >/dev/null 2>&1
"$bin" sim "${s2[@]}" --set clip.c=3 --runs $(q 8 200) -o c3.sim.csv >/dev/null 2>&1
pre="hdpsgd ode ${s2[*]} -o c03.ode.csv; hdpsgd sim ${s2[*]} --runs $(q 8 200) -o c03.sim.csv
hdpsgd ode ${s2[*]} --set clip.c=3 -o c3.ode.csv; hdpsgd sim ${s2[*]} --set clip.c=3 --runs $(q 8 200) -o c3.sim.csv"
pre=${pre//  / }
fig curves-families "plot: two runs (c = 0.3, c = 3), the ODE and the Monte Carlo of each in its colour" \
  curves-families.png plot c03.ode.csv c03.sim.csv c3.ode.csv c3.sim.csv -o curves-families.png
pre=""
small=($(q "--set data.spectrum=isotropic --set data.d=50 --set privacy.rho=1" "--set data.spectrum=isotropic --set privacy.rho=1"))
fig schedule "schedule --optimize: the optimised schedules and their predicted risk" \
  schedule.png schedule "${small[@]}" --set data.gamma=0.01 --optimize -o best.tab --figure schedule.png
fig schedule-table "plot: the schedule table that schedule --optimize -o writes" \
  schedule-table.png plot best.tab -o schedule-table.png
fig rates "rates: the optimised final risk against γ, with the theorem's rates" \
  rates.png rates "${small[@]}" --gammas "$(q 0.005:0.05:3 0.001:0.1:6)" --families output,linear-noise,inverse-time \
  --figure rates.png
cat > sweep.ini <<EOF
[sweep]
commands = ode
[axes]
clip.c = $(q "0.3, 1, 3" "0.3:3:6:log")
privacy.rho = 0.25, 0.5, 1
[set]
data.d = $(q 30 200)
EOF
"$bin" sweep sweep.ini -o sweep >/dev/null 2>&1
pre="# sweep.ini: [sweep] commands = ode; [axes] clip.c = $(sed -n 's/^clip.c = //p' sweep.ini); privacy.rho = 0.25, 0.5, 1; [set] data.d = $(sed -n 's/^data.d = //p' sweep.ini)
hdpsgd sweep sweep.ini -o sweep"
fig sweep "plot: a sweep's results, one curve per value of another axis" \
  sweep.png plot sweep/results.csv --x clip.c --by privacy.rho --y ode_final_risk --logx \
  --key 'top left' -o sweep.png
pre=""
cat > sweep-mc.ini <<EOF
[sweep]
commands = ode, sim
[axes]
clip.c = $(q "0.3, 1, 3" "0.3:3:6:log")
privacy.rho = 0.5, 1
[set]
data.d = $(q 30 200)
sim.runs = $(q 8 100)
EOF
"$bin" sweep sweep-mc.ini -o sweep-mc >/dev/null 2>&1
pre="# sweep-mc.ini: [sweep] commands = ode, sim; [axes] clip.c = $(sed -n 's/^clip.c = //p' sweep-mc.ini); privacy.rho = 0.5, 1; [set] data.d = $(sed -n 's/^data.d = //p' sweep-mc.ini); sim.runs = $(sed -n 's/^sim.runs = //p' sweep-mc.ini)
hdpsgd sweep sweep-mc.ini -o sweep-mc"
fig sweep-mc "plot --y ode_final_risk,sim_final_risk: the ODE (dashed) and the Monte Carlo (solid, ± one standard error from sim_final_stderr) of each point, a colour per ρ" \
  sweep-mc.png plot sweep-mc/results.csv --x clip.c --y ode_final_risk,sim_final_risk --logx -o sweep-mc.png
pre="# sweep.ini as above
hdpsgd sweep sweep.ini -o sweep"
fig sweep-heat "plot --heat: a sweep's results over two axes" \
  sweep-heat.png plot sweep/results.csv --heat --x clip.c --by privacy.rho --y ode_final_risk \
  -o sweep-heat.png
pre=""

# ---- the model families of the papers ----
rfq=($(q "--set rf.d=4 --set rf.n=40 --set rf.p=80 --set rf.test_size=30" ""))
rfrun=($(q "--set rf.d=4 --set rf.n=40 --set rf.p=60 --set rf.test_size=30 --runs 2" ""))
"$bin" rf "${rfrun[@]}" -o rf.csv >/dev/null 2>&1
pre="hdpsgd rf ${rfrun[*]} -o rf.csv"
pre=${pre/rf  -o/rf -o}
fig rf "plot: a run of DP-GD on random features against its OU limit (rf)" \
  rf.png plot rf.csv -o rf.png
pre=""
mkdir -p rfx
fig rf-p1 "rf-experiment P1: test loss against the number of random features" \
  rfx/rf-p1.png rf-experiment P1 "$src/models/rf-p1.ini" "${rfq[@]}" -o rfx
fig rf-p4 "rf-experiment P4: test loss over the clipping constant and the training time" \
  rfx/rf-p4.png rf-experiment P4 "$src/models/rf-p4.ini" "${rfq[@]}" -o rfx
klq=($(q "--set kl.width=16 --set kl.depth=2 --set kl.d=4 --set kl.n=10 --set kl.epochs=6 --set kl.inits=2 --set kl.runs=16" ""))
fig kl-bound "kl bound: B and the KL bound against depth and width (two columns)" \
  kl-bound.png kl bound --figure kl-bound.png
fig kl-epochs "kl run: the KL privacy of noisy GD against epochs" \
  kl-epochs.png kl run "${klq[@]}" --set kl.loss=squared --set kl.eta=$(q 0.01 0.003) --figure kl-epochs.png
fig kl-epochs-relu "kl run, kl.network = relu: the real and the linearised network against epochs" \
  kl-epochs-relu.png kl run "${klq[@]}" --set kl.network=relu --set kl.eta=0.01 \
  --set kl.depth=$(q 3 10) --schemes he,lecun,xavier --figure kl-epochs-relu.png
fig kl-depth "kl run --vs depth: the KL privacy against depth (two columns)" \
  kl-depth.png kl run "${klq[@]}" --vs depth --depths "$(q 2,3 2:8)" --figure kl-depth.png
fig nc-perturb "nc --sweep perturb: misclassification error against the feature dimension" \
  nc-perturb.png nc --sweep perturb $(q "--ps 10,100 --draws 20" "") -o nc-perturb.csv --figure nc-perturb.png
fig nc-frame "nc --sweep frame: K classes of a larger K0-simplex frame (Theorem 4)" \
  nc-frame.png nc --sweep frame $(q "--ps 50,100 --draws 20" "--draws 2000") -o nc-frame.csv --figure nc-frame.png
fig nc-projection "nc --sweep projection: projection on e_1 + Δ against per-sample noise (Theorem 5)" \
  nc-projection.png nc --sweep projection --set nc.K=2 --set nc.n=30 --set nc.beta=0.3 --set nc.G=1.5 \
  $(q "--ps 10,100 --draws 20" "--draws 4000") -o nc-projection.csv --figure nc-projection.png
siq=($(q "--set si.d=8 --set si.p=8 --set si.n=200 --set si.test_size=100 --set si.runs=4" ""))
fig si-eps "sim-index --experiment eps: test risk against the stage-2 ε" \
  si-eps.png sim-index --experiment eps "${siq[@]}" -o si-eps.csv --figure si-eps.png
fig si-n "sim-index --experiment n: test risk and alignment against n" \
  si-n.png sim-index --experiment n "${siq[@]}" -o si-n.csv --figure si-n.png
fig si-align "sim-index --experiment align: histograms of the neuron alignments" \
  si-align.png sim-index --experiment align "${siq[@]}" -o si-align.csv --figure si-align.png

# the two-layer network: Fashion-MNIST at full size (dataset-fashion-mnist; the panels take tens
# of minutes on 2 cores), Gaussian inputs in the quick run
netm=($(q "--set net.d=10 --set net.classes=3 --set net.n=300 --set net.width=16 --set net.steps=20 --set net.records=4 --set net.test_size=200" "$src/models/net-fashion.ini"))
mkdir -p netx
fig net-curve "net: test loss of DP-GD on a two-layer ReLU network against time (Fashion-MNIST)" \
  netx/net-curve.png net "${netm[@]}" -o netx
fig net-width "net --vs width: test accuracy against the width, DP-GD, random features, GD (Fashion-MNIST)" \
  netx/net-width.png net "${netm[@]}" --vs width $(q "--grid 4,8 --n 200" "") -o netx
fig net-samples "net --vs samples: test accuracy against n at width 256 (Fashion-MNIST)" \
  netx/net-samples.png net "${netm[@]}" --vs samples $(q "--grid 100,200 --width 8" "") -o netx

# the studies' figures: made by their scripts (tens of minutes each), not by this one; listed
if [[ $quick -eq 0 ]]; then
  cat >> "$md" <<'EOF'

## Studies (made by their own scripts, not by gallery.sh)

The designed one-pass scheme against tuned Poisson DP-SGD (docs/study-dpsgd.md), made by
`scripts/study_dpsgd.py build/hdpsgd docs/gallery` (tens of minutes on 2 cores):

![the synthetic model: final excess risk against epsilon](gallery/study-dpsgd.png)

![scikit-learn's digits, even against odd: held-out MSE against epsilon](gallery/study-dpsgd-digits.png)

![the epoch profile: the tuned Poisson risk against E, relative to the sweep's winner](gallery/study-dpsgd-epochs.png)
EOF
fi

echo "gallery: $made figures made, $missing missing -> $out"
[[ $missing -eq 0 ]]
