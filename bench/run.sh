#!/usr/bin/env bash
# Benchmarks of issue 7, side by side with what users would otherwise write.
# Usage: bench/run.sh BUILD_DIR [--full]   (BUILD_DIR: a Release build of hdpsgd)
# Needs python3-numpy and python3-scipy for the baselines (skipped without them) and
# GNU time (package time) for peak memory. Prints one line per measurement; the
# numbers in bench/RESULTS.md come from this script.
set -u
build=$(cd "$1" && pwd); shift
full=0; [[ ${1-} == --full ]] && full=1
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/hdpsgd
py=/usr/bin/python3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
json() { $py -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$@"; }
have_np=0; $py -c 'import numpy, scipy' 2>/dev/null && have_np=1
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"

echo "## ODE: solve time against bins (power law alpha = 0.5, gamma = 0.01, rtol 1e-8)"
sizes="1 64 1000 10000 100000"; ((full)) && sizes="$sizes 1000000"
for m in $sizes; do
  if [[ $m == 1 ]]; then set_spec=(--set data.spectrum=isotropic --set data.d=1000); else set_spec=(--set data.d=$m); fi
  best=1e9
  for rep in 1 2 3; do
    "$bin" ode "${set_spec[@]}" --set data.gamma=0.01 -o /dev/null --json "$work/o.json" 2>/dev/null
    s=$(json "$work/o.json" solve_seconds); best=$($py -c "print(min($best,$s))")
  done
  echo "ode bins=$m solve_seconds=$best steps=$(json "$work/o.json" steps) ns_per_bin_step=$($py -c "print(round(1e9*$best/($m+2)/$(json "$work/o.json" steps),1))")"
done

if ((have_np)); then
  echo "## ODE: hdpsgd vs SciPy LSODA per solve (same model, rtol 1e-8, atol 1e-12)"
  for m in 1 64; do
    if [[ $m == 1 ]]; then set_spec=(--set data.spectrum=isotropic --set data.d=1000); else set_spec=(--set data.d=$m); fi
    best=1e9
    for rep in 1 2 3 4 5; do
      "$bin" ode "${set_spec[@]}" --set data.gamma=0.01 -o /dev/null --json "$work/o.json" 2>/dev/null
      s=$(json "$work/o.json" solve_seconds); best=$($py -c "print(min($best,$s))")
    done
    $py "$here/ode_scipy.py" $m 0.01 1e-8 1e-12 5 > "$work/s.json"
    sp=$(json "$work/s.json" seconds)
    echo "ode-vs-lsoda bins=$m hdpsgd=$best lsoda=$sp speedup=$($py -c "print(round($sp/$best,1))") risk_hdpsgd=$(json "$work/o.json" risk_before_final_noise) risk_lsoda=$(json "$work/s.json" final_risk_before_noise)"
  done
fi

echo "## Monte Carlo DP-SGD at d = 1000, gamma = 0.01 (n = 1e5)"
"$bin" sim --set data.d=1000 --set data.gamma=0.01 --runs 2 --threads 1 -o /dev/null --json "$work/m.json" 2>/dev/null
per_run=$($py -c "print($(json "$work/m.json" seconds)/2)")
"$build/bench_gauss" 200000000 > "$work/g.json"
echo "sim per_run_seconds=$per_run gaussians_2nd_seconds=$(json "$work/g.json" seconds) ratio=$($py -c "print(round($per_run/$(json "$work/g.json" seconds),2))") ns_per_gaussian=$(json "$work/g.json" ns_per_draw)"
if ((have_np)); then
  $py "$here/sim_numpy.py" 1000 0.01 20000 > "$work/n.json"
  np_run=$(json "$work/n.json" seconds_per_run)
  echo "sim-vs-numpy numpy_per_run_seconds=$np_run hdpsgd_per_run_seconds=$per_run speedup=$($py -c "print(round($np_run/$per_run,1))")"
fi
t1=$( { /usr/bin/time -f %e "$bin" sim --set data.d=1000 --set data.gamma=0.01 --runs 4 --threads 1 -o /dev/null; } 2>&1 | tail -n1)
t2=$( { /usr/bin/time -f %e "$bin" sim --set data.d=1000 --set data.gamma=0.01 --runs 4 --threads 2 -o /dev/null; } 2>&1 | tail -n1)
echo "sim-threads runs=4 one_thread=$t1 two_threads=$t2 efficiency=$($py -c "print(round($t1/(2*$t2),3))")"
for g in 0.1 0.01 0.001; do
  rss=$( { /usr/bin/time -f %M "$bin" sim --set data.d=1000 --set data.gamma=$g --runs 2 --threads 1 -o /dev/null; } 2>&1 | tail -n1)
  echo "sim-memory d=1000 gamma=$g n=$($py -c "print(round(1000/$g))") peak_rss_kib=$rss"
done
