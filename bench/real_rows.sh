#!/usr/bin/env bash
# The real-row Monte Carlo of issue 32 against the same DP-SGD in NumPy and PyTorch, vectorised
# over the runs (bench/real_rows.py). Usage: bench/real_rows.sh BUILD_DIR [REPS]
# Needs python3-numpy, python3-sklearn (digits) and dataset-fashion-mnist; python3-torch
# (Debian's PyTorch) for the PyTorch side, skipped without it: `scripts/install-deps.sh
# --with-bench` installs them all (opt-in; CI does not).
# Prints, per configuration, the preparation check, a markdown table (CPU and wall microseconds
# per run-step, the final risk, z-scores against hdpsgd) and a JSON line; the table in
# docs/performance.md comes from this script. CPU times, best of REPS (default 3) and their
# median and range: the machine may be shared, and the loaded wall times are printed beside them. Every peer on one thread:
# NumPy's BLAS (OPENBLAS_NUM_THREADS=1), PyTorch (torch.set_num_threads(1)) and the hdpsgd
# column the ratios use (--threads 1); each timed loop after an untimed warm-up.
set -u
export OPENBLAS_NUM_THREADS=1
build=$(cd "$1" && pwd)
reps=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
torch=; $py -c 'import torch' 2>/dev/null || { torch=--no-torch; echo "# no PyTorch (python3-torch): NumPy only"; }
run() { $py "$here/real_rows.py" "$build/hdpsgd" --reps "$reps" --float32 $torch --workdir "$work" "$@"; echo; }
run --data fashion --target planted --runs 40
run --data fashion --target planted --runs 40 --reps 1 --sweep-runs 200,1000
run --data fashion --target labels --runs 40 --hdpsgd-runs 1024  # its load (least squares, clipping bias) is 6.5 s of CPU: more runs so that its noise does not swamp the subtraction
run --data digits --target planted --runs 40
run --data digits --target labels --runs 40
run --data digits --target planted --runs 4000 --hdpsgd-runs 8000
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
