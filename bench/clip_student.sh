#!/usr/bin/env bash
# Issue 31: Student-t label noise at Gaussian speed (the clipping factors fitted once,
# docs/theory.md §2.3), side by side in one run.
# Usage: bench/clip_student.sh BUILD_DIR [BEFORE_BUILD_DIR] [--no-design]
#   BEFORE_BUILD_DIR: a build from before the fit, for its quadrature risk and time
#   (its designs are not run: one took more than 27 minutes).
# Prints, for the default model and for d = 1000, n = 20 000, alpha = 1, c = 0.5, epsilon = 2:
# the ODE's solve time (best of 5) with Gaussian and Student-t (nu = 5) noise, the fit's time,
# the final risks (and the relative difference to the quadrature's), then
# `schedule --optimize --family pl --refine` with both noises: wall time and optimum.
# First the fit itself (bench_clip_fit: CPU and wall time, best of 7) for every fitted law on
# both models (and Student-t with BEFORE_BUILD's bench_clip_fit when it has one).
set -u
bin=$(cd "$1" && pwd)/hdpsgd; shift
before=""; if [[ $# -gt 0 && $1 != --no-design ]]; then before=$(cd "$1" && pwd)/hdpsgd; shift; fi
design=1; [[ ${1-} == --no-design ]] && design=0
py=/usr/bin/python3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
json() { $py -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2], '-'))" "$@"; }
big=(--set data.d=1000 --set data.n=20000 --set data.spectrum_alpha=1 --set clip.c=0.5
     --set privacy.epsilon=2 --set privacy.delta=1e-5)
student=(--set data.noise=student --set data.noise_df=5)
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), load $(cut -d' ' -f1 /proc/loadavg)"
best_ode() { # BIN ARGS...: best solve_seconds of 5, and the last JSON in $work/o.json
  local b=$1; shift; local best=1e9
  for rep in 1 2 3 4 5; do
    "$b" ode "$@" -o /dev/null --json "$work/o.json" 2>/dev/null || { echo fail; return; }
    best=$($py -c "print(min($best, $(json "$work/o.json" solve_seconds)))")
  done
  echo "$best"
}
empirical=$(cd "$(dirname "$0")/../models" && pwd)/empirical-noise.txt
for model in default big; do
  m=(); [[ $model == big ]] && m=("${big[@]}")
  kv=(); for ((i = 1; i < ${#m[@]}; i += 2)); do kv+=("${m[$i]}"); done # the --set values
  for law in student laplace uniform empirical; do
    echo "fit $model $law: $("$(dirname "$bin")/bench_clip_fit" "${kv[@]}" data.noise=$law \
      data.noise_file="$empirical")"
  done
  if [[ -n $before && -x $(dirname "$before")/bench_clip_fit ]]; then
    echo "fit $model student before: $("$(dirname "$before")/bench_clip_fit" "${kv[@]}" data.noise=student)"
  fi
done
for model in default big; do
  m=(); [[ $model == big ]] && m=("${big[@]}")
  tg=$(best_ode "$bin" "${m[@]}"); rg=$(json "$work/o.json" final_risk)
  ts=$(best_ode "$bin" "${m[@]}" "${student[@]}"); rs=$(json "$work/o.json" final_risk)
  fit=$(json "$work/o.json" clip_fit_seconds)
  echo "ode $model: gaussian ${tg}s risk $rg; student ${ts}s (x$($py -c "print(round($ts/$tg,2))")) risk $rs; fit ${fit}s"
  if [[ -n $before ]]; then
    "$before" ode "${m[@]}" "${student[@]}" -o /dev/null --json "$work/b.json" 2>/dev/null
    rb=$(json "$work/b.json" final_risk)
    echo "ode $model before: student $(json "$work/b.json" solve_seconds)s risk $rb; relative difference $($py -c "print('%.2g' % abs($rs/$rb-1))")"
  fi
  ((design)) || continue
  for noise in gaussian student; do
    n=(); [[ $noise == student ]] && n=("${student[@]}")
    t0=$(date +%s.%N)
    "$bin" schedule "${m[@]}" "${n[@]}" --optimize --family pl --refine -o "$work/s.csv" \
      --json "$work/s.json" >/dev/null 2>&1
    t1=$(date +%s.%N)
    opt=$(json "$work/s.json" pl_final_risk)
    echo "design $model $noise: $($py -c "print(round($t1-$t0,2))")s wall, pl optimum $opt"
    if [[ -n $before && $noise == student ]]; then # the optimum re-solved by the quadrature
      "$before" ode "${m[@]}" "${n[@]}" --set schedule.kind=table --set schedule.file="$work/s.csv" \
        -o /dev/null --json "$work/b.json" 2>/dev/null
      rb=$(json "$work/b.json" final_risk)
      echo "design $model student optimum by the quadrature (before): $rb, relative difference $($py -c "print('%.2g' % abs($opt/$rb-1))")"
    fi
  done
done
